#!/usr/bin/env bash
# The control channel between two namespaces (netns lab "ctl"): `txscale
# server` in ctl-b (198.18.0.2), `txscale send -c 198.18.0.2` in ctl-a.
#   1. forward, the iperf3 form (no --server, no --dev: the server answers on
#      the control port): -n 400k -b 200kpps (2 s); the client's receiver line equals
#      the server's own summary (received, lost, duplicates, reordered,
#      exact), and received + lost = what our sender sent
#   2. -R: the server sends 200k, our receiver counts them exactly against
#      the server's sender summary, which the client shows
#   3. --bidir: both directions, each exact against the other side's sender
#   4. IPv6, and --remote-rcvbuf 4096 at an unlimited rate: the loss the
#      client shows equals the server host's RcvbufErrors and its socket drops
#   5. the server stays up through all of it, served one session per run,
#      and leaves no child and no temporary file
# Needs root and jq; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"


lab_test ctl ip
lab_server --ctl-timeout 3

# client NAME [send options...]: JSON lines into $tmp/NAME.json
client() {
  local name=$1; shift
  TMPDIR=$tmp/tc timeout 120 ip netns exec "$A" "$TXS" send -J -i 0 "$@" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    fail "$name: send exited $?: $(cat "$tmp/$name.err")"
}
# the server's summary lines of one kind, in order
srv_lines() { jq -c "select(.type == \"summary\" and .kind == \"$1\")" "$tmp/srv.json"; }
line() { jq -c "select(.type == \"$2\" and (.kind // \"\") == \"$3\")" "$tmp/$1.json" | tail -n1; }

forward() {
  local rcv snd own k a b sent
  # 1. forward, the iperf3 form
  client fwd -c 198.18.0.2 -n 400k -b 200kpps
  [ "$(jq -r .type "$tmp/fwd.json" | tail -n2 | tr '\n' ' ')" = "receiver summary " ] ||
    fail "fwd: expected a receiver line, then the summary: $(jq -r .type "$tmp/fwd.json" | tr '\n' ' ')"
  rcv=$(line fwd receiver recv)
  snd=$(line fwd summary send)
  own=$(srv_lines recv | tail -n1)
  [ -n "$own" ] || fail "fwd: the server printed no summary"
  for k in received lost duplicates reordered late malformed unique lost_exact expected; do
    a=$(echo "$rcv" | jq ".$k")
    b=$(echo "$own" | jq ".$k")
    [ "$a" = "$b" ] || fail "fwd: the client shows $k $a, the server's own summary says $b"
  done
  echo "$rcv" | jq -e '.lost_exact == true and .host == "198.18.0.2"' >/dev/null || fail "fwd: not exact: $rcv"
  sent=$(echo "$snd" | jq .packets)
  [ "$sent" -eq 400000 ] || fail "fwd: sent $sent, expected 400000"
  echo "$rcv" | jq -e --argjson s "$sent" '.received == .unique + .duplicates + .late + .unsequenced + .overflow and .unique + .lost == $s' >/dev/null ||
    fail "fwd: received + lost != sent $sent: $rcv"
  echo "ok: forward: sent $sent, the server received $(echo "$rcv" | jq .received), lost $(echo "$rcv" | jq .lost) (exact; its socket dropped $(echo "$rcv" | jq .kernel_drops.sockets), softnet $(echo "$rcv" | jq .kernel_drops.softnet.dropped)), the same counts as its own summary"
}
run_case forward

text() {
  # text form: the receiver's lines beside ours
  TMPDIR=$tmp/tc timeout 60 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -n 20k -b 100kpps -i 0 >"$tmp/text.out" 2>&1 ||
    fail "text: $(cat "$tmp/text.out")"
  grep -q '^receiver 198.18.0.2: received [0-9]*, lost [0-9]* (.*) exact' "$tmp/text.out" || fail "text: no receiver line: $(cat "$tmp/text.out")"
  grep -q '^receiver 198.18.0.2: latency p50 ' "$tmp/text.out" || fail "text: no latency line"
  grep -q '^receiver 198.18.0.2: kernel drops: socket [0-9]*, RcvbufErrors [0-9]*' "$tmp/text.out" || fail "text: no kernel drops line"
  echo "ok: text output shows the receiver's counts, latency and kernel drops"
}
run_case text

reverse() {
  local them ours srvs
  # 2. reverse
  client rev -c 198.18.0.2 -R -n 200k -b 100kpps --timestamps interp
  [ "$(jq -r .type "$tmp/rev.json" | tail -n2 | tr '\n' ' ')" = "sender summary " ] ||
    fail "rev: expected a sender line, then our receiver's summary"
  them=$(line rev sender send)
  ours=$(line rev summary recv)
  srvs=$(srv_lines send | tail -n1)
  [ "$(echo "$them" | jq .packets)" = "$(echo "$srvs" | jq .packets)" ] || fail "rev: the sender line differs from the server's summary"
  echo "$them" | jq -e '.packets == 200000' >/dev/null || fail "rev: the server sent $(echo "$them" | jq .packets)"
  # --timestamps goes with the test to the server's sender
  echo "$them" | jq -e '.timestamps == "interp" and .timestamp_check.bursts > 0' >/dev/null ||
    fail "rev: --timestamps interp did not reach the server's sender: $(echo "$them" | jq -c '{timestamps, timestamp_check}')"
  echo "$ours" | jq -e '.lost_exact == true and .expected == 200000 and .unique + .lost == 200000' >/dev/null ||
    fail "rev: our receiver is not exact against the server's 200000: $ours"
  echo "ok: reverse: the server sent 200000 (--timestamps interp), we received $(echo "$ours" | jq .received), lost $(echo "$ours" | jq .lost) (exact)"
}
run_case reverse

bidir() {
  local rcv snd them ours
  # 3. bidirectional
  client bidir -c 198.18.0.2 --bidir -n 100k -b 50kpps
  rcv=$(line bidir receiver recv)
  snd=$(line bidir summary send)
  them=$(line bidir sender send)
  ours=$(line bidir summary recv)
  [ -n "$rcv" ] && [ -n "$snd" ] && [ -n "$them" ] && [ -n "$ours" ] || fail "bidir: missing lines: $(jq -r .type "$tmp/bidir.json" | tr '\n' ' ')"
  echo "$snd" | jq -e '.packets == 100000' >/dev/null || fail "bidir: we sent $(echo "$snd" | jq .packets)"
  echo "$them" | jq -e '.packets == 100000' >/dev/null || fail "bidir: the server sent $(echo "$them" | jq .packets)"
  echo "$rcv" | jq -e '.lost_exact and .expected == 100000 and .unique + .lost == 100000' >/dev/null || fail "bidir: server side not exact: $rcv"
  echo "$ours" | jq -e '.lost_exact and .expected == 100000 and .unique + .lost == 100000' >/dev/null || fail "bidir: our side not exact: $ours"
  [ "$(echo "$rcv" | jq .received)" = "$(srv_lines recv | tail -n1 | jq .received)" ] || fail "bidir: receiver line != server summary"
  echo "ok: bidir: 100000 each way; server received $(echo "$rcv" | jq .received), we received $(echo "$ours" | jq .received), both exact"
}
run_case bidir

v6_tiny_rcvbuf() {
  local rcv lost rb sock
  # 4. IPv6, a tiny receive buffer on the server at full speed: the loss is the kernel's socket drops there
  client v6 -c 2001:2::2 --server --remote-rcvbuf 4096 -n 200k -b 0
  rcv=$(line v6 receiver recv)
  lost=$(echo "$rcv" | jq .lost)
  rb=$(echo "$rcv" | jq '.kernel_drops.udp6.RcvbufErrors + .kernel_drops.udp.RcvbufErrors')
  sock=$(echo "$rcv" | jq '.kernel_drops.sockets')
  echo "$rcv" | jq -e '.lost_exact and .unique + .lost == 200000' >/dev/null || fail "v6: not exact: $rcv"
  [ "$lost" -gt 0 ] || fail "v6: no loss with a 4096-byte receive buffer at an unlimited rate"
  # the kernel counts its drops (the socket's, RcvbufErrors) in messages; with
  # UDP GSO from us and UDP GRO at the server a message holds up to 128
  # datagrams (UDP_MAX_SEGMENTS), without GSO one, and then the counts are equal
  [ "$sock" = "$rb" ] || fail "v6: the server's socket drops $sock != its RcvbufErrors $rb"
  [ "$rb" -ge 1 ] && [ "$rb" -le "$lost" ] && [ $((rb * 128)) -ge "$lost" ] ||
    fail "v6: lost $lost, but the server's RcvbufErrors is $rb (messages of 1..128 datagrams)"
  echo "ok: IPv6 with --remote-rcvbuf 4096: lost $lost, the server's socket dropped $rb messages (RcvbufErrors $rb)"
}
run_case v6_tiny_rcvbuf

server_after() {
  local n
  # 5. the server is still up (it counts the sessions of all the cases before), served each run as its own session, and cleaned up
  kill -0 "$srv" 2>/dev/null || fail "the server exited"
  n=$(grep -c 'connected' "$tmp/srv.log" || true)
  [ "$n" -eq 5 ] || fail "the server logged $n sessions, expected 5"
  # a session removes its files and exits after its client has its results
  # (the client may be gone first), and the server reaps it within its
  # poll: waited for (bounded), not sampled once at a fixed delay
  no_files() { [ -z "$(find "$tmp/ts" "$tmp/tc" -mindepth 1)" ]; }
  no_children() { [ -z "$(ps --ppid "$srv" -o pid= || true)" ]; }
  wait_for 5 no_files || fail "temporary files left: $(find "$tmp/ts" "$tmp/tc" -mindepth 1)"
  wait_for 5 no_children || fail "the server has children left: $(ps --ppid "$srv" -o pid=,args= || true)"
  kill "$srv"
}
run_case --needs forward,text,reverse,bidir,v6_tiny_rcvbuf server_after
