#!/usr/bin/env python3
"""Free loopback ports for the metrics tests, below the kernel's ephemeral
range (so that no client connection of another test takes one between this
pick and the bind): the first UDP, the rest TCP.

usage: metrics_ports.py N   -> N port numbers on one line
"""
import random
import socket
import sys

n = int(sys.argv[1])
lo = 20000
try:
    lo_eph = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except OSError:
    lo_eph = 32768
hi = max(lo + 1000, min(lo_eph, 32768))
rng = random.Random()
ports, held = [], []
while len(ports) < n:
    p = rng.randrange(lo, hi)
    if p in ports:
        continue
    kind = socket.SOCK_DGRAM if not ports else socket.SOCK_STREAM
    s = socket.socket(socket.AF_INET, kind)
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        s.close()
        continue
    held.append(s)
    ports.append(p)
print(*ports)
