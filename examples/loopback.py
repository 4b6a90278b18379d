#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A loopback test with txscale's Python package: a receive session on
127.0.0.1, a send session of N datagrams to it, exact loss from the
receiver's count. Exit 0 when every datagram arrived once.

    python3 examples/loopback.py [--packets 5000] [--rate 20kpps] [--port 0]
"""
import argparse
import socket
import sys

import txscale


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=5000)
    ap.add_argument("--rate", default="20kpps", help="datagrams/s, e.g. 20kpps")
    ap.add_argument("--port", type=int, default=0, help="UDP port (0: a free one)")
    a = ap.parse_args()
    port = a.port
    if not port:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]

    with txscale.Session("recv", bind="127.0.0.1", port=port, time=30, expect=a.packets, idle="2s") as rx:
        rx.start()  # bound already: the sender may start now
        sent = txscale.run("send", dest="127.0.0.1", port=port, dev="udp", packets=a.packets, bitrate=a.rate)
        got = rx.wait()
    print("txscale %s: sent %d, received %d, lost %d, duplicates %d, p50 latency %s ns"
          % (txscale.__version__, sent["packets"], got["received"], got["lost"], got["duplicates"],
             got["latency_ns"].get("p50")))
    ok = sent["packets"] == a.packets and got["unique"] == a.packets and got["lost"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
