#!/usr/bin/env bash
# `txscale send -c HOST` against a stock `iperf3 -s -1` (Debian's 3.12) in
# the netns lab "ip3c": the server in LAB-b, txscale in LAB-a. Each test
# uses a one-off iperf3 server, so a second probe connection would take its
# only test and fail the run.
#   1. forward -P 2 at -b 2kpps (each stream): found by itself, 8000 sent, the server's JSON
#      agrees with our receiver line, and our exact loss is the server
#      host's RcvbufErrors, plus at most the unread tail of a loaded server
#      at TEST_END (0 on a quiet host)
#   2. IPv6
#   3. loss made by tc tbf on our egress: what reached the server's host
#      (an nftables counter) is what we sent less the qdisc's drops (less
#      those of packets not the test's: TCP control, the host's own), our
#      exact lost is what did not arrive plus what the server did not count,
#      and the iperf3 server's own JSON (lost_packets, packets) agrees
#   4. -R: the iperf3 server sends, our receiver counts exactly against the
#      server's count of what it sent
#   4b. -R -n through tbf: the test ends once -n arrived (an iperf3 server
#      sends on until TEST_END), loss exact against the server's count
#   5. -c with no server there: exit 1 with one line, nothing sent
#   6. against a stock iperf3 -s, what its protocol cannot carry (a size mix,
#      flows, --auth-file, --remote-parallel) is refused, exit 2, no test ran;
#      --dry-run with -c asks no server
#   7. a test a stock server refuses (-R over its --server-bitrate-limit):
#      exit 1 and the refusal alone, no first line of a test that never ran
# Needs root, jq, iperf3, tc; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
lab_test ip3c iperf3 tc nft
# srv NAME: a one-off iperf3 server, its JSON in $tmp/NAME.srv.json
srv() {
  ip netns exec "$B" iperf3 -s -1 -J >"$tmp/$1.srv.json" 2>"$tmp/$1.srv.err" &
  srvpid=$!
  wait_for 20 listens || fail "$1: iperf3 -s does not listen"
}
srv_wait() {
  for _ in $(seq 100); do kill -0 "$srvpid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$srvpid" 2>/dev/null && fail "$1: iperf3 -s -1 did not end after the test"
  wait "$srvpid" || fail "$1: iperf3 -s -1 exited $?: $(jq -r .error "$tmp/$1.srv.json") $(cat "$tmp/$1.srv.err")"
}
# ip3_run NAME [send options]: our JSON in $tmp/NAME.json
ip3_run() {
  local name=$1; shift
  timeout 60 ip netns exec "$A" "$TXS" send -J -i 0 "$@" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    fail "$name: send exited $?: $(cat "$tmp/$name.err")"
}
rline() { jq -c 'select(.type == "receiver")' "$tmp/$1.json"; }
sline() { jq -c 'select(.type == "summary" and .kind == "send")' "$tmp/$1.json"; }

# the server host's UDP receive-buffer drops (a loaded host may drop even at a low rate)
rcvbuf_errs() { ip netns exec "$B" awk '/^Udp:/ { if (h) { print $(c); exit } for (i = 1; i <= NF; i++) if ($i == "RcvbufErrors") c = i; h = 1 }' /proc/net/snmp; }

forward() {
  local e0 kdrops r sent
  # 1. forward -P 2
  srv fwd
  e0=$(rcvbuf_errs)
  ip3_run fwd -c 198.18.0.2 -P 2 -l 200 -b 2kpps -t 2
  srv_wait fwd
  kdrops=$(( $(rcvbuf_errs) - e0 ))
  r=$(rline fwd)
  sent=$(sline fwd | jq .packets)
  # -b 2kpps is each stream's rate, as iperf3's -b: 8000 in 2 s over the 2 streams
  [ "$sent" -ge 7920 ] && [ "$sent" -le 8002 ] || fail "fwd: sent $sent at -b 2kpps -P 2 -t 2 (8000 expected): $(cat "$tmp/fwd.json")"
  # the summary says what -b resolved to, as the native send's does: the whole run's, both units
  sline fwd | jq -e '.rate.datagrams_per_s == 4000 and .rate.payload_bits_per_s == 6400000 and .rate.threads == 2' >/dev/null ||
    fail "fwd: the send line's rate object: $(sline fwd | jq -c .rate)"
  # lost: the server host's socket drops, plus what a loaded iperf3 server had not read at TEST_END
  echo "$r" | jq -e --argjson s "$sent" --argjson k "$kdrops" '.lost_exact and .expected == $s and .received + .lost == $s and .lost >= $k and .lost <= $k + 64' >/dev/null ||
    fail "fwd: sent $sent, the server host dropped $kdrops (RcvbufErrors), receiver line: $r"
  jq -e --argjson r "$(echo "$r" | jq .received)" '.end.sum_received.bytes == $r * 200 and (.end.streams | length) == 2' \
    "$tmp/fwd.srv.json" >/dev/null || fail "fwd: the iperf3 server's JSON: $(jq -c .end.sum_received "$tmp/fwd.srv.json")"
  echo "ok: forward -P 2: sent $sent in 2 streams; the iperf3 server received $(echo "$r" | jq .received) (its own JSON agrees; lost $(echo "$r" | jq .lost), its host's RcvbufErrors $kdrops)"
}
run_case forward

v6() {
  local r
  # 2. IPv6
  srv v6
  ip3_run v6 -c 2001:2::2 -l 1000 -n 500 -b 1kpps
  srv_wait v6
  # an iperf3 server counts nothing after TEST_END: what a loaded one had not yet read is lost to it
  r=$(rline v6)
  echo "$r" | jq -e '.lost_exact and .expected == 500 and .received + .lost == 500' >/dev/null || fail "v6: $r"
  jq -e --argjson r "$(echo "$r" | jq .received)" '.end.sum_received.bytes == $r * 1000 and .end.sum_received.packets <= 500' \
    "$tmp/v6.srv.json" >/dev/null || fail "v6: the iperf3 server's JSON disagrees: $(jq -c .end.sum_received "$tmp/v6.srv.json")"
  echo "ok: IPv6 -n 500: 500 sent, the server received $(echo "$r" | jq .received) (its JSON agrees)"
}
run_case v6

loss() {
  local d0 p0 other e0 drops kdrops arrived r sent got uncounted ip3lost
  # 3. loss made by tbf on our egress; an nftables counter at the server's host
  # counts what arrived there (the wire's truth beside the qdisc's drops)
  ip netns exec "$B" nft 'add table inet ip3c; add chain inet ip3c in { type filter hook input priority 0; }; add rule inet ip3c in udp dport 5201 udp length 108 counter'
  CLEANUP_HOOKS+=('ip netns exec "$B" nft delete table inet ip3c 2>/dev/null')
  tc -n "$A" qdisc add dev tx0 root tbf rate 2mbit burst 4k limit 8k
  CLEANUP_HOOKS+=('tc -n "$A" qdisc del dev tx0 root 2>/dev/null')
  d0=$(tc_drops "$A" tx0) p0=$(tc_pkts "$A" tx0)
  e0=$(rcvbuf_errs)
  srv loss
  ip3_run loss -c 198.18.0.2 -l 100 -b 8kpps -t 2
  srv_wait loss
  drops=$(( $(tc_drops "$A" tx0) - d0 ))
  other=$(( $(tc_pkts "$A" tx0) - p0 + drops ))
  kdrops=$(( $(rcvbuf_errs) - e0 ))
  tc -n "$A" qdisc del dev tx0 root
  arrived=$(ip netns exec "$B" nft -j list table inet ip3c | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add')
  ip netns exec "$B" nft delete table inet ip3c
  r=$(rline loss)
  sent=$(sline loss | jq .packets)
  got=$(echo "$r" | jq .received)
  other=$((other - sent)) # our TCP control segments and the host's own packets cross the qdisc too
  [ "$drops" -gt 0 ] || fail "loss: tbf dropped nothing (the test did not test)"
  [ "$arrived" -ge $((sent - drops)) ] && [ "$arrived" -le $((sent - drops + other)) ] ||
    fail "loss: we say we sent $sent, tbf dropped $drops ($other packets not the test's crossed it), but $arrived arrived"
  echo "$r" | jq -e --argjson s "$sent" '.lost_exact and .expected == $s and .received + .lost == $s' >/dev/null ||
    fail "loss: sent $sent, our receiver line: $r"
  jq -e --argjson g "$got" '.end.sum_received.bytes == $g * 100' "$tmp/loss.srv.json" >/dev/null ||
    fail "loss: the iperf3 server's JSON: $(jq -c .end.sum_received "$tmp/loss.srv.json")"
  # what arrived but the iperf3 server did not count: its socket's drops, or what it had not read at TEST_END
  uncounted=$((arrived - got))
  [ "$uncounted" -ge "$kdrops" ] && [ "$uncounted" -le $((kdrops + 64)) ] ||
    fail "loss: $arrived arrived, the server counted $got, its host dropped $kdrops"
  ip3lost=$(jq .end.sum_received.lost_packets "$tmp/loss.srv.json")
  [ "$ip3lost" -le "$((drops + uncounted))" ] || fail "loss: the iperf3 server counts $ip3lost lost, more than were"
  echo "ok: loss: sent $sent, $arrived arrived, $drops tbf drops ($other not the test's crossed it); our exact lost $(echo "$r" | jq .lost) = $((sent - arrived)) lost on the wire + $uncounted the server did not count ($kdrops its socket dropped); the iperf3 server's own loss figure: $ip3lost (blind to the tail)"
}
run_case loss

reverse() {
  local ours them ssent
  # 4. -R
  srv rev
  ip3_run rev -c 198.18.0.2 -R -l 500 -b 2kpps -t 2
  srv_wait rev
  ours=$(jq -c 'select(.type == "summary" and .kind == "recv")' "$tmp/rev.json")
  them=$(jq -c 'select(.type == "sender")' "$tmp/rev.json")
  ssent=$(echo "$them" | jq .packets)
  [ "$ssent" = "$(jq .end.sum_sent.packets "$tmp/rev.srv.json")" ] || fail "rev: the sender line says $ssent, the server's JSON $(jq .end.sum_sent.packets "$tmp/rev.srv.json")"
  echo "$ours" | jq -e --argjson s "$ssent" '.lost_exact and .expected == $s and .unique + .lost == $s and .lost == 0' >/dev/null ||
    fail "rev: the server sent $ssent; our receiver: $ours"
  echo "ok: -R: the iperf3 server sent $ssent, we received $(echo "$ours" | jq .received), exact"
}
run_case reverse

reverse_n() {
  local d0 p0 other t0 took drops ours ssent
  # 4b. -R -n through a tbf on the server's egress: an iperf3 3.12 server sends
  # on until TEST_END, which we send once -n has arrived; exact against what
  # it says it sent
  tc -n "$B" qdisc add dev rx0 root tbf rate 2mbit burst 4k limit 8k
  CLEANUP_HOOKS+=('tc -n "$B" qdisc del dev rx0 root 2>/dev/null')
  d0=$(tc_drops "$B" rx0) p0=$(tc_pkts "$B" rx0)
  srv revn
  t0=$(date +%s)
  ip3_run revn -c 198.18.0.2 -R -l 100 -b 8kpps -n 4000 --ctl-timeout 2
  took=$(( $(date +%s) - t0 ))
  srv_wait revn
  drops=$(( $(tc_drops "$B" rx0) - d0 ))
  other=$(( $(tc_pkts "$B" rx0) - p0 + drops ))
  tc -n "$B" qdisc del dev rx0 root
  ours=$(jq -c 'select(.type == "summary" and .kind == "recv")' "$tmp/revn.json")
  [ "$drops" -gt 0 ] || fail "revn: tbf dropped nothing"
  ssent=$(jq -c 'select(.type == "sender") | .packets' "$tmp/revn.json")
  other=$((other - ssent)) # the server's TCP segments and the host's own packets cross the qdisc too
  echo "$ours" | jq -e --argjson d "$drops" --argjson o "$other" --argjson s "$ssent" '.lost_exact and .expected == $s and .unique >= 4000 and .lost - .kernel_drops.sockets <= $d and .lost - .kernel_drops.sockets >= $d - $o' >/dev/null ||
    fail "revn: the server sent $ssent, tbf dropped $drops ($other packets not the test's crossed it); our receiver: $ours"
  [ "$took" -le 15 ] || fail "revn: the test took $took s"
  echo "ok: -R -n 4000 through tbf: $(echo "$ours" | jq .unique) arrived of the server's $ssent, lost $(echo "$ours" | jq .lost) of tbf drops $drops ($other not the test's crossed it), in ${took} s"
}
run_case reverse_n

no_server() {
  local rc=0
  # 5. nothing there
  timeout 20 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -n 10 >"$tmp/none.out" 2>&1 || rc=$?
  [ $rc = 1 ] || fail "none: exit $rc: $(cat "$tmp/none.out")"
  [ "$(wc -l <"$tmp/none.out")" = 1 ] && grep -q 'no txscale or iperf3 server at 198.18.0.2 port 5201 (--control-port: the server.s port, iperf3.s -p; send.s -p is the data port); to send without a server, give DEST without -c, or --dev udp' "$tmp/none.out" ||
    fail "none: $(cat "$tmp/none.out")"
  echo "ok: no server: exit 1, one line"
}
run_case no_server

# 6. what iperf3's protocol cannot carry is refused (exit 2), not dropped; --dry-run asks no server
refused() {
  local rc out
  # a stock iperf3 -s (not one-off: several clients come and go)
  ip netns exec "$B" iperf3 -s --forceflush >"$tmp/ref.srv.out" 2>&1 &
  srvpid=$!
  wait_for 20 listens || fail "refused: iperf3 -s does not listen"
  printf 'secret\n' >"$tmp/key"
  for args in "-l imix" "-l 64,1000" "--flows 4" "--auth-file $tmp/key" "--remote-parallel 2"; do
    rc=0
    # shellcheck disable=SC2086
    out=$(timeout 20 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -b 1M -t 1 -i 0 $args 2>&1) || rc=$?
    [ $rc = 2 ] && [[ "$out" == *"198.18.0.2 is an iperf3 server: "* ]] || fail "refused: $args: exit $rc: $out"
  done
  rc=0
  out=$(timeout 20 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -b 1M -t 1 -i 0 --dry-run 2>&1) || rc=$?
  [ $rc = 0 ] && [ -z "$out" ] || fail "--dry-run with -c: exit $rc: $out"
  kill "$srvpid" 2>/dev/null; wait "$srvpid" 2>/dev/null || true
  # each refused client left before its parameters: the server ran no test
  [ "$(grep -c 'unable to receive parameters from client' "$tmp/ref.srv.out")" -ge 5 ] &&
    ! grep -q "Accepted connection\|Starting Test" "$tmp/ref.srv.out" || fail "refused: the iperf3 server: $(cat "$tmp/ref.srv.out")"
  echo "ok: refused against stock iperf3: a size mix, flows, --auth-file, --remote-parallel (exit 2, no test); --dry-run asks no server"
}
run_case refused


# 7. refused by the server: one line, the reason (the first line waits for TEST_RUNNING)
refused_alone() {
  local rc=0 out
  ip netns exec "$B" iperf3 -s -1 --server-bitrate-limit 1M >"$tmp/lim.srv.out" 2>&1 &
  srvpid=$!
  wait_for 20 listens || fail "refused_alone: iperf3 -s does not listen"
  out=$(timeout 30 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -R -b 10M -t 2 -i 0 2>&1) || rc=$?
  kill "$srvpid" 2>/dev/null || true
  wait "$srvpid" 2>/dev/null || true
  [ $rc = 1 ] || fail "refused_alone: exit $rc: $out"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "refused_alone: more than the refusal: $out"
  case "$out" in "txscale send: 198.18.0.2: "*) ;; *) fail "refused_alone: $out" ;; esac
  echo "ok: a test the iperf3 server refuses: exit 1, one line ($out)"
}
run_case refused_alone
