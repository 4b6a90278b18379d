#!/usr/bin/env bash
# `txscale recv --payload iperf2` counts what a stock iperf 2 UDP client
# (Debian's iperf 2.1.x) sends (netns lab "ip2r"): `iperf -s -u` in LAB-b
# serves the test while recv reads the same datagrams from rx0 (AF_PACKET)
# beside it.
#   1. -n 100000 -l 100 (1000 datagrams) through tc tbf (800 kbit/s): recv's
#      exact loss (--expect 1000) is what did not reach the server's host
#      (an nftables counter there: the truth), the stock server's own
#      Lost/Total agrees (less its count of end-of-test ids), the
#      end-of-test datagrams (negative ids) are counted apart (unsequenced),
#      one flow by 5-tuple, one-way latency from iperf 2's realtime stamp
#   2. no loss, -l 1400: all 500 received, latency of every one
# Needs root, jq, iperf (2.x), nft, tc; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
lab_test ip2r iperf nft tc
case "$(iperf -v 2>&1 | head -n1)" in "iperf version 2"*) ;; *) skip "iperf is not iperf 2: $(iperf -v 2>&1 | head -n1)" ;; esac

# case_run NAME N LEN [iperf options]: recv's summary in $tmp/NAME.json, the server's report in NAME.srv
case_run() {
  local name=$1 n=$2 len=$3
  shift 3
  ip netns exec "$B" timeout 30 iperf -s -u -P 1 -p 5001 >"$tmp/$name.srv" 2>&1 &
  local spid=$!
  ip netns exec "$B" "$TXS" recv --dev packet:rx0 -p 5001 --payload iperf2 --expect "$n" -t 20 --idle 2 -i 0 -J \
    --ready-fd 3 >"$tmp/$name.json" 2>"$tmp/$name.err" 3>"$tmp/$name.ready" &
  local rpid=$!
  wait_for 20 ip netns exec "$B" sh -c "ss -lun 'sport = :5001' | grep -q 5001" || fail "$name: iperf -s does not listen"
  wait_ready "$tmp/$name.ready" $rpid
  timeout 30 ip netns exec "$A" iperf -c 198.18.0.2 -u -p 5001 -l "$len" -n $((n * len)) "$@" >"$tmp/$name.cli" 2>&1 ||
    fail "$name: iperf -c: $(cat "$tmp/$name.cli")"
  wait "$spid" || fail "$name: iperf -s exited $?: $(cat "$tmp/$name.srv")"
  wait "$rpid" || fail "$name: recv exited $?: $(cat "$tmp/$name.err")"
}
# srv_lost NAME: the stock server's "LOST/TOTAL" of its report
srv_lost() { grep -o '[0-9]*/[0-9]* *(' "$tmp/$1.srv" | tail -n1 | tr -d ' ('; }

loss() {
  local s arrived lost st
  # loss by tbf on the client's egress; the truth is what reached the
  # server's host: an nftables counter of the data datagrams (a non-negative
  # id: the payload's first bit clear) at its input hook
  tc -n "$A" qdisc add dev tx0 root tbf rate 800kbit burst 4k limit 8k
  CLEANUP_HOOKS+=('tc -n "$A" qdisc del dev tx0 root 2>/dev/null')
  ip netns exec "$B" nft "add table inet ip2d; add chain inet ip2d in { type filter hook input priority 0; }; add rule inet ip2d in udp dport 5001 udp length 108 @th,64,8 & 0x80 == 0 counter"
  CLEANUP_HOOKS+=('ip netns exec "$B" nft delete table inet ip2d 2>/dev/null')
  case_run loss 1000 100 -b 1M
  tc -n "$A" qdisc del dev tx0 root
  arrived=$(ip netns exec "$B" nft -j list table inet ip2d | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add')
  ip netns exec "$B" nft delete table inet ip2d
  lost=$((1000 - arrived))
  s=$(tail -n1 "$tmp/loss.json")
  [ "$lost" -gt 0 ] || fail "loss: tbf dropped no data datagram (the test did not test)"
  echo "$s" | jq -e --argjson d "$lost" '.lost_exact and .expected == 1000 and .lost == $d and .unique == 1000 - $d and .duplicates == 0 and
      .unsequenced >= 1 and .received == .unique + .unsequenced and (.flows | length) == 1 and .latency_ns.count == .unique and .malformed == 0' >/dev/null ||
    fail "loss: $arrived of 1000 data datagrams reached the server's host; recv: $(echo "$s" | jq -c '{received,unique,lost,lost_exact,expected,unsequenced,malformed,lat: .latency_ns.count}')"
  # the stock server's Lost/Total: iperf 2 takes its total from the
  # end-of-test datagram's id (1001 when the first arrives; a lost one is
  # sent again with the next id), and counts each id it did not see as lost:
  # its loss is ours plus the end-of-test datagrams lost before one arrived
  st=$(srv_lost loss)
  [ $(( ${st%/*} - lost )) = $(( ${st#*/} - 1001 )) ] ||
    fail "loss: the iperf 2 server says $st lost/total, $lost of 1000 data datagrams did not arrive"
  ok "iperf 2 -n 100000 -l 100 through tbf: $arrived of 1000 arrived; recv lost $(echo "$s" | jq .lost) (exact), the stock server $st, $(echo "$s" | jq .unsequenced) end-of-test datagrams apart, latency p50 $(echo "$s" | jq .latency_ns.p50) ns"
}
run_case loss

big() {
  local s
  case_run big 500 1400 -b 2M
  s=$(tail -n1 "$tmp/big.json")
  echo "$s" | jq -e '.lost_exact and .unique == 500 and .lost == 0 and .latency_ns.count == 500' >/dev/null ||
    fail "big: $(echo "$s" | jq -c '{received,unique,lost,unsequenced,lat: .latency_ns.count}')"
  [ "$(srv_lost big)" = "0/501" ] || fail "big: the iperf 2 server says $(srv_lost big)"
  ok "iperf 2 -l 1400: 500 of 500, the stock server 0/501 (its total counts the end-of-test id)"
}
run_case big
