#!/usr/bin/env bash
# recv --dev udp (CPU 1) against send --dev udp --df, the default (GSO: IPv4 with DF; CPU 0), at
# the sender's maximum rate, N rounds of COUNT datagrams into a veth peer:
# per round sent, received, lost, the kernel's drops at recv's socket.
#   recv-exact.sh OUT [ROUNDS] [COUNT] [SENDER ARGS...]
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
TXS=$here/build/txscale
out=$1 rounds=${2:-5} count=${3:-3000000}
shift $(($# < 3 ? $# : 3))
LAB=rxex A=rxex-a B=rxex-b
"$here/scripts/netns-lab" up --name $LAB >/dev/null
trap '"$here/scripts/netns-lab" down --name $LAB >/dev/null 2>&1; rm -f /tmp/rxex.*' EXIT
: >"$out"
for ((r = 1; r <= rounds; r++)); do
  ip netns exec $B "$TXS" recv -B 198.18.0.2 -p 5201 -A 1 -i 0 -J --idle 1 -t 60 \
    --sender-summary /tmp/rxex.s.json >/tmp/rxex.r.json 2>/dev/null &
  rp=$!
  sleep 0.5
  ip netns exec $A "$TXS" send --dev udp --df -A 0 -n "$count" -i 0 -p 5201 "$@" --summary-file /tmp/rxex.s.json \
    198.18.0.2 >/dev/null
  wait $rp || true
  jq -r --slurpfile s /tmp/rxex.s.json '"round '"$r"': sent \($s[0].packets) at \($s[0].packets / $s[0].seconds | floor) pps (gso calls \($s[0].gso.calls), \($s[0].gso.segments) segments), received \(.received), lost \(.lost), kernel drops at the socket \(.kernel_drops.sockets), recv \(.pps | floor) pps"' \
    <(tail -n1 /tmp/rxex.r.json) | tee -a "$out"
done
