#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of fuzz_rxseq (committed under
tests/fuzz/corpus/fuzz_rxseq/): the wild sequences and the
patterns around them. Record layout: see tests/fuzz/fuzz_rxseq.c.
Regenerate with:  python3 tests/fuzz/corpus_rxseq.py tests/fuzz/corpus/fuzz_rxseq"""
import os
import random
import struct
import sys

FULL, COMPACT, FULLMIN, NOHDR = 0, 1, 2, 3
NEXT, NEAR, RAW, SPECIAL, BIG, DUP, BACK, JUMP24 = range(8)
SPECIALS = [0, 1, 2, 63, 64, 4095, 4096, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000,
            1 << 30, (1 << 30) + 1, 1 << 62, (1 << 62) + 1, 1 << 63, (1 << 63) + 1,
            2**64 - 65, 2**64 - 4, 2**64 - 2, 2**64 - 1]
TS_FINE, TS_RAW, TS_FUTURE, TS_NONE = range(4)


def rec(kind=FULL, flow=0, smode=NEXT, arg=b"", ts=TS_FINE, tsarg=1, core=0, flow_arg=b""):
    op = kind | (flow << 2) | (smode << 5)
    tsel = ts | (tsarg << 2 & 0x7c) | (core << 7)
    out = bytes([op]) + flow_arg + arg + bytes([tsel])
    return out


def raw(seq, **kw):
    return rec(smode=RAW, arg=struct.pack(">Q", seq % 2**64), **kw)


def special(v, **kw):
    return rec(smode=SPECIAL, arg=bytes([SPECIALS.index(v)]), **kw)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {}
    # 2^64-1, 0, 1 -> lost 18446744073709551615 before
    seeds["wrap-max-0-1"] = bytes([0]) + special(2**64 - 1) + special(0) + special(1)
    # one datagram at 2^63 -> lost 9.2e18 before
    seeds["seq-2pow63"] = bytes([0]) + special(1 << 63)
    # 200 random datagrams with the magic, random flow ids, seqs, timestamps
    rnd = random.Random(13)
    s = bytes([0])
    for _ in range(200):
        kind = rnd.choice([FULL, COMPACT])
        s += rec(kind=kind, flow=6, flow_arg=struct.pack(">I", rnd.getrandbits(32)), smode=RAW,
                 arg=struct.pack(">Q", rnd.getrandbits(64)), ts=TS_RAW) + struct.pack(">Q", rnd.getrandbits(64))
    seeds["random-200"] = s
    # the same on one flow id
    s = bytes([4])
    for _ in range(200):
        s += rec(flow=rnd.randrange(6), smode=RAW, arg=struct.pack(">Q", rnd.getrandbits(64)), ts=TS_RAW,
                 core=rnd.randrange(2)) + struct.pack(">Q", rnd.getrandbits(64))
    seeds["random-200-one-flow-2cores"] = s
    # in order, then a loss, reorder, duplicates
    s = bytes([0]) + rec(smode=SPECIAL, arg=bytes([0]))
    s += b"".join(rec() for _ in range(50))
    s += rec(smode=NEAR, arg=bytes([5])) + rec(smode=NEAR, arg=bytes([256 - 3])) + rec(smode=DUP)
    s += b"".join(rec() for _ in range(20))
    seeds["loss-reorder-dup"] = s
    # a late joiner at 5e9 (resync), and a hostile run in a flow
    s = bytes([0]) + raw(5000000000) + b"".join(rec() for _ in range(30))
    s += b"".join(rec(flow=1) for _ in range(40))
    s += special(1 << 63, flow=1) + b"".join(rec(flow=1, smode=NEAR, arg=bytes([2])) for _ in range(8))
    seeds["late-join-hostile-run"] = s
    # an epoch through 2^64
    s = bytes([0]) + special(2**64 - 65) + b"".join(rec() for _ in range(80))
    seeds["epoch-through-2pow64"] = s
    # compact across 2^32, window 64, small max_jump
    s = bytes([3]) + rec(kind=COMPACT, smode=SPECIAL, arg=bytes([0]))
    s += b"".join(rec(kind=COMPACT, smode=BIG, arg=b"\x00\x10") for _ in range(20))
    s += b"".join(rec(kind=COMPACT, smode=JUMP24, arg=b"\x40") for _ in range(40))
    seeds["compact-big-steps"] = s
    # far back: a restarted sender
    s = bytes([0]) + b"".join(rec(smode=JUMP24, arg=b"\x20") for _ in range(40))
    s += rec(smode=BACK, arg=b"\x7f\xff\xff\xff") + b"".join(rec() for _ in range(10))
    seeds["restart-far-back"] = s
    # latency: future, far past, none, 1 ms bound
    s = bytes([8]) + rec(ts=TS_FUTURE, tsarg=3) + rec(ts=TS_NONE) + rec(ts=TS_RAW) + struct.pack(">Q", 1)
    s += rec(ts=TS_RAW) + struct.pack(">Q", 2**64 - 1) + b"".join(rec(tsarg=k) for k in range(31))
    seeds["latency-skew"] = s
    # unsequenced and bad magic, many flows (table overflow at 16)
    s = bytes([0]) + b"".join(rec(kind=NOHDR, flow=7, flow_arg=bytes([k]), tsarg=k & 1) for k in range(40))
    s += b"".join(rec(flow=7, flow_arg=bytes([k])) for k in range(40))
    seeds["overflow-nohdr"] = s
    # max_jump 2^61: epochs roll over at 2^62 sequences
    s = bytes([16]) + b"".join(rec(smode=SPECIAL, arg=bytes([SPECIALS.index(v)]))
                               for v in (0, 1 << 30, 1 << 62, (1 << 62) + 1, 1 << 63))
    s += b"".join(rec(smode=NEAR, arg=bytes([256 - 2])) for _ in range(3))
    seeds["epoch-rollover"] = s
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
