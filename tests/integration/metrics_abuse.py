#!/usr/bin/env python3
"""Abuse of a txscale --metrics endpoint while a run counts (metrics_abuse.sh).

usage: metrics_abuse.py PORT SECONDS
Over SECONDS (bounded): garbage bytes, a request line of 1 MB, a header
block of 1 MB, a POST with a 1 MB body, clients that send a request and
never read (held open to the end), a client that sends one byte a second,
and 100 scrapes in parallel, twice. Prints one JSON line: what each abuse
got back, the scrapes' status codes, and the datagram counts seen by the
scrapes in order (they must never go down). Exits 1 if the endpoint stops
answering a plain scrape.
"""
import json
import socket
import sys
import threading
import time
import urllib.request

port = int(sys.argv[1])
seconds = float(sys.argv[2])
host = "127.0.0.1"
out = {"abuse": {}, "parallel": [], "counts": []}


def raw(payload, read=True, timeout=10):
    """Send payload on a fresh connection; return the status line or why not."""
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        try:
            s.sendall(payload)
        except OSError as e:  # the server closed on us mid-send: refused
            return "closed while sending (%s)" % e.__class__.__name__
        if not read:
            return s
        data = b""
        while b"\r\n" not in data:
            try:
                chunk = s.recv(4096)
            except OSError as e:
                return "reset (%s)" % e.__class__.__name__
            if not chunk:
                break
            data += chunk
        return data.split(b"\r\n", 1)[0].decode("latin-1") or "closed"
    finally:
        if read:
            s.close()


def scrape():
    with urllib.request.urlopen("http://%s:%d/metrics" % (host, port), timeout=10) as r:
        body = r.read().decode()
        for line in body.splitlines():
            if line.startswith("txscale_recv_datagrams_total "):
                return r.status, int(line.split()[1])
        return r.status, None


t_end = time.time() + seconds
held = []
out["abuse"]["garbage"] = raw(b"\x00\xff\x13garbage\r\n\x01\x02\r\n\r\n")
out["abuse"]["not_http"] = raw(b"HELLO THERE\r\n\r\n")
out["abuse"]["line_1MB"] = raw(b"GET /metrics?" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
out["abuse"]["headers_1MB"] = raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * (1 << 20) + b"\r\n\r\n")
out["abuse"]["post_1MB"] = raw(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (1 << 20)
                               + b"c" * (1 << 20))
out["abuse"]["path"] = raw(b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n")
# clients that never read their answer, held open to the end
for _ in range(8):
    held.append(raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", read=False))
# one byte a second (slowloris), on its own thread until the end
slow_state = {"sent": 0, "closed_by_server": False}


def slow():
    s = socket.create_connection((host, port), timeout=5)
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
    try:
        for b in req * 100:
            if time.time() > t_end:
                break
            s.send(bytes([b]))
            slow_state["sent"] += 1
            time.sleep(1.0)
    except OSError:
        slow_state["closed_by_server"] = True
    s.close()


th_slow = threading.Thread(target=slow, daemon=True)
th_slow.start()


def parallel_round():
    res = [None] * 100

    def one(i):
        try:
            res[i] = scrape()[0]
        except Exception as e:  # noqa: BLE001 - reported, judged by the test
            res[i] = "error: %s" % e.__class__.__name__
    ts = [threading.Thread(target=one, args=(i,)) for i in range(100)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    return res


out["parallel"] += parallel_round()
while time.time() < t_end:
    st, n = scrape()
    if st != 200:
        print(json.dumps(out))
        sys.exit(1)
    out["counts"].append(n)
    time.sleep(0.1)
out["parallel"] += parallel_round()
out["slow"] = slow_state
for s in held:
    s.close()
print(json.dumps(out))
