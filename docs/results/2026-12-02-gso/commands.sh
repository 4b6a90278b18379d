#!/usr/bin/env bash
# The commands behind docs/results/2026-12-02-gso/README.md (run from the
# repository root, as root, after cmake --build build).
set -euo pipefail
out=docs/results/2026-12-02-gso
# 1. every sender counted by a receiver in the peer namespace (txscale recv
#    on CPU 1, iperf3 -s for iperf3), each device beside its limit loop
#    (bench/limit) and the peers, senders on CPU 0: 5 alternated rounds of 3 s
bench/peers --rounds 5 --time 3 --out $out/peers.json
# 2. recv --dev udp against the default udp sender at its maximum rate, one
#    core each (sender CPU 0, receiver CPU 1), 5 rounds of 3 M datagrams
bash $out/recv-exact.sh $out/recv-exact.txt
# 3. scaling at 1-2 threads (on a many-core machine: bench/scale, nothing else)
bench/scale --out $out/scale.json
