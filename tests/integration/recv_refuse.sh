#!/usr/bin/env bash
# The receive side: recv refuses what it cannot do, with one
# line naming the reason, instead of reporting 0 received and exiting 0.
# In a network namespace of our own:
#   1. a second recv on a port in use fails (exit 1, "in use", before its -t
#      ends), also with -P 2; with --reuseport on both they share the port;
#      recv's own -P 2 threads still share one port and count every packet
#   2. --summary-file with a bad path: exit 2 before anything starts
#   3. --dev packet: on an interface that is down: exit 1 naming it; one
#      deleted or set down during the run: exit 1 naming it (one interface,
#      and a list of two where the rings are not bound to it)
# Needs root (namespaces, AF_PACKET); exits 77 otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
ns_test rxr


# expect_fail NAME RC PATTERN -- CMD...: CMD exits RC within 5 s, one stderr line matching PATTERN
# (CMD's fd 3 is $tmp/NAME.ready: a recv given --ready-fd 3 says there when it receives)
expect_fail() {
  local name=$1 want=$2 pat=$3; shift 4
  local t0 rc=0
  t0=$(date +%s%N)
  timeout 20 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" 3>"$tmp/$name.ready" || rc=$?
  local ms=$((($(date +%s%N) - t0) / 1000000))
  [ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want: $(cat "$tmp/$name.err")"
  grep -qE "$pat" "$tmp/$name.err" || fail "$name: stderr does not say /$pat/: $(cat "$tmp/$name.err")"
  [ "$ms" -lt 5000 ] || fail "$name: took $ms ms to fail"
  echo "ok: $name: exit $rc: $(head -n1 "$tmp/$name.err")"
}

# once NAME's recv is ready: CMD... (in the background)
when_ready() {
  local name=$1
  shift
  rm -f "$tmp/$name.ready"
  (wait_for 20 grep -qsx ready "$tmp/$name.ready" && "$@") &
}

# veths NAME...: fresh veth pairs NAME0/NAME1 (e.g. v: v0, v1), up unless DOWN=1
veths() {
  local n
  for n in "$@"; do
    ip -n "$NS" link del "${n}0" 2>/dev/null || true
    ip -n "$NS" link add "${n}0" type veth peer name "${n}1" || skip "cannot create a veth pair"
    if [ -z "${DOWN:-}" ]; then ip -n "$NS" link set "${n}0" up; ip -n "$NS" link set "${n}1" up; fi
  done
}

# ---- 1. busy port ----------------------------------------------------------------------
# (the first recv holds the port for the three busy-port cases)
ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT -i 0 -t 20 --ready-fd 3 >"$tmp/first.out" 2>&1 3>"$tmp/first.ready" &
first=$!
wait_ready "$tmp/first.ready" $first
run_case busy_port expect_fail busy-port 1 "port $PORT on 127.0.0.1 is in use.*--reuseport" -- ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT -i 0 -t 10
run_case busy_port_wildcard_P2 expect_fail busy-port-wildcard-P2 1 "port $PORT on \* is in use" -- ip netns exec "$NS" "$TXS" recv -p $PORT -P 2 -i 0 -t 10
run_case busy_port_reuseport_one_side expect_fail busy-port-reuseport-one-side 1 "does not share it" -- ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT --reuseport -i 0 -t 10
kill "$first"; wait "$first" 2>/dev/null || true

# sharing on request: two recv --reuseport at once, each gets a share
reuseport_share() {
  local k r1 r2 share1 share2
  for k in 1 2; do
    ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT --reuseport -i 0 -J -t 20 --idle 1 --ready-fd 3 \
      >"$tmp/share$k.json" 2>"$tmp/share$k.err" 3>"$tmp/share$k.ready" &
    eval "share$k=\$!"
  done
  wait_ready "$tmp/share1.ready" "$share1"
  wait_ready "$tmp/share2.ready" "$share2"
  ip netns exec "$NS" "$TXS" send --dev udp -p $PORT -P 4 -n 4000 -b 5kpps -i 0 127.0.0.1 >"$tmp/share.send" 2>&1 ||
    fail "share: send: $(cat "$tmp/share.send")"
  wait "$share1" || fail "share: recv 1 exited $?: $(cat "$tmp/share1.err")"
  wait "$share2" || fail "share: recv 2 exited $?: $(cat "$tmp/share2.err")"
  r1=$(tail -n1 "$tmp/share1.json" | jq .received)
  r2=$(tail -n1 "$tmp/share2.json" | jq .received)
  [ $((r1 + r2)) -eq 4000 ] || fail "share: $r1 + $r2 received, 4000 sent"
  echo "ok: two recv --reuseport share the port: $r1 + $r2 = 4000"
}
run_case reuseport_share

# recv's own threads share one port
threads_share() {
  local p2
  ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT -P 2 -i 0 -J -t 20 --idle 1 --ready-fd 3 \
    >"$tmp/p2.json" 2>"$tmp/p2.err" 3>"$tmp/p2.ready" &
  p2=$!
  wait_ready "$tmp/p2.ready" $p2
  ip netns exec "$NS" "$TXS" send --dev udp -p $PORT -P 4 -n 4000 -b 5kpps -i 0 127.0.0.1 >"$tmp/p2.send" 2>&1 || fail "-P 2: send: $(cat "$tmp/p2.send")"
  wait "$p2" || fail "-P 2: recv exited $?: $(cat "$tmp/p2.err")"
  [ "$(tail -n1 "$tmp/p2.json" | jq .received)" = 4000 ] || fail "-P 2: $(tail -n1 "$tmp/p2.json" | jq -c '{received, lost}')"
  echo "ok: recv -P 2 (SO_REUSEPORT among its own threads): 4000 of 4000"
}
run_case threads_share

# ---- 1b. a sender summary left by an earlier run is not this run's ---------------------
# (it would stop recv at once and make "exact" loss against the wrong sender)
stale_sender_summary() {
  local rp rc got
  ip netns exec "$NS" "$TXS" send --dev udp -n 300 -p $PORT -i 0 --summary-file "$tmp/stale.json" 127.0.0.1 >/dev/null 2>&1 || true
  sleep 0.05
  # (the summary it waits for never comes: -t 3 ends it, not the 5 s it
  # would wait for one beyond its idle time)
  ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT -i 0 -J -t 3 --idle 1 --sender-summary "$tmp/stale.json" \
    --ready-fd 3 >"$tmp/stale.out" 2>"$tmp/stale.err" 3>"$tmp/stale.ready" &
  rp=$!
  wait_ready "$tmp/stale.ready" $rp
  ip netns exec "$NS" "$TXS" send --dev udp -n 1000 -b 20kpps -p $PORT -i 0 127.0.0.1 >/dev/null 2>&1
  rc=0; wait "$rp" || rc=$?
  got=$(tail -n1 "$tmp/stale.out" | jq -r .received)
  [ "$rc" = 1 ] && [ "$got" = 1000 ] && grep -q "written before this recv started" "$tmp/stale.err" ||
    fail "stale sender summary: exit $rc, received $got: $(cat "$tmp/stale.err")"
  echo "ok: a stale --sender-summary is refused (exit 1, all 1000 received, not stopped early): $(head -n1 "$tmp/stale.err")"
}
run_case stale_sender_summary

# ---- 2. --summary-file -------------------------------------------------------------------
summary_file_bad_path() {
  expect_fail summary-file-bad-path 2 "bad value for --summary-file: '/nonexistent/dir/s.json'" -- \
    ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT -i 0 -t 10 --summary-file /nonexistent/dir/s.json
  [ ! -s "$tmp/summary-file-bad-path.out" ] || fail "summary-file-bad-path: recv started: $(cat "$tmp/summary-file-bad-path.out")"
}
run_case summary_file_bad_path

# ---- 3. packet: on a down / deleted interface -------------------------------------------
# (each case makes its veths afresh; the change comes once recv is receiving)
packet_down() {
  DOWN=1 veths v
  expect_fail packet-down 1 "packet:v0: interface 'v0' is down" -- ip netns exec "$NS" "$TXS" recv --dev packet:v0 -i 0 -t 10
}
run_case packet_down
packet_set_down() {
  veths v
  when_ready packet-set-down ip -n "$NS" link set v0 down
  expect_fail packet-set-down 1 "packet:v0: interface 'v0' is down" -- ip netns exec "$NS" "$TXS" recv --dev packet:v0 -i 0 -t 10 --ready-fd 3
}
run_case packet_set_down
packet_deleted() {
  veths v
  when_ready packet-deleted ip -n "$NS" link del v0
  expect_fail packet-deleted 1 "packet:v0: interface 'v0' no longer exists" -- ip netns exec "$NS" "$TXS" recv --dev packet:v0 -i 0 -t 10 --ready-fd 3
}
run_case packet_deleted
packet_list_deleted() {
  veths v w
  when_ready packet-list-deleted ip -n "$NS" link del w0
  expect_fail packet-list-deleted 1 "packet:v0,w0: interface 'w0' no longer exists" -- ip netns exec "$NS" "$TXS" recv --dev packet:v0,w0 -i 0 -t 10 --ready-fd 3
}
run_case packet_list_deleted
# still a summary, JSON included, before the error line
packet_json_summary() {
  local rc=0
  veths v
  when_ready pj ip -n "$NS" link del v0
  ip netns exec "$NS" timeout 20 "$TXS" recv --dev packet:v0 -i 0 -t 10 -J --ready-fd 3 >"$tmp/pj.json" 2>"$tmp/pj.err" 3>"$tmp/pj.ready" || rc=$?
  [ "$rc" = 1 ] || fail "packet -J: exit $rc"
  tail -n1 "$tmp/pj.json" | jq -e '.type == "summary"' >/dev/null || fail "packet -J: no summary"
  echo "ok: packet -J on a deleted interface: exit 1 with a summary"
}
run_case packet_json_summary
