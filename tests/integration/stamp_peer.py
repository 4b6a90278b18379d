#!/usr/bin/python3
"""The independent STAMP peer of tests/integration/stamp.sh: scapy's codec
(scapy.contrib.stamp, Debian python3-scapy) on a plain UDP socket.

  stamp_peer.py sender HOST PORT --mode stateful|stateless [--ttl N]
      a session-sender against `txscale stamp reflect`: checks every echoed
      field, T1 <= T2 <= T3, the TTL, the SSID, the U flag of an unknown TLV,
      the Class of Service and Direct Measurement TLVs, symmetric lengths,
      the reflector's numbering (stateful: 0, 1, 2 per session; stateless:
      ours), and that runts get no answer. Prints one JSON line; exit 1 with
      the reason on the first check that fails.
  stamp_peer.py reflector BIND PORT --count N --timeout SEC
      a stateless session-reflector (RFC 8762 4.3) built with scapy's codec:
      answers each sender packet with one as long, its own T2/T3, then prints
      {"answered": N, "runts": N}.
"""
import argparse
import json
import select
import socket
import struct
import sys
import time

from scapy.config import conf
from scapy.layers.inet import UDP
from scapy.contrib.stamp import (ErrorEstimate, STAMPSessionReflectorTestUnauthenticated as Refl,
                                 STAMPSessionSenderTestUnauthenticated as Send, STAMPTestTLV)

NTP_OFFSET = 2208988800
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # asm-generic (x86, arm64)

# scapy 2.5.0's TLV list measures itself by pkt.parent, which dissection
# never sets (an AttributeError makes the whole packet Raw): the same length
# from the UDP header under it, which dissection does set
for _cls in (Send, Refl):
    _cls.fields_desc[-1].length_from = lambda pkt: (pkt.underlayer or pkt.parent).len - 8 - 44


def die(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def ntp_now():
    return time.time() + NTP_OFFSET


def raw_ts(pkt, name):
    """The 64-bit wire value of a timestamp field"""
    return pkt.getfieldval(name)


def ns_of_raw(raw):
    return ((raw >> 32) - NTP_OFFSET) * 1_000_000_000 + (((raw & 0xffffffff) * 1_000_000_000) >> 32)


def dissect_reply(data, port):
    u = UDP(bytes(UDP(sport=862, dport=port) / data))
    if Refl not in u:
        die("scapy did not dissect the reply as a STAMP reflector packet")
    return u[Refl]


def sender(args):
    fam = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.connect((args.host, args.port))
    if fam == socket.AF_INET:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, args.ttl)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0xb8)  # DSCP 46 (EF), ECN 0
        s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
    else:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, args.ttl)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, 0xb8)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVTCLASS, 1)
    myport = s.getsockname()[1]
    out = {"checked": 0}

    def exchange(pkt_bytes, expect=True):
        s.send(pkt_bytes)
        r, _, _ = select.select([s], [], [], 1.0 if expect else 0.5)
        if not r:
            if expect:
                die("no reply to a %d-byte packet" % len(pkt_bytes))
            return None, None
        data, anc, _, _ = s.recvmsg(65535, socket.CMSG_SPACE(4))
        tos = None
        for lvl, typ, val in anc:
            if (lvl, typ) in ((socket.IPPROTO_IP, socket.IP_TOS), (socket.IPPROTO_IPV6, socket.IPV6_TCLASS)):
                tos = val[0] if len(val) == 1 else struct.unpack("i", val[:4])[0]
        if not expect:
            die("a reply (%d bytes) to a packet that deserves none" % len(data))
        return data, tos

    seq0 = 1000
    for i in range(5):
        seq = seq0 + i
        ssid = 0x1234
        tlvs = [
            # Class of Service: DSCP1 = 10 (AF11) asked for the way back
            STAMPTestTLV(type=4, len=4, value=bytes([10 << 2, 0, 0, 0])),
            # Direct Measurement: S_TxC = i + 1
            STAMPTestTLV(type=5, len=12, value=struct.pack(">III", i + 1, 0, 0)),
            STAMPTestTLV(type=3, len=4, value=bytes(4)),   # Timestamp Information
            STAMPTestTLV(type=200, len=6, value=b"abcdef"),  # unknown to everyone
            STAMPTestTLV(type=1, len=10, value=bytes(10)),  # Extra Padding
        ]
        t1 = ntp_now()
        p = UDP(sport=myport, dport=862) / Send(seq=seq, ts=t1, err_estimate=ErrorEstimate(S=0, Z=0, scale=3, multiplier=7),
                                                ssid=ssid, tlv_objects=tlvs)
        sent = Send(bytes(p)[8:]) if False else p[Send]
        wire = bytes(p)[8:]
        data, tos = exchange(wire)
        if len(data) != len(wire):
            die("reply of %d bytes to %d: not symmetric" % (len(data), len(wire)))
        r = dissect_reply(data, myport)
        want_seq = i if args.mode == "stateful" else seq
        if r.seq != want_seq:
            die("reflector seq %d, want %d (%s)" % (r.seq, want_seq, args.mode))
        if r.seq_sender != seq:
            die("echoed sender seq %d, sent %d" % (r.seq_sender, seq))
        if raw_ts(r, "ts_sender") != raw_ts(sent, "ts"):
            die("echoed timestamp %x, sent %x" % (raw_ts(r, "ts_sender"), raw_ts(sent, "ts")))
        e = r.err_estimate_sender
        if (e.S, e.Z, e.scale, e.multiplier) != (0, 0, 3, 7):
            die("echoed error estimate %s" % ((e.S, e.Z, e.scale, e.multiplier),))
        if r.ssid != ssid:
            die("SSID %#x, sent %#x" % (r.ssid, ssid))
        if r.ttl_sender != args.ttl:
            die("reflected TTL %d, sent with %d" % (r.ttl_sender, args.ttl))
        if r.mbz1 != 0 or r.mbz2 != 0:
            die("MBZ fields not zero")
        t1n = ns_of_raw(raw_ts(sent, "ts"))
        t2n = ns_of_raw(raw_ts(r, "ts_rx"))
        t3n = ns_of_raw(raw_ts(r, "ts"))
        if not (t1n - 1000 <= t2n <= t3n):
            die("T1 %d, T2 %d, T3 %d: not in order" % (t1n, t2n, t3n))
        if r.err_estimate.multiplier == 0:
            die("the reflector's error estimate has multiplier 0 (RFC 4656 forbids it)")
        tl = r.tlv_objects
        if len(tl) != 5:
            die("%d TLVs back, sent 5" % len(tl))
        cos, dm, tsi, unk, pad = tl
        flags = [int(t.flags) for t in tl]
        if flags[:3] != [0, 0, 0] or flags[4] != 0:
            die("known TLVs came back with flags %s" % flags)
        if not (int(unk.flags) & 0x80) or unk.type != 200 or unk.value != b"abcdef":
            die("the unknown TLV came back as flags %#x type %d value %r: want U set, as sent" % (int(unk.flags), unk.type, unk.value))
        dscp1 = cos.value[0] >> 2
        dscp2 = ((cos.value[0] & 3) << 4) | (cos.value[1] >> 4)
        ecn = (cos.value[1] >> 2) & 3
        if (dscp1, dscp2, ecn) != (10, 46, 0):
            die("CoS TLV DSCP1 %d DSCP2 %d ECN %d: want 10, 46 (received), 0" % (dscp1, dscp2, ecn))
        if tos is not None and tos >> 2 != 10:
            die("the reply came with DSCP %d, the CoS TLV asked for 10" % (tos >> 2))
        stx, rrx, rtx = struct.unpack(">III", dm.value)
        want_r = (i + 1, i + 1) if args.mode == "stateful" else (0, 0)
        if stx != i + 1 or (rrx, rtx) != want_r:
            die("Direct Measurement %d/%d/%d, want %d/%d/%d" % (stx, rrx, rtx, i + 1, *want_r))
        if tsi.value[1] == 0 or tsi.value[3] == 0:
            die("Timestamp Information not filled: %r" % tsi.value)
        if pad.value != bytes(10):
            die("Extra Padding changed")
        out["checked"] += 1
        out["ttl"] = r.ttl_sender
        out["reply_dscp"] = None if tos is None else tos >> 2
    # a plain 44-byte packet and one with zero padding (TWAMP-light): answered, as long
    for n in (44, 128):
        p = UDP(sport=myport, dport=862) / Send(seq=seq0 + 10 + n, ts=ntp_now(), ssid=7)
        wire = bytes(p)[8:].ljust(n, b"\0")
        data, tos = exchange(wire)
        if tos is not None and tos >> 2 != 46:
            die("%d-byte packet: the reply came with DSCP %d, the request with 46" % (n, tos >> 2))
        if len(data) != n or data[44:] != bytes(n - 44):
            die("%d-byte packet: reply of %d bytes, padding %r" % (n, len(data), data[44:60]))
        r = dissect_reply(data, myport)
        if r.seq_sender != seq0 + 10 + n or r.ssid != 7:
            die("%d-byte packet: echoed seq %d SSID %d" % (n, r.seq_sender, r.ssid))
        out["checked"] += 1
    # runts: no answer, counted by the reflector
    for n in (0, 1, 20, 43):
        exchange(bytes(n), expect=False)
    out["runts_sent"] = 4
    # a TLV whose length runs past the datagram: answered, M flag set
    p = UDP(sport=myport, dport=862) / Send(seq=seq0 + 99, ts=ntp_now(), ssid=8)
    wire = bytes(p)[8:] + bytes([0, 1, 0, 200]) + bytes(8)
    data, _ = exchange(wire)
    if len(data) != len(wire) or not (data[44] & 0x40):
        die("a TLV too long for the datagram: reply flags %#x, want M (0x40)" % data[44])
    out["checked"] += 1
    print(json.dumps(out))


def reflector(args):
    fam = socket.AF_INET6 if ":" in args.bind else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((args.bind, args.port))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    if args.ready:
        open(args.ready, "w").write("ready\n")
    answered = runts = 0
    end = time.time() + args.timeout
    while answered < args.count and time.time() < end:
        r, _, _ = select.select([s], [], [], 0.2)
        if not r:
            continue
        data, anc, _, peer = s.recvmsg(65535, 64)
        t2 = None
        for lvl, typ, val in anc:
            if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", val[:16])
                t2 = sec + nsec / 1e9 + NTP_OFFSET
        if t2 is None:
            t2 = ntp_now()
        if len(data) < 44:
            runts += 1
            continue
        u = UDP(bytes(UDP(sport=peer[1], dport=862) / data))
        if Send not in u:
            runts += 1
            continue
        q = u[Send]
        rep = Refl(seq=q.seq, ts=ntp_now(), ssid=q.ssid, ts_rx=t2, seq_sender=q.seq,
                   err_estimate=ErrorEstimate(S=0, Z=0, scale=0, multiplier=1),
                   err_estimate_sender=q.err_estimate, ttl_sender=255)
        rep.setfieldval("ts_sender", q.getfieldval("ts"))
        wire = bytes(UDP(sport=862, dport=peer[1]) / rep)[8:]
        wire = wire.ljust(len(data), b"\0")[:max(len(data), 44)]
        s.sendto(wire, peer)
        answered += 1
    print(json.dumps({"answered": answered, "runts": runts}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("sender")
    a.add_argument("host")
    a.add_argument("port", type=int)
    a.add_argument("--mode", choices=["stateful", "stateless"], default="stateful")
    a.add_argument("--ttl", type=int, default=57)
    b = sub.add_parser("reflector")
    b.add_argument("bind")
    b.add_argument("port", type=int)
    b.add_argument("--count", type=int, default=1000)
    b.add_argument("--timeout", type=float, default=30)
    b.add_argument("--ready")
    args = ap.parse_args()
    sender(args) if args.cmd == "sender" else reflector(args)


if __name__ == "__main__":
    main()
