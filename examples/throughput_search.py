#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A throughput search with txscale's Python package: the highest rate at
which a receive session on 127.0.0.1 sees every datagram, found by
bisection between --lo and --hi (datagrams/s), one short trial per step.

    python3 examples/throughput_search.py [--lo 1000] [--hi 400000] [--trial 0.3] [--steps 8]

Prints each trial and the result as one JSON line; exit 0 when a rate
without loss was found (1 when even --lo lost datagrams).
"""
import argparse
import json
import socket
import sys

import txscale


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def trial(pps, seconds, length):
    """One trial at pps: (sent, received unique, lost)."""
    port = free_port()
    n = max(1, int(pps * seconds))
    with txscale.Session("recv", bind="127.0.0.1", port=port, time=seconds + 10, expect=n, idle="1s") as rx:
        rx.start()
        sent = txscale.run("send", dest="127.0.0.1", port=port, dev="udp", packets=n, bitrate="%dpps" % pps,
                           length=length)
        got = rx.wait()
    return sent["packets"], got["unique"], got["lost"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lo", type=int, default=1000, help="datagrams/s known (or hoped) to pass")
    ap.add_argument("--hi", type=int, default=400000, help="datagrams/s upper bound")
    ap.add_argument("--trial", type=float, default=0.3, help="seconds per trial")
    ap.add_argument("--steps", type=int, default=8, help="bisection steps")
    ap.add_argument("--length", type=int, default=64, help="UDP payload bytes")
    a = ap.parse_args()

    best = None
    lo, hi = a.lo, a.hi
    sent, uniq, lost = trial(lo, a.trial, a.length)
    print(json.dumps({"pps": lo, "sent": sent, "received": uniq, "lost": lost}))
    if lost or uniq != sent:
        print(json.dumps({"result": None, "reason": "loss at --lo"}))
        return 1
    best = lo
    for _ in range(a.steps):
        mid = (lo + hi) // 2
        if mid <= lo:
            break
        sent, uniq, lost = trial(mid, a.trial, a.length)
        passed = lost == 0 and uniq == sent
        print(json.dumps({"pps": mid, "sent": sent, "received": uniq, "lost": lost, "pass": passed}))
        if passed:
            lo = best = mid
        else:
            hi = mid
    print(json.dumps({"result": best, "unit": "pps", "bracket": [lo, hi], "txscale": txscale.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
