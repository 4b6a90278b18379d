#!/usr/bin/env bash
# A stock iperf3 client (Debian's 3.12) against `txscale server` (netns lab
# "ip3s"): server in LAB-b (198.18.0.2 / 2001:2::2), iperf3 -c in LAB-a.
#   1. forward -P 2 -l 16: the client's received bytes are 16 x the server's
#      distinct arrivals; the server's loss is exact, equal to its sockets'
#      own drop counters (0 on a quiet host), and the client prints it
#   2. loss made by tc tbf on the client's egress: what reaches the server's
#      host (an nftables counter of 100-byte datagrams) is the truth, held
#      between the qdisc's drops less what crossed it that was not the
#      test's (TCP control, the host's own) and its drops: the server's exact
#      loss equals sent - arrived (plus its sockets' drops), so does the loss
#      the client prints, and the client's received bytes are (sent - lost) x -l
#   3. -R through a tbf on the server's egress: what reaches the client's
#      host (the same counter there) is what the server sent minus the
#      qdisc's drops (bounded the same way); iperf3's client counts those that came before its
#      TEST_END (the queue's tail comes after: at most the qdisc's limit of
#      8192 / 142 datagrams, and what sits in its socket)
#   4. --bidir: both directions exact, the server's sender paced to -b
#      (payload bits/s per stream)
#   5. IPv6 with -n in bytes and 64-bit counters: iperf3's count of datagrams
#      for those bytes, all received
#   6. a TCP test is refused with an iperf3 error the client prints; the next
#      test is served
#   7. a txscale client on the same port is served as before (exact)
# Needs root, jq, iperf3, tc; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"


lab_test ip3s iperf3 tc nft
lab_server --ctl-timeout 3 --max-time 30

# ip3 NAME [iperf3 options...]: the client's JSON in $tmp/NAME.json
ip3() {
  local name=$1; shift
  timeout 60 ip netns exec "$A" iperf3 -J "$@" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    fail "$name: iperf3 exited $?: $(jq -r .error "$tmp/$name.json" 2>/dev/null) $(cat "$tmp/$name.err")"
}
# the server's last summary of a kind
srv_last() { jq -c "select(.type == \"summary\" and .kind == \"$1\")" "$tmp/srv.json" | tail -n1; }
nsum() { jq -c "select(.type == \"summary\")" "$tmp/srv.json" | wc -l; }

forward() {
  local own sent rbytes
  # 1. forward -P 2 -l 16
  ip3 fwd -c 198.18.0.2 -u -l 16 -b 2M -t 2 -P 2
  own=$(srv_last recv)
  sent=$(jq .end.sum_sent.packets "$tmp/fwd.json")
  rbytes=$(jq .end.sum_received.bytes "$tmp/fwd.json")
  # exact, and any loss is the server's own sockets' drops (0 on a quiet host)
  echo "$own" | jq -e --argjson s "$sent" '.lost_exact and .expected == $s and .unique + .lost == $s and .lost == .kernel_drops.sockets and (.flows | length) == 2' >/dev/null ||
    fail "fwd: the client sent $sent, the server says: $own"
  [ "$rbytes" -eq $((16 * $(echo "$own" | jq .unique))) ] || fail "fwd: the client shows $rbytes bytes received, the server $(echo "$own" | jq .bytes)"
  [ "$(jq .end.sum_received.lost_packets "$tmp/fwd.json")" = "$(echo "$own" | jq .lost)" ] || fail "fwd: the client shows another loss"
  echo "ok: forward -P 2 -l 16: the client sent $sent, the server received $((rbytes / 16)) ($rbytes bytes), lost $(echo "$own" | jq .lost) = its sockets' drops, exact"
}
run_case forward

loss() {
  local d0 p0 drops other arrived wire own sent lost
  # 2. loss made by tbf on the client's egress. The qdisc also passes (and
  # may drop) the client's TCP control segments and the host's own packets:
  # the truth is an nftables counter of the test's 100-byte datagrams at the
  # server's host (wire loss = sent - arrived), and the qdisc's drops bound
  # it: drops - other <= sent - arrived <= drops, other = what crossed it
  # that was not a datagram of the test
  ip netns exec "$B" nft 'add table inet ip3l; add chain inet ip3l in { type filter hook input priority 0; }; add rule inet ip3l in udp dport 5201 udp length 108 counter'
  CLEANUP_HOOKS+=('ip netns exec "$B" nft delete table inet ip3l 2>/dev/null')
  tc -n "$A" qdisc add dev tx0 root tbf rate 2mbit burst 4k limit 8k
  CLEANUP_HOOKS+=('tc -n "$A" qdisc del dev tx0 root 2>/dev/null')
  d0=$(tc_drops "$A" tx0) p0=$(tc_pkts "$A" tx0)
  ip3 loss -c 198.18.0.2 -u -l 100 -b 8M -t 2
  drops=$(( $(tc_drops "$A" tx0) - d0 ))
  sent=$(jq .end.sum_sent.packets "$tmp/loss.json")
  other=$(( $(tc_pkts "$A" tx0) - p0 + drops - sent ))
  tc -n "$A" qdisc del dev tx0 root
  arrived=$(ip netns exec "$B" nft -j list table inet ip3l | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add')
  ip netns exec "$B" nft delete table inet ip3l
  wire=$((sent - arrived))
  own=$(srv_last recv)
  [ "$drops" -gt 0 ] || fail "loss: tbf dropped nothing (the test did not test)"
  [ "$wire" -le "$drops" ] && [ "$wire" -ge $((drops - other)) ] ||
    fail "loss: sent $sent, $arrived arrived, but tbf dropped $drops ($other packets not the test's crossed it)"
  # the server's exact loss: the wire's, plus its own sockets' drops (0 on a quiet host)
  echo "$own" | jq -e --argjson s "$sent" --argjson w "$wire" '.lost_exact and .expected == $s and .lost == $w + .kernel_drops.sockets and .unique + .lost == $s' >/dev/null ||
    fail "loss: sent $sent, $arrived arrived (tbf dropped $drops), the server says: $own"
  lost=$(echo "$own" | jq .lost)
  [ "$(jq .end.sum_received.lost_packets "$tmp/loss.json")" = "$lost" ] ||
    fail "loss: the client shows $(jq .end.sum_received.lost_packets "$tmp/loss.json") lost, the server $lost (tbf dropped $drops)"
  [ "$(jq .end.sum_received.bytes "$tmp/loss.json")" -eq $(( (sent - lost) * 100 )) ] || fail "loss: received bytes differ from (sent - lost) x 100"
  echo "ok: loss: sent $sent, $arrived arrived, tbf dropped $drops ($other not the test's crossed it); the server's exact loss $lost (= the wire's $wire + its sockets' $((lost - wire))) = the client's lost_packets"
}
run_case loss

reverse() {
  local d0 p0 drops other arrived them ssent rb late
  # 3. -R through a tbf on the server's egress
  tc -n "$B" qdisc add dev rx0 root tbf rate 2mbit burst 4k limit 8k
  CLEANUP_HOOKS+=('tc -n "$B" qdisc del dev rx0 root 2>/dev/null')
  d0=$(tc_drops "$B" rx0) p0=$(tc_pkts "$B" rx0)
  ip netns exec "$A" nft 'add table inet ip3s; add chain inet ip3s in { type filter hook input priority 0; }; add rule inet ip3s in udp sport 5201 udp length 108 counter'
  CLEANUP_HOOKS+=('ip netns exec "$A" nft delete table inet ip3s 2>/dev/null')
  ip3 rev -c 198.18.0.2 -u -l 100 -b 8M -t 2 -R
  sleep 0.3
  drops=$(( $(tc_drops "$B" rx0) - d0 ))
  other=$(( $(tc_pkts "$B" rx0) - p0 + drops ))
  tc -n "$B" qdisc del dev rx0 root
  arrived=$(ip netns exec "$A" nft -j list table inet ip3s | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add')
  ip netns exec "$A" nft delete table inet ip3s
  them=$(srv_last send)
  ssent=$(echo "$them" | jq .packets)
  other=$((other - ssent)) # the server's TCP segments and the host's own packets cross the qdisc too
  [ "$drops" -gt 0 ] || fail "rev: tbf dropped nothing"
  [ "$(jq .end.sum_sent.packets "$tmp/rev.json")" = "$ssent" ] || fail "rev: the client shows $(jq .end.sum_sent.packets "$tmp/rev.json") sent, the server sent $ssent"
  [ "$arrived" -ge $((ssent - drops)) ] && [ "$arrived" -le $((ssent - drops + other)) ] ||
    fail "rev: $arrived datagrams reached the client's host; the server sent $ssent, tbf dropped $drops ($other packets not the test's crossed it)"
  rb=$(jq .end.sum_received.bytes "$tmp/rev.json")
  late=$(( arrived - rb / 100 ))
  [ $((rb % 100)) -eq 0 ] && [ "$late" -ge 0 ] && [ "$late" -le $((8192 / 142 + 64)) ] ||
    fail "rev: the client counted $rb bytes of the $arrived datagrams that reached it"
  echo "ok: -R: the server sent $ssent, tbf dropped $drops, $arrived reached the client (sent - drops, $other packets not the test's crossed the qdisc); iperf3 counted $((rb / 100)) ($late came after its TEST_END)"
}
run_case reverse

bidir() {
  local own them csent rb sp
  # 4. --bidir
  ip3 bidir -c 198.18.0.2 -u -l 200 -b 1M -t 2 --bidir
  own=$(srv_last recv)
  them=$(srv_last send)
  csent=$(jq .end.sum_sent.packets "$tmp/bidir.json")
  echo "$own" | jq -e --argjson s "$csent" '.lost_exact and .expected == $s and .lost == 0' >/dev/null || fail "bidir: client->server not exact: $own"
  rb=$(jq .end.sum_received_bidir_reverse.bytes "$tmp/bidir.json")
  [ "$rb" -eq $(( $(echo "$them" | jq .packets) * 200 )) ] || fail "bidir: the client received $rb bytes of the server's $(echo "$them" | jq .packets) datagrams"
  # -b is payload bits/s per stream, as iperf3 means it: 1M / (200 x 8) x 2 s = 1250;
  # the server sends on until the client's TEST_END (as stock iperf3 does),
  # which leaves the client at its own -t: a few ms (a datagram is 3.2 ms) later
  sp=$(echo "$them" | jq .packets)
  [ "$sp" -ge 1237 ] && [ "$sp" -le 1265 ] || fail "bidir: the server sent $sp at -b 1M -l 200 -t 2 (1250 expected, sent until TEST_END)"
  echo "ok: --bidir: $csent up, $sp down (-b 1M -l 200: 1250 per 2 s), all counted"
}
run_case bidir

v6() {
  local own sent
  # 5. IPv6, -n in bytes, 64-bit counters
  ip3 v6 -c 2001:2::2 -u -l 1000 -b 10M -n 1M --udp-counters-64bit
  own=$(srv_last recv)
  sent=$(jq .end.sum_sent.packets "$tmp/v6.json")
  [ "$sent" -eq $(( (1048576 + 999) / 1000 )) ] || fail "v6: iperf3 sent $sent datagrams for -n 1M -l 1000"
  echo "$own" | jq -e --argjson s "$sent" '.lost_exact and .expected == $s and .unique == $s and .bytes == $s * 1000' >/dev/null ||
    fail "v6: sent $sent, the server says $own"
  grep -q 'session [0-9]* (2001:2::1): iperf3 3.12 client: .*64-bit counters' "$tmp/srv.log" || fail "v6: no IPv6 session with 64-bit counters in the log"
  echo "ok: IPv6 -n 1M -l 1000 --udp-counters-64bit: $sent datagrams, all received"
}
run_case v6

tcp_refused() {
  local n0
  # 6. TCP refused, the next test served
  n0=$(nsum)
  if timeout 30 ip netns exec "$A" iperf3 -c 198.18.0.2 -t 1 >"$tmp/tcp.out" 2>&1; then fail "tcp: iperf3 exited 0: $(cat "$tmp/tcp.out")"; fi
  grep -q 'iperf3: error - ' "$tmp/tcp.out" || fail "tcp: the client printed no iperf3 error: $(cat "$tmp/tcp.out")"
  wait_for 5 grep -q 'refused (iperf3 error 13): TCP tests are not served' "$tmp/srv.log" || fail "tcp: the server did not log the refusal"
  [ "$(nsum)" = "$n0" ] || fail "tcp: a summary was written for a refused test"
  ip3 after -c 198.18.0.2 -u -l 64 -b 1M -t 1
  [ "$(srv_last recv | jq .expected)" = "$(jq .end.sum_sent.packets "$tmp/after.json")" ] || fail "after: the test after the refusal was not served exactly"
  echo "ok: TCP refused ($(grep -o 'iperf3: error - .*' "$tmp/tcp.out")), the next test served"
}
run_case tcp_refused

txscale_client() {
  # 7. a txscale client on the same port
  TMPDIR=$tmp/ts timeout 60 ip netns exec "$A" "$TXS" send -J -i 0 -c 198.18.0.2 -n 2000 -b 20kpps >"$tmp/txs.json" 2>"$tmp/txs.err" ||
    fail "txscale client: $(cat "$tmp/txs.err")"
  jq -c 'select(.type == "receiver")' "$tmp/txs.json" | jq -e '.lost_exact and .unique + .lost == 2000' >/dev/null ||
    fail "txscale client: no exact receiver line: $(cat "$tmp/txs.json")"
  echo "ok: a txscale client on the same port: exact"
}
run_case txscale_client

server_alive() {
  kill -0 "$srv" 2>/dev/null || fail "the server exited"
}
run_case server_alive

