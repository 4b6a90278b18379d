import socket, sys, time, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 25)
if sys.argv[1] == "gro":
    s.setsockopt(socket.IPPROTO_UDP, 104, 1)  # UDP_GRO
s.bind(("198.18.0.2", 5201))
s.settimeout(5)
n = 0; t0 = None; last = None
try:
    while True:
        data, anc, fl, addr = s.recvmsg(65536, 64)
        now = time.monotonic()
        if t0 is None: t0 = now
        last = now
        seg = len(data)
        for lvl, typ, d in anc:
            if lvl == socket.IPPROTO_UDP and typ == 104:
                seg = struct.unpack("i", d[:4])[0] if len(d) >= 4 else struct.unpack("H", d[:2])[0]
        n += (len(data) + seg - 1) // seg if seg else 1
        s.settimeout(1)
except socket.timeout:
    pass
print(sys.argv[1], "datagrams", n, "pps", int(n / (last - t0)) if last and last > t0 else 0)
