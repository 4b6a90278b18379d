#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/library.md's Python walk-through: the C one's sessions, in Python."""
import sys
import threading

import txscale

port = int(sys.argv[1]) if len(sys.argv) > 1 else 47412

# 1. Keywords are the long options, '-' as '_'; a bad one names itself.
try:
    txscale.Session("send", dest="127.0.0.1", bitrate="fast")
except txscale.ConfigError as e:
    print("refused:", e.key, "-", e)

# 2. A receiver, bound at once; a sender of 1000 datagrams at 10kpps.
with txscale.Session("recv", bind="127.0.0.1", port=port, time=20, expect=1000) as rx:
    rx.start()
    with txscale.Session("send", dest="127.0.0.1", port=port, dev="udp",
                         packets=1000, bitrate="10kpps") as tx:
        tx.start()
        # 3. stats() from any thread while the sessions run
        t = threading.Thread(target=lambda: print("stats:", rx.stats()["received"]))
        t.start()
        t.join()
        sent = tx.wait()
    # 4. wait() returns the summary dict (Ctrl-C here stops the session)
    got = rx.wait(timeout=20)

print("sent %d, received %d, lost %d" % (sent["packets"], got["received"], got["lost"]))
sys.exit(0 if sent["packets"] == got["received"] == 1000 and got["lost"] == 0 else 1)
