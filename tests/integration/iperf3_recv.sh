#!/usr/bin/env bash
# `txscale recv --payload iperf3[-64]` counts what a stock iperf3 client
# (Debian's 3.12) sends (netns lab "ip3r"): iperf3 -s in LAB-b serves the
# test while recv reads the same datagrams from rx0 (AF_PACKET) beside it.
#   1. -P 2 -k 1000 with 64-bit counters, through tc tbf on the client's
#      egress: recv's exact loss (--expect 1000) equals the qdisc's drops,
#      two flows by 5-tuple, the two stream handshakes counted as malformed;
#      the iperf3 server counted what recv did, less the qdisc queue's tail
#      that came after its TEST_END (at most 8192 / 242 datagrams)
#   2. 32-bit counters, no loss: all 500 received, jitter reported
# Needs root, jq, iperf3, tc; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
lab_test ip3r iperf3 tc
# case_run NAME PAYLOAD N [iperf3 options]: recv's summary in $tmp/NAME.json, the server's JSON in NAME.srv.json
case_run() {
  local name=$1 payload=$2 n=$3; shift 3
  ip netns exec "$B" iperf3 -s -1 -J >"$tmp/$name.srv.json" 2>/dev/null &
  local spid=$!
  ip netns exec "$B" "$TXS" recv --dev packet:rx0 -p 5201 --payload "$payload" --expect "$n" -t 20 --idle 2 -i 0 -J \
    --ready-fd 3 >"$tmp/$name.json" 2>"$tmp/$name.err" 3>"$tmp/$name.ready" &
  local rpid=$!
  wait_for 20 listens || fail "$name: iperf3 -s does not listen"
  wait_ready "$tmp/$name.ready" $rpid
  timeout 30 ip netns exec "$A" iperf3 -c 198.18.0.2 -u -k "$n" "$@" >"$tmp/$name.cli" 2>&1 ||
    fail "$name: iperf3 -c: $(cat "$tmp/$name.cli")"
  wait "$spid" || true
  wait "$rpid" || fail "$name: recv exited $?: $(cat "$tmp/$name.err")"
}

loss() {
  local d0 drops s srvb tail_n
  # 1. -P 2, 64-bit counters, tbf loss
  tc -n "$A" qdisc add dev tx0 root tbf rate 2mbit burst 4k limit 8k
  CLEANUP_HOOKS+=('tc -n "$A" qdisc del dev tx0 root 2>/dev/null')
  d0=$(tc_drops "$A" tx0) p0=$(tc_pkts "$A" tx0)
  case_run loss iperf3-64 1000 -l 200 -b 2M -P 2 --udp-counters-64bit
  drops=$(( $(tc_drops "$A" tx0) - d0 ))
  # tbf counts every packet tx0 sends: the 1000 datagrams, the 2 stream
  # handshakes, and whatever else the host sends meanwhile (an IPv6 router
  # solicitation, say); of its drops all but those others are the test's
  other=$(( $(tc_pkts "$A" tx0) - p0 + drops - 1000 - 2 ))
  [ "$other" -ge 0 ] || other=0
  tc -n "$A" qdisc del dev tx0 root
  s=$(tail -n1 "$tmp/loss.json")
  [ "$drops" -gt 0 ] || fail "loss: tbf dropped nothing (the test did not test)"
  echo "$s" | jq -e --argjson d "$drops" --argjson o "$other" '.lost_exact and .expected == 1000 and .lost <= $d and .lost >= $d - $o and .unique == 1000 - .lost and .duplicates == 0' >/dev/null ||
    fail "loss: tbf dropped $drops ($other packets not the test's went through it); recv: $(echo "$s" | jq -c '{received,unique,lost,lost_exact,expected,duplicates,malformed}')"
  drops=$(echo "$s" | jq .lost)
  echo "$s" | jq -e '(.flows | length) == 2 and (.malformed_by_kind["bad-magic"] == 2)' >/dev/null ||
    fail "loss: expected 2 flows and the 2 handshakes as malformed: $(echo "$s" | jq -c '{flows: (.flows | length), malformed_by_kind}')"
  srvb=$(jq .end.sum_received.bytes "$tmp/loss.srv.json")
  tail_n=$(( 1000 - drops - srvb / 200 ))
  [ "$tail_n" -ge 0 ] && [ "$tail_n" -le $((8192 / 242)) ] || fail "loss: the iperf3 server received $srvb bytes, recv $((1000 - drops)) datagrams"
  echo "ok: -P 2 -k 1000 --udp-counters-64bit through tbf: recv lost $drops (exact) of the qdisc's drops ($other packets not the test's crossed it), 2 flows; the iperf3 server counted $((srvb / 200)) ($tail_n after its TEST_END)"
}
run_case loss

c32() {
  local s
  # 2. 32-bit counters
  case_run c32 iperf3 500 -l 64 -b 500k
  s=$(tail -n1 "$tmp/c32.json")
  echo "$s" | jq -e '.lost_exact and .unique == 500 and .lost == 0 and .latency_ns.count == 0 and (.latency_ns.jitter | type) == "number"' >/dev/null ||
    fail "c32: $(echo "$s" | jq -c '{received,unique,lost,latency_ns}')"
  echo "ok: 32-bit counters: 500 of 500, jitter $(echo "$s" | jq .latency_ns.jitter) ns"
}
run_case c32

