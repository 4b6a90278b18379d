#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/library.md: a txscale server inside a Python program, and an NDR
search from it. A test harness starts the server session, lets clients run
(here the txscale CLI, as a remote host would), reads each test's summary
from the session, and stops it; then searches the no-drop rate on loopback.
  TXSCALE_BIN=build/txscale examples/server_in_process.py [CONTROL_PORT]"""
import os
import subprocess
import sys
import time

import txscale

port = int(sys.argv[1]) if len(sys.argv) > 1 else 47413
txscale_bin = os.environ.get("TXSCALE_BIN", "txscale")

# 1. The server listens when the session is made; it serves until stopped.
with txscale.Session("server", bind="127.0.0.1", control_port=port, no_iperf2=True) as srv:
    srv.start()
    # 2. A client runs a test against it (from another host, in real use).
    subprocess.run([txscale_bin, "send", "-c", "127.0.0.1", "--control-port", str(port),
                    "-n", "1000", "-b", "10kpps", "-i", "0"], check=True, stdout=subprocess.DEVNULL)
    while srv.stats()["active"]:  # the session's process is done a moment later
        time.sleep(0.05)
    # 3. Stop it: the summary holds each test's summary, the log is error().
    srv.stop()
    done = srv.wait(timeout=20)

recv = [t["summary"] for t in done["summaries"] if t["role"] == "receiver"]
print("sessions %d, the receiver counted %d, lost %d" % (done["sessions"], recv[0]["received"], recv[0]["lost"]))

# 4. The NDR search as a session: its trials run the txscale program.
ndr = txscale.run("ndr", dest="127.0.0.1", port=port, lo="1kpps", hi="20kpps", trial=0.3, max_trials=5)
print("ndr: %s at %.0f datagrams/s after %d trials" % (ndr["outcome"], ndr["rate_pps"], ndr["trials"]))
sys.exit(0 if recv[0]["received"] == 1000 and recv[0]["lost"] == 0 and ndr["rate_pps"] > 0 else 1)
