#!/usr/bin/env python3
"""Helper of tests/integration/replay_*.sh: make test captures, compare them.

  replay_tool.py make OUT.pcap N [kind]   kind: ok (default), trunc, pcapng, linktype, big,
                                          mixed (N UDP datagrams among other frames, 1 ms apart;
                                          writes OUT.pcap.expect.json: what --dev udp must send)
  replay_tool.py same IN.pcap OUT.pcap M  OUT holds M frames: IN's frames in order, looping, byte for byte
  replay_tool.py timing IN.pcap OUT.pcap SPEED   OUT's times follow IN's / SPEED (never ahead, median close)
  replay_tool.py recv 4|6 PORT OUT.json READY [IDLE_S [MAX_S]]   a UDP receiver (PORT 0: any): writes
                                          READY (its port) once bound, then every datagram (kernel arrival time, payload hex) to
                                          OUT.json once IDLE_S (1.5) pass without one, or MAX_S (30)
  replay_tool.py udpsame EXPECT.json 4|6 GOT.json M [SPEED]   GOT holds M datagrams: the capture's
                                          payloads of that family in file order, looping; with SPEED,
                                          the first pass arrives at the file's times / SPEED
"""
import json
import os
import random
import select
import socket
import struct
import sys
import time


def read(path):
    with open(path, 'rb') as f:
        d = f.read()
    magic = struct.unpack('<I', d[:4])[0]
    end = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    nano = struct.unpack(end + 'I', d[:4])[0] == 0xa1b23c4d
    off, out = 24, []
    while off + 16 <= len(d):
        s, frac, incl, _ = struct.unpack(end + 'IIII', d[off:off + 16])
        out.append((s + frac / (1e9 if nano else 1e6), d[off + 16:off + 16 + incl]))
        off += 16 + incl
    return out


def make(path, n, kind):
    rnd = random.Random(14)
    linktype = 101 if kind == 'linktype' else 1
    with open(path, 'wb') as f:
        if kind == 'pcapng':
            f.write(struct.pack('<IIIHHq', 0x0a0d0d0a, 28, 0x1a2b3c4d, 1, 0, -1) + struct.pack('<I', 28))
            return
        f.write(struct.pack('<IHHiIII', 0xa1b23c4d, 2, 4, 0, 0, 65535, linktype))
        t = 1700000000 * 10**9
        for i in range(n):
            size = rnd.choice([60, 64, 128, 594, 1000, 1514])
            if kind == 'big' and i == n // 2:
                size = 1600
            # locally administered MACs, ethertype 0x88b5 (local experimental):
            # no stack on the path acts on these frames
            frame = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5]) + struct.pack('>I', i) + \
                bytes(rnd.getrandbits(8) for _ in range(size - 18))
            orig = size + 10 if kind == 'trunc' and i == 3 else size
            f.write(struct.pack('<IIII', t // 10**9, t % 10**9, size, orig))
            f.write(frame)
            t += rnd.randint(100000, 3000000)  # 0.1 .. 3 ms


# ---- mixed captures: UDP datagrams among frames --dev udp must skip ---------

def ck(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('>%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def eth(etype, body, tags=()):
    h = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1])
    for tpid, tci in tags:
        h += struct.pack('>HH', tpid, tci)
    return h + struct.pack('>H', etype) + body


def ip4(proto, body, src='198.18.9.1', dst='198.18.9.2', frag=0x4000, opts=b''):
    ihl = (20 + len(opts)) // 4
    h = struct.pack('>BBHHHBBH4s4s', 0x40 | ihl, 0, 20 + len(opts) + len(body), 77, frag, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst)) + opts
    h = h[:10] + struct.pack('>H', ck(h)) + h[12:]
    return h + body


def ip6(nh, body, src='2001:2:9::1', dst='2001:2:9::2'):
    return struct.pack('>IHBB16s16s', 6 << 28, len(body), nh, 64, socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + body


def udp(payload, sport=4000, dport=4001, ulen=None):
    # a checksum the replay must not care about (captures with offload hold garbage there)
    return struct.pack('>HHHH', sport, dport, 8 + len(payload) if ulen is None else ulen, 0xdead) + payload


def make_mixed(path, n):
    rnd = random.Random(1414)
    sizes = [1, 18, 100, 512, 1472, 0, 3000, 64, 1200]
    frames = []  # (frame bytes, v4 outcome, v6 outcome): a payload (bytes) or a skip reason

    def dgram(i, v6):
        size = sizes[i % len(sizes)]
        p = (struct.pack('>I', i) + bytes(rnd.getrandbits(8) for _ in range(size)))[:size]
        return p
    extras = [
        lambda: (eth(0x0806, bytes(28)), 'not_ip', 'not_ip'),  # ARP
        lambda: (eth(0x0800, ip4(6, bytes(20) + b'tcp')), 'not_udp', 'not_udp'),
        lambda: (eth(0x0800, ip4(1, b'\x08\0\0\0\0\0\0\0ping')), 'not_udp', 'not_udp'),
        lambda: (eth(0x0800, ip4(17, udp(bytes(40))[:24], frag=0x2000)), 'fragment', 'fragment'),  # MF
        lambda: (eth(0x0800, ip4(17, bytes(16), frag=0x0003)), 'fragment', 'fragment'),  # offset 24
        lambda: (eth(0x86dd, ip6(44, struct.pack('>BBHI', 17, 0, 1, 5) + udp(b'frag6'))), 'fragment', 'fragment'),
        lambda: (eth(0x86dd, ip6(58, b'\x80\0\0\0echo')), 'not_udp', 'not_udp'),
        lambda: (eth(0x0800, ip4(17, udp(b'short', ulen=40))), 'malformed', 'malformed'),
        lambda: (eth(0x88b5, bytes(46)), 'not_ip', 'not_ip'),
    ]
    k = 0
    for i in range(n):
        if i % 4 == 3:
            frames.append(extras[k % len(extras)]())
            k += 1
        p = dgram(i, False)
        var = i % 5
        if var == 0:
            frames.append((eth(0x0800, ip4(17, udp(p))), p, 'other_family'))
        elif var == 1:  # 802.1Q, IPv4 options, other ports and addresses
            frames.append((eth(0x0800, ip4(17, udp(p, 53, 9), src='198.18.7.7', dst='198.18.8.8',
                                           opts=b'\x01\x01\x01\x00'), tags=((0x8100, 5),)), p, 'other_family'))
        elif var == 2:  # IPv6
            frames.append((eth(0x86dd, ip6(17, udp(p))), 'other_family', p))
        elif var == 3:  # QinQ IPv6 with a hop-by-hop header (PadN)
            frames.append((eth(0x86dd, ip6(0, bytes([17, 0, 1, 4, 0, 0, 0, 0]) + udp(p)),
                               tags=((0x88a8, 7), (0x8100, 8))), 'other_family', p))
        else:  # IPv4 with Ethernet padding after the datagram, no DF
            fr = eth(0x0800, ip4(17, udp(p), frag=0))
            frames.append((fr + bytes(max(0, 60 - len(fr))), p, 'other_family'))
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
        t = 1700000000 * 10**9
        times = []
        for fr, _, _ in frames:
            f.write(struct.pack('<IIII', t // 10**9, t % 10**9, len(fr), len(fr)))
            f.write(fr)
            times.append(t)
            t += 1000000  # 1 ms
    exp = {}
    for fam, col in (('4', 1), ('6', 2)):
        pay = [(times[i] - times[0]) / 1e9 for i, fr in enumerate(frames) if isinstance(fr[col], bytes)]
        exp[fam] = {'payloads': [fr[col].hex() for fr in frames if isinstance(fr[col], bytes)], 'times': pay,
                    'skipped': {}}
        for fr in frames:
            if not isinstance(fr[col], bytes):
                exp[fam]['skipped'][fr[col]] = exp[fam]['skipped'].get(fr[col], 0) + 1
    exp['frames'] = len(frames)
    with open(path + '.expect.json', 'w') as f:
        json.dump(exp, f)


def recv(fam, port, out, ready, idle, limit):
    s = socket.socket(socket.AF_INET if fam == '4' else socket.AF_INET6, socket.SOCK_DGRAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)  # SO_RCVBUFFORCE (root)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 20)
    s.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS: the kernel's arrival time
    s.bind(('0.0.0.0' if fam == '4' else '::', port))
    with open(ready + '.tmp', 'w') as f:
        f.write('%d\n' % s.getsockname()[1])
    os.rename(ready + '.tmp', ready)
    got, t0, last = [], time.monotonic(), None
    while time.monotonic() - t0 < limit:
        wait = idle if last is not None else limit
        r, _, _ = select.select([s], [], [], min(wait, 0.2))
        if not r:
            if last is not None and time.monotonic() - last >= idle:
                break
            continue
        data, anc, _, _ = s.recvmsg(70000, 64)
        ts = None
        for lvl, typ, val in anc:
            if lvl == socket.SOL_SOCKET and typ == 35:
                sec, nsec = struct.unpack('qq', val[:16])
                ts = sec + nsec / 1e9
        got.append([ts, data.hex()])
        last = time.monotonic()
    with open(out, 'w') as f:
        json.dump(got, f)


def udpsame(expect, fam, gotp, m, speed):
    exp = json.load(open(expect))[fam]
    got = json.load(open(gotp))
    want = exp['payloads']
    if len(got) != m:
        print('FAIL: %d datagrams received, want %d' % (len(got), m))
        return 1
    for i, (_, h) in enumerate(got):
        if h != want[i % len(want)]:
            print('FAIL: datagram %d differs from the capture\'s datagram %d (%d vs %d bytes)'
                  % (i, i % len(want), len(h) // 2, len(want[i % len(want)]) // 2))
            return 1
    print('%d datagrams identical to the capture\'s %d UDP payloads (in order, looping)' % (m, len(want)))
    if speed:
        # the first pass: each datagram's arrival (kernel time) against its
        # frame's time in the file / SPEED, both from the first datagram;
        # against the median (the first may itself be late, and the rest
        # then catch up): none ahead by more than 2 ms
        k = min(m, len(want))
        d = sorted((got[i][0] - got[0][0]) - (exp['times'][i] - exp['times'][0]) / speed for i in range(k))
        med = d[len(d) // 2]
        print('timing: %d datagrams, lateness vs the first: min %.0f us, median %.0f us, max %.0f us'
              % (k, d[0] * 1e6, med * 1e6, d[-1] * 1e6))
        if d[0] - med < -2e-3:
            print('FAIL: the datagrams do not follow the capture\'s timing')
            return 1
    return 0


def main():
    mode = sys.argv[1]
    if mode == 'make':
        kind = sys.argv[4] if len(sys.argv) > 4 else 'ok'
        if kind == 'mixed':
            make_mixed(sys.argv[2], int(sys.argv[3]))
        else:
            make(sys.argv[2], int(sys.argv[3]), kind)
        return 0
    if mode == 'recv':
        a = sys.argv[2:]
        recv(a[0], int(a[1]), a[2], a[3], float(a[4]) if len(a) > 4 else 1.5, float(a[5]) if len(a) > 5 else 30)
        return 0
    if mode == 'udpsame':
        a = sys.argv[2:]
        return udpsame(a[0], a[1], a[2], int(a[3]), float(a[4]) if len(a) > 4 else 0)
    a, b = read(sys.argv[2]), read(sys.argv[3])
    if mode == 'same':
        m = int(sys.argv[4])
        if len(b) != m:
            idx = [struct.unpack('>I', fr[14:18])[0] if len(fr) >= 18 else -1 for _, fr in b]
            gaps = [(i, x, y) for i, (x, y) in enumerate(zip(idx, idx[1:])) if (x + 1) % len(a) != y]
            print('FAIL: %d frames out, want %d (first %s, last %s, breaks at %s)'
                  % (len(b), m, idx[:1], idx[-1:], gaps[:5]))
            return 1
        for i, (_, fr) in enumerate(b):
            want = a[i % len(a)][1]
            if fr != want:
                print('FAIL: frame %d differs from the capture\'s frame %d (%d vs %d bytes)' % (i, i % len(a), len(fr), len(want)))
                return 1
        print('%d frames identical to the capture\'s (looping over %d)' % (m, len(a)))
        return 0
    if mode == 'timing':
        speed = float(sys.argv[4])
        n = len(a)
        span = a[-1][0] - a[0][0]
        period = (span + span / (n - 1)) / speed
        sched = [(i // n) * period + (a[i % n][0] - a[0][0]) / speed for i in range(len(b))]
        rel = [t - b[0][0] for t, _ in b]
        d = sorted(r - s for r, s in zip(rel, sched))
        med = d[len(d) // 2]
        print('timing: %d frames, lateness vs the first: min %.0f us, median %.0f us, max %.0f us'
              % (len(d), d[0] * 1e6, med * 1e6, d[-1] * 1e6))
        # The start is not in the capture, so lateness is measured against
        # the first frame, which may itself be late (a loaded machine: the
        # sender then catches up and every later frame looks early by as
        # much). Against the median frame instead: none ahead by more than
        # 2 ms (a replay off the file's timing is off by the capture's span).
        if d[0] - med < -2e-3:
            print('FAIL: the replay does not follow the capture\'s timing')
            return 1
        return 0
    print('unknown mode', mode)
    return 2


sys.exit(main())
