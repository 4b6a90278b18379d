#!/usr/bin/env bash
# Per-datagram send timestamps checked by the kernel's clock, over
# loopback (no root): recv --rx-timestamps kernel times each datagram with
# the kernel's software receive stamp, taken after the datagram was sent.
#   --timestamps packet and interp, paced (100k/s: bursts of one or two) and
#   unpaced (full bursts of 32): every datagram received, none stamped after
#   its arrival (skew_future 0, negative 0: a TSC base taken across a
#   preemption once put stamps 12 us into the future), all in the histogram.
#   interp: send's summary reports its check (timestamp_check.bursts > 0, a
#   positive step, p50 of the error under 1 us); burst and packet runs have
#   no timestamp_check.
#   interp and packet give each datagram of a burst its own stamp: over a
#   pcap: capture of an unpaced run, (nearly) every datagram has a stamp of
#   its own (burst mode: one per burst of 32).
#   a bad mode is refused, exit 2, naming it.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_cmd jq "needs jq (scripts/deps test)"
need_cmd tshark "needs tshark (scripts/deps test)"
need_txs
PORT=$(free_port)
txs_tmp

exact_refused() {
  local out rc=0
  out=$("$TXS" send --dev dummy --timestamps exact -n 1 198.18.0.2 2>&1) || rc=$?
  [ $rc = 2 ] && grep -q "'exact'" <<<"$out" || fail "--timestamps exact: exit $rc: $out"
  echo "ok: --timestamps exact refused (exit 2)"
}
run_case exact_refused

# tstamp_run NAME MODE SEND-ARGS...
tstamp_run() {
  local name=$1 mode=$2
  shift 2
  "$TXS" recv -B 127.0.0.1 -p "$PORT" --rx-timestamps kernel -J -i 0 --idle 1 -t 60 --ready-fd 3 >"$tmp/$name.json" \
    2>"$tmp/$name.err" 3>"$tmp/$name.ready" &
  local rpid=$!
  wait_ready "$tmp/$name.ready" $rpid
  "$TXS" send --dev udp -B 127.0.0.1 127.0.0.1 -p "$PORT" -i 0 -l 32 --timestamps "$mode" -J "$@" \
    >"$tmp/$name.send" 2>"$tmp/$name.serr" || fail "$name: send: $(cat "$tmp/$name.serr")"
  wait "$rpid" || fail "$name: recv exited $?: $(cat "$tmp/$name.err")"
  R=$(tail -n1 "$tmp/$name.json")
  S=$(tail -n1 "$tmp/$name.send")
}
j() { printf '%s\n' "$R" | jq -r "$1"; }
js() { printf '%s\n' "$S" | jq -r "$1"; }

kernel_clock() { # MODE PACE
  local mode=$1 pace=$2 n got chk
  # shellcheck disable=SC2086
  tstamp_run "$mode" "$mode" $pace
  n=${pace##* }
  got=$(j .received)
  # unpaced into a loopback socket the kernel may drop: count what arrived
  [ "$got" -ge $((n * 9 / 10)) ] || fail "$mode $pace: received $got of $n"
  [ "$(j .latency_ns.skew_future)" = 0 ] || fail "$mode $pace: $(j .latency_ns.skew_future) datagrams stamped after their arrival"
  [ "$(j .latency_ns.negative)" = 0 ] || fail "$mode $pace: $(j .latency_ns.negative) negative latencies"
  [ "$(j .latency_ns.count)" = "$got" ] || fail "$mode $pace: $(j .latency_ns.count) in the histogram of $got"
  if [ "$mode" = interp ]; then
    [ "$(js '.timestamp_check.bursts > 0 and .timestamp_check.step_ns > 0 and .timestamp_check.err_p50_below_ns <= 1024')" = true ] ||
      fail "$mode $pace: timestamp_check $(js -c .timestamp_check)"
    chk=" (check: $(js '.timestamp_check | "\(.bursts) bursts, p50 < \(.err_p50_below_ns) ns, max \(.err_max_ns) ns"'))"
  else
    [ "$(js .timestamp_check)" = null ] || fail "$mode: a timestamp_check in a packet run"
    chk=
  fi
  echo "ok: $mode $pace: $got received, none from the future, p50 latency $(j .latency_ns.p50) ns$chk"
}
# (paced with --df: IPv4 GSO needs DF, and GSO calls carry most datagrams
# at 100k; unpaced with --gso off: GSO sends several times faster than one
# recv thread reads on a loaded 2-core box, and most would be dropped at
# its socket)
for mode in packet interp; do
  run_case "${mode}_paced" kernel_clock $mode "--df -b 100kpps -n 100000"
  run_case "${mode}_unpaced" kernel_clock $mode "--gso off -n 200000"
done

# stamps per datagram inside a burst, read back from the frames (payload
# header: seq at +8, ts at +16 of the UDP payload; -l 32 = full header)
stamps() {
  "$TXS" send --dev "pcap:$tmp/$1.pcap" -n 3200 -i 0 -l 32 --timestamps "$1" 198.18.0.2 >/dev/null
  tshark -r "$tmp/$1.pcap" -T fields -e data.data 2>/dev/null | cut -c33-48 >"$tmp/$1.ts"
  [ "$(wc -l <"$tmp/$1.ts")" = 3200 ] || fail "$1: $(wc -l <"$tmp/$1.ts") frames read back"
  sort -u "$tmp/$1.ts" | wc -l
}
distinct_stamps() {
  local db dp di
  db=$(stamps burst)
  dp=$(stamps packet)
  di=$(stamps interp)
  # burst: one stamp per device burst of up to 32 (100 and more: a few short bursts)
  [ "$db" -le 250 ] || fail "burst: $db distinct stamps in 3200 datagrams"
  [ "$dp" -ge 3100 ] || fail "packet: only $dp distinct stamps in 3200 datagrams"
  [ "$di" -ge 3100 ] || fail "interp: only $di distinct stamps in 3200 datagrams"
  echo "ok: distinct stamps in 3200 datagrams: burst $db, packet $dp, interp $di"
}
run_case distinct_stamps
