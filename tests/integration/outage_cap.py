#!/usr/bin/env python3
"""Outages and loss bursts read from a capture, the cross-check for recv.

Input (stdin): tshark -T fields -e frame.time_epoch -e udp.payload lines of
txscale datagrams (full payload header: magic, flow, seq at bytes 8..15).
Per flow, in capture order:
  gaps    silences between consecutive frames longer than --min-ms after which
          the sequence jumped ahead (missing = the jump - 1)
  bursts  runs of sequence numbers never captured between the lowest and
          highest seen (from 0 when --from-zero), per length class
          (1..8 one each, then 9-16, 17-32, ...) and, with --expect N, the
          tail up to N - 1
Output: one JSON object {"gaps":[{"flow","start","end","ms","missing"}...],
"bursts":{"min-max":count}, "burst_count", "burst_lost", "frames", "flows"}.
"""
import argparse
import json
import sys


def cls(n):
    if n <= 8:
        return f"{n}-{n}"
    e = (n - 1).bit_length()
    return f"{(1 << (e - 1)) + 1}-{1 << e}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-ms", type=float, default=1.0)
    ap.add_argument("--from-zero", action="store_true")
    ap.add_argument("--expect", type=int, default=0, help="datagrams per flow the sender sent")
    a = ap.parse_args()
    flows = {}
    frames = 0
    for line in sys.stdin:
        parts = line.split()
        if len(parts) < 2:
            continue
        t = float(parts[0])
        p = bytes.fromhex(parts[1].replace(":", ""))
        if len(p) < 24 or int.from_bytes(p[0:4], "big") != 0x54585343:
            continue
        flow = int.from_bytes(p[4:8], "big")
        seq = int.from_bytes(p[8:16], "big")
        flows.setdefault(flow, []).append((t, seq))
        frames += 1
    gaps, bursts, nb, lost = [], {}, 0, 0
    for flow, fr in flows.items():
        hi = -1
        for (t0, s0), (t1, s1) in zip(fr, fr[1:]):
            hi = max(hi, s0)
            if (t1 - t0) * 1000 > a.min_ms and s1 > hi + 1:
                gaps.append({"flow": flow, "start": t0, "end": t1, "ms": (t1 - t0) * 1000, "missing": s1 - hi - 1})
        seen = sorted(set(s for _, s in fr))
        prev = -1 if a.from_zero else seen[0] - 1
        holes = []
        for s in seen:
            if s > prev + 1:
                holes.append(s - prev - 1)
            prev = s
        if a.expect and a.expect - 1 > prev:
            holes.append(a.expect - 1 - prev)
        for h in holes:
            bursts[cls(h)] = bursts.get(cls(h), 0) + 1
            nb += 1
            lost += h
    gaps.sort(key=lambda g: g["start"])
    print(json.dumps({"gaps": gaps, "bursts": bursts, "burst_count": nb, "burst_lost": lost, "frames": frames,
                      "flows": len(flows)}))


if __name__ == "__main__":
    main()
