#!/usr/bin/env bash
# Outages and loss bursts read by txscale recv, against a capture at the peer
# (dumpcap on "any" in the receiving namespace, read by outage_cap.py):
#   1. a paced stream (10k pps) whose link (the receiver's veth rx0) is set
#      down for 200 ms and back: recv sees one outage, its duration within 5%
#      of the gap in the capture, its missing count the capture's exactly
#   2. the same with two outages of different lengths (120 ms, 300 ms): both,
#      in order, each within 5% and exact
#   3. loss bursts made by a rate limiter (tc tbf on the sender's veth): the
#      burst-length distribution recv reports equals the capture's holes
#      (sender starts at 0, its count gives the tail; tbf's drops are the
#      sender's device drops, seen as holes)
#   4. --clock-offset: latency corrected by the given offset, said so in the
#      text, the raw figures beside it in the JSON
# The capture must hold every datagram recv counted (dumpcap may drop on a
# loaded box: then the case runs again, at most 5 times).
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
PORT=5201
lab_test rout dumpcap tshark python3 tc
ip netns exec "$A" sysctl -qw net.ipv6.conf.tx0.disable_ipv6=1 >/dev/null
CLEANUP_HOOKS+=('ip -n "$B" link set rx0 up 2>/dev/null')

cap_start() {
  ip netns exec "$B" timeout 60 dumpcap -q -B 128 -s 80 -f "udp dst port $PORT" -i any -w "$tmp/$1.pcapng" \
    >"$tmp/$1.dumpcap" 2>&1 &
  CPID=$!
  capturing "$tmp/$1.dumpcap" && return 0
  fail "$1: dumpcap did not start: $(cat "$tmp/$1.dumpcap")"
}

cap_stop() { capture_end "$CPID"; }

# cap_read NAME [outage_cap.py args]: the capture's outages and bursts as JSON
cap_read() {
  local name=$1
  shift
  tshark -r "$tmp/$name.pcapng" -Y "udp.dstport == $PORT" -T fields -e frame.time_epoch -e udp.payload 2>/dev/null |
    python3 "$SRC/tests/integration/outage_cap.py" "$@" >"$tmp/$name.cap.json"
}

rx0() { ip netns exec "$B" cat /sys/class/net/rx0/statistics/rx_packets; }
# outage_run NAME N RATE "RECV ARGS" ACTION: recv in B, capture, send N at RATE in A,
# ACTION (a shell function) while it runs, once 2000 datagrams reached rx0 and 0.6 s more
# (recv ends 1 s after its last datagram: the longest silence in a run is a
# flap's 0.3 s, and one over 0.5 s fails the case anyway)
outage_run() {
  local name=$1 n=$2 rate=$3 rargs=$4 action=$5 r0
  # shellcheck disable=SC2086
  ip netns exec "$B" "$TXS" recv -B 198.18.0.2 -p $PORT -i 0 -J --idle 1 -t 60 $rargs \
    --sender-summary "$tmp/$name.send.json" --ready-fd 3 >"$tmp/$name.recv.json" 2>"$tmp/$name.recv.err" 3>"$tmp/$name.ready" &
  local rpid=$!
  wait_ready "$tmp/$name.ready" $rpid
  cap_start "$name"
  r0=$(rx0)
  # --no-df: one datagram per frame (IPv4 GSO is the udp device's default),
  # so the capture holds each datagram at its own arrival time
  ip netns exec "$A" timeout 60 "$TXS" send --dev udp --no-df -i 0 -b "${rate}pps" -n "$n" -l 32 -p $PORT -B 198.18.0.1 \
    --summary-file "$tmp/$name.send.json" 198.18.0.2 >"$tmp/$name.send.out" 2>&1 &
  local spid=$!
  # the sender is under way (it may start late on a loaded box), then a while more
  under_way() { [ $(($(rx0) - r0)) -ge $((n < 2000 ? n : 2000)) ]; }
  wait_for 10 under_way || true
  sleep 0.6
  $action
  wait "$spid" || fail "$name: send: $(cat "$tmp/$name.send.out")"
  wait "$rpid" || fail "$name: recv exited: $(cat "$tmp/$name.recv.err")"
  cap_stop
  R=$tmp/$name.recv.json
  tail -n1 "$R" | jq -e '.type == "summary" and .kind == "recv"' >/dev/null || fail "$name: no recv summary"
}
nothing() { :; }

flap() { # seconds down, one after another, 0.6 s apart
  for d in "${FLAPS[@]}"; do
    ip -n "$B" link set rx0 down
    sleep "$d"
    ip -n "$B" link set rx0 up
    sleep 0.6
  done
}

# cap_complete NAME: the capture holds every datagram recv counted
cap_complete() {
  local frames
  frames=$(jq -r .frames "$tmp/$1.cap.json")
  [ "$frames" = "$(rj .received)" ]
}

# 1 and 2: outages from link flaps
flaps_case() {
  local name=$1
  shift
  FLAPS=("$@")
  local try
  for try in 1 2 3 4 5; do
    outage_run "$name" 40000 10k "" flap
    cap_read "$name" --min-ms 20
    if ! cap_complete "$name"; then
      echo "   $name try $try: capture holds $(jq -r .frames "$tmp/$name.cap.json") of $(rj .received) datagrams: again"
      continue
    fi
    local C=$tmp/$name.cap.json nc
    nc=$(jq '.gaps | length' "$C")
    [ "$nc" = ${#FLAPS[@]} ] || fail "$name: capture shows $nc silences with loss over 20 ms, want ${#FLAPS[@]}: $(jq -c .gaps "$C")"
    [ "$(rj .outage.count)" = ${#FLAPS[@]} ] ||
      fail "$name: recv outage count $(rj .outage.count), want ${#FLAPS[@]}: $(tail -n1 "$R" | jq -c .outage)"
    local i
    for ((i = 0; i < ${#FLAPS[@]}; i++)); do
      local cms cmiss rns rmiss
      cms=$(jq -r ".gaps[$i].ms" "$C") cmiss=$(jq -r ".gaps[$i].missing" "$C")
      rns=$(rj ".outage.events[$i].duration_ns") rmiss=$(rj ".outage.events[$i].missing")
      awk -v c="$cms" -v r="$rns" 'BEGIN { d = r / 1e6 - c; if (d < 0) d = -d; exit !(d <= 0.05 * c) }' ||
        fail "$name: outage $((i + 1)): recv $rns ns, capture $cms ms: more than 5% apart"
      [ "$rmiss" = "$cmiss" ] || fail "$name: outage $((i + 1)): recv $rmiss missing, capture $cmiss"
      awk -v c="$cms" -v d="${FLAPS[$i]}" 'BEGIN { exit !(c >= d * 1000 * 0.9 && c <= d * 1000 + 200) }' ||
        fail "$name: outage $((i + 1)): capture gap $cms ms for a ${FLAPS[$i]} s flap"
      echo "   $name: outage $((i + 1)) (link down ${FLAPS[$i]} s): recv $(awk -v r="$rns" 'BEGIN { printf "%.3f", r / 1e6 }') ms," \
        "$rmiss missing; capture $cms ms, $cmiss missing"
    done
    # the longest is the longest of them, with its ends
    local lc
    lc=$(jq -r '[.gaps[] | .ms] | max' "$C")
    awk -v c="$lc" -v r="$(rj .outage.longest_ns)" 'BEGIN { d = r / 1e6 - c; if (d < 0) d = -d; exit !(d <= 0.05 * c) }' ||
      fail "$name: longest $(rj .outage.longest_ns) ns vs capture $lc ms"
    [ "$(rj .outage.longest_missing)" = "$(jq -r '.gaps | max_by(.ms) | .missing' "$C")" ] ||
      fail "$name: longest_missing $(rj .outage.longest_missing) vs capture $(jq -c '.gaps | max_by(.ms)' "$C")"
    [ "$(rj '.outage.longest.after_seq - .outage.longest.before_seq - 1')" = "$(rj .outage.longest_missing)" ] ||
      fail "$name: longest's ends $(rj -c .outage.longest) do not hold its missing count"
    # the longest's wall-clock start is the capture's last frame before it (same host clock)
    awk -v c="$(jq -r '.gaps | max_by(.ms) | .start' "$C")" -v r="$(rj .outage.longest_start)" \
      'BEGIN { d = r / 1e9 - c; if (d < 0) d = -d; exit !(d < 0.002) }' ||
      fail "$name: longest_start $(rj .outage.longest_start) vs capture $(jq -r '.gaps | max_by(.ms) | .start' "$C")"
    # every sequence missing was missing in an outage (the sender counts
    # those its device refused apart: they are not "lost")
    [ "$(rj '.flows[0].span - .flows[0].unique')" = "$(rj .outage.missing)" ] ||
      fail "$name: holes $(rj '.flows[0].span - .flows[0].unique') != missing in outages $(rj .outage.missing)"
    [ "$(rj .outage.burst_lost)" = "$(rj .outage.missing)" ] || fail "$name: bursts $(rj .outage.burst_lost) != missing"
    # loss duration = missing / rate: the missing datagrams' time at 10 kpps (within 5%)
    awk -v l="$(rj .outage.loss_duration_ns)" -v m="$(rj .outage.missing)" \
      'BEGIN { t = m * 1e5; d = l - t; if (d < 0) d = -d; exit !(d <= 0.05 * t) }' ||
      fail "$name: loss duration $(rj .outage.loss_duration_ns) ns for $(rj .outage.missing) missing at 10 kpps"
    ok "$name: ${#FLAPS[@]} outage(s), within 5% of the capture, missing exact"
    return 0
  done
  fail "$name: capture incomplete in 5 tries"
}
run_case flap1 flaps_case flap1 0.2
run_case flap2 flaps_case flap2 0.12 0.3

tbf() {
  local done3 N C rb cb
  # 3: loss bursts from a token bucket: 5.9 Mbit/s of 74-byte frames into 2 Mbit/s
  # with a bucket and queue of ~6 frames
  ip netns exec "$A" tc qdisc add dev tx0 root tbf rate 2mbit burst 500 limit 500
  CLEANUP_HOOKS+=('ip netns exec "$A" tc qdisc del dev tx0 root 2>/dev/null')
  done3=0
  for try in 1 2 3 4 5; do
    outage_run tbf 20000 10k "" nothing
    N=$(jq -r .packets "$tmp/tbf.send.json")
    cap_read tbf --from-zero --expect "$N"
    if ! cap_complete tbf; then
      echo "   tbf try $try: capture holds $(jq -r .frames "$tmp/tbf.cap.json") of $(rj .received) datagrams: again"
      continue
    fi
    C=$tmp/tbf.cap.json
    [ "$(jq -r .burst_count "$C")" -ge 100 ] || fail "tbf: only $(jq -r .burst_count "$C") bursts in the capture (tbf dropped too little)"
    rb=$(rj '[.outage.bursts[] | {key: "\(.min)-\(.max)", value: .count}] | from_entries | to_entries | sort_by(.key) | from_entries')
    cb=$(jq -c '.bursts | to_entries | sort_by(.key) | from_entries' "$C")
    [ "$(jq -c . <<<"$rb")" = "$cb" ] || fail "tbf: recv bursts $(jq -c . <<<"$rb") != capture's $cb"
    [ "$(rj .outage.burst_count)" = "$(jq -r .burst_count "$C")" ] || fail "tbf: burst count"
    [ "$(rj .outage.burst_lost)" = "$(rj '.flows[0].span - .flows[0].unique + .lost')" ] ||
      fail "tbf: holes + lost $(rj '.flows[0].span - .flows[0].unique + .lost') != in bursts $(rj .outage.burst_lost)"
    [ "$(rj .outage.burst_lost)" = "$(jq -r .burst_lost "$C")" ] || fail "tbf: burst_lost vs capture"
    [ "$(rj .outage.bursts_exact)" = true ] || fail "tbf: bursts not exact"
    ok "tbf: $(rj .outage.burst_count) loss bursts (longest $(rj .outage.burst_max)), distribution = capture's: $cb"
    done3=1
    break
  done
  [ $done3 = 1 ] || fail "tbf: capture incomplete in 5 tries"
}
run_case tbf

clock() {
  local raw cor rp
  # 4: a known offset: latency corrected (raw + 3 ms: the namespaces share one
  # clock, so the raw one-way latency is the true one), said so
  outage_run clk 1000 1k "--clock-offset -3000000" nothing
  [ "$(rj .clock.corrected)" = true ] && [ "$(rj .clock.offset_ns)" = -3000000 ] && [ "$(rj .clock.source)" = option ] ||
    fail "clock: $(tail -n1 "$R" | jq -c .clock)"
  raw=$(rj .clock.raw_latency_ns.p50) cor=$(rj .latency_ns.p50)
  awk -v r="$raw" -v c="$cor" 'BEGIN { exit !(r >= 0 && r < 5e6 && c - r >= 3e6 * 0.95 && c - r <= 3e6 * 1.05) }' ||
    fail "clock: corrected p50 $cor, raw p50 $raw: not 3 ms apart"
  ip netns exec "$B" "$TXS" recv -B 198.18.0.2 -p $PORT -i 0 --idle 1 -t 30 --clock-offset -3000000 \
    --ready-fd 3 >"$tmp/clk.txt" 2>&1 3>"$tmp/clk.ready" &
  rp=$!
  wait_ready "$tmp/clk.ready" $rp
  ip netns exec "$A" "$TXS" send --dev udp -i 0 -b 1kpps -n 500 -l 32 -p $PORT 198.18.0.2 >/dev/null 2>&1
  wait $rp || fail "clock: text recv: $(cat "$tmp/clk.txt")"
  grep -q "latency CORRECTED by offset -3000000 ns" "$tmp/clk.txt" || fail "clock: the text does not say it corrected: $(cat "$tmp/clk.txt")"
  ok "clock: --clock-offset -3000000: latency p50 $cor ns (raw $raw ns), the text says CORRECTED"
}
run_case clock

