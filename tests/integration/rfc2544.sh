#!/usr/bin/env bash
# txscale rfc2544 through a router namespace whose egress tbf is the device
# under test. Three namespaces: $S (sender, 198.18.0.1, 2001:2:0:1::1), $R
# (ip_forward, 198.18.0.254 | 198.19.0.254, a tbf on its interface towards
# the receiver), $D (receiver, 198.19.0.1, 2001:2:0:2::1). The tbf's rate r
# (bits/s), bucket b and queue limit q (bytes) fix the truth (a veth carries
# no FCS, so the tbf counts L = frame - 4 bytes per frame), for trials of s
# seconds:
#   throughput    T_s = r / (8 L) + (b + q) / (L s)          frames/s (the bucket and the queue
#                                                            pass on top of the rate in a trial)
#   frame loss    1 - T_s / offered                          at offered > T_s, else 0
#   back-to-back  (b + q) / (L (1 - r / (8 L) / burst_fps))  frames (the bucket, the queue, and
#                                                            what drains while the burst arrives)
# Each test gets the tbf that makes its figure clear on a slow shared sender
# (top rates of ~40-150k frames/s here): 10 Mbit/s for throughput, 5 Mbit/s
# for frame loss (many lossy steps), 1 Mbit/s for back-to-back (where the
# burst's rate, which varies from burst to burst, moves the truth least).
#   0. bad input exits 2 naming the value
#   1. throughput, latency at that rate, and the report, at 64, 512 and 1518 bytes (IPv4, local
#      namespaces): each throughput within 5 % of the truth, latency percentiles ordered, report.md,
#      report.html, the CSVs and the PNGs present, their numbers equal the JSON's
#   2. frame loss at 64, 512 and 1518 bytes: from the sender's top rate down in 10 % steps, each
#      step's loss within 3 points of 1 - T_s / offered, ending after two steps without loss
#   3. back-to-back at 64, 512 and 1518 bytes: within 5 % of the truth at the
#      burst's own reported rate
#   4. SIGINT mid-run: exit 130, the result of what ran (complete: false), no
#      child left, temporary files removed
#   5. --remote: a txscale server in $D, throughput (a PDR: --loss 0.5) at 1518 bytes over IPv6
#      within 5 % of T_s / (1 - 0.005)
# Run time about 3-4 minutes (short trials, few sizes). Needs root, jq, tc and gnuplot; exits 77
# with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"

need_txs

refused() { txs_refuses "$1" rfc2544 "${@:2}"; }
bad_input() {
  refused "--sizes" --sizes 63 198.18.0.2
  refused "--sizes" --sizes 64,64 198.18.0.2
  refused "--tests" --tests throughput,jitter 198.18.0.2
  refused "--search-trial" --trial 1 --search-trial 2 198.18.0.2
  refused "--precision" --precision 0 198.18.0.2
  refused "--hi" --lo 100kpps --hi 50kpps 198.18.0.2
  refused "--loss" --loss 100 198.18.0.2
  refused "--repeat" --repeat 0 198.18.0.2
  refused "--b2b-max" --b2b-max 1 198.18.0.2
  # before the first trial, not after the suite: a report directory that cannot be made or written
  refused "--report: '/proc/nope'" --report /proc/nope 198.18.0.2
  : >"$tmp/afile"
  refused "not a directory" --report "$tmp/afile" 198.18.0.2
  refused "destination" --trial 1
  refused "nowhere" nowhere
  refused "rfc2544: bad value for --remote" --remote nowhere
  refused "rfc2544: DEST '198.18.0.3'" --remote 198.18.0.2 198.18.0.3
  refused "--recv-netns" --remote 198.18.0.2 --recv-netns x
  refused "rfc2544: bad value for --recv-args" --remote 198.18.0.2 --recv-args "--window 64"
  echo "ok: bad input exits 2"
}
run_case bad_input

need_root
need_cmds jq tc bc gnuplot
txs_tmp
T=$(lab_name r2) # the namespaces' prefix
S=$T-s R=$T-r D=$T-d
CLEANUP_HOOKS+=('ip netns del "$S" 2>/dev/null; ip netns del "$R" 2>/dev/null; ip netns del "$D" 2>/dev/null')
for ns in "$S" "$R" "$D"; do
  ip netns del "$ns" 2>/dev/null || true
  ip netns add "$ns" || skip "cannot create namespace $ns"
  ip -n "$ns" link set lo up
done
ip -n "$S" link add s0 type veth peer name r0 netns "$R"
ip -n "$R" link add r1 type veth peer name d0 netns "$D"
for x in "$S s0" "$R r0" "$R r1" "$D d0"; do
  set -- $x
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
  ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.accept_dad=0"
  ip -n "$1" link set "$2" up
done
ip -n "$S" addr add 198.18.0.1/24 dev s0
ip -n "$S" addr add 2001:2:0:1::1/64 dev s0 nodad
ip -n "$R" addr add 198.18.0.254/24 dev r0
ip -n "$R" addr add 2001:2:0:1::fe/64 dev r0 nodad
ip -n "$R" addr add 198.19.0.254/24 dev r1
ip -n "$R" addr add 2001:2:0:2::fe/64 dev r1 nodad
ip -n "$D" addr add 198.19.0.1/24 dev d0
ip -n "$D" addr add 2001:2:0:2::1/64 dev d0 nodad
ip -n "$S" route add 198.19.0.0/24 via 198.18.0.254
ip -n "$S" route add 2001:2:0:2::/64 via 2001:2:0:1::fe
ip -n "$D" route add 198.18.0.0/24 via 198.19.0.254
ip -n "$D" route add 2001:2:0:1::/64 via 2001:2:0:2::fe
ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
mac() { ip -n "$1" -j link show "$2" | jq -r '.[0].address'; }
# static neighbours: no ARP/ND during a trial
ip -n "$S" neigh replace 198.18.0.254 lladdr "$(mac "$R" r0)" dev s0 nud permanent
ip -n "$S" neigh replace 2001:2:0:1::fe lladdr "$(mac "$R" r0)" dev s0 nud permanent
ip -n "$R" neigh replace 198.18.0.1 lladdr "$(mac "$S" s0)" dev r0 nud permanent
ip -n "$R" neigh replace 2001:2:0:1::1 lladdr "$(mac "$S" s0)" dev r0 nud permanent
ip -n "$R" neigh replace 198.19.0.1 lladdr "$(mac "$D" d0)" dev r1 nud permanent
ip -n "$R" neigh replace 2001:2:0:2::1 lladdr "$(mac "$D" d0)" dev r1 nud permanent
ip -n "$D" neigh replace 198.19.0.254 lladdr "$(mac "$R" r1)" dev d0 nud permanent
ip -n "$D" neigh replace 2001:2:0:2::fe lladdr "$(mac "$R" r1)" dev d0 nud permanent

# dut RATE BURST LIMIT: the device under test: rate in bits/s, bucket and queue in bytes
dut() { RATE=$1 BUCKET=$2 QUEUE=$3; tc -n "$R" qdisc replace dev r1 root tbf rate "${1}bit" burst "$2" limit "$3"; }
# truth FRAME SECONDS: T_s above, for the tbf dut set
truth() { echo "$RATE / (($1 - 4) * 8) + ($BUCKET + $QUEUE) / (($1 - 4) * $2)" | bc -l; }
# within GOT WANT PCT: |GOT - WANT| <= PCT % of WANT
within() { jq -e -n "($1 - $2) | fabs <= $2 * $3 / 100" >/dev/null; }
mkdir -p "$tmp/t"
# rfc NAME [options]: rfc2544 from $S, receiver in $D, JSON lines into $tmp/NAME.json
# --settle 0.1: the buckets below refill within 55 ms (back-to-back's 1 Mbit/s one needs 0.3 s)
COMMON=(--dev udp:gso=off --trial 2 --search-trial 0.5 --settle 0.1 --precision 2 --repeat 1 --latency-trials 1
  --recv-args "--rcvbuf 33554432")
rfc() {
  local name=$1; shift
  TMPDIR=$tmp/t timeout 400 "$TXS" rfc2544 --send-netns "$S" --recv-netns "$D" "${COMMON[@]}" -J "$@" \
    >"$tmp/$name.json" 2>"$tmp/$name.err" || fail "$name: exit $?: $(cat "$tmp/$name.err")"
  tail -n1 "$tmp/$name.json" | jq -e '.type == "result" and .kind == "rfc2544" and .complete' >/dev/null ||
    fail "$name: no complete result: $(tail -n1 "$tmp/$name.json")"
  [ -z "$(ls -A "$tmp/t")" ] || fail "$name: temporary files left: $(ls "$tmp/t")"
  # every trial exact: sent = received + lost
  jq -e -s '[.[] | select(.type == "trial")] | length > 0 and all(.sent == .received + .lost)' \
    "$tmp/$name.json" >/dev/null || fail "$name: a trial's counts do not add up"
}
res() { tail -n1 "$tmp/$1.json" | jq -r "$2"; }

throughput_latency_report() {
  # 10 Mbit/s: 21k 64-byte frames/s, well below this sender's top rate (~45k frames/s without GSO
  # through the router on the loaded 2-core VM: a sender near its limit paces unevenly); 32 KiB of
  # bucket and of queue: 26 ms of a stalled sender at 512 bytes (16 KiB: one run 18 % low)
  dut 10000000 32768 32768
  rfc tput --sizes 64,512,1518 --tests throughput,latency --report "$tmp/rep" 198.19.0.1
  local size got want
  for size in 64 512 1518; do
    got=$(res tput ".throughput[] | select(.size == $size) | .fps")
    want=$(truth $size 2)
    if ! within "$got" "$want" 5; then
      # a sender held off its CPU past the bucket's 26 ms bursts what came due and loses frames
      # the device would have taken (a CI run beside six busy builds: 2111 of 2525 at 512 bytes):
      # the search for that size once more, judged the same way
      echo "    throughput at $size bytes: $got fps, the tbf's truth $(printf %.0f "$want"): once more" >&2
      rfc "tput$size" --sizes $size --tests throughput 198.19.0.1
      local again
      again=$(res "tput$size" ".throughput[] | select(.size == $size) | .fps")
      within "$again" "$want" 5 || fail "throughput at $size bytes: $got, then $again fps; the tbf's truth $want"
      ok "throughput at $size bytes: $again fps on the second search (tbf truth $(printf %.0f "$want"))"
    else
      ok "throughput at $size bytes: $got fps (tbf truth $(printf %.0f "$want"))"
    fi
    res tput ".throughput[] | select(.size == $size) | .latency_ns" |
      jq -e '.count > 0 and .min <= .p50 and .p50 <= .p90 and .p90 <= .p99 and .p99 <= ."p99.9" and ."p99.9" <= .max' >/dev/null ||
      fail "latency at $size: $(res tput ".throughput[] | select(.size == $size) | .latency_ns")"
    [ "$(res tput ".throughput[] | select(.size == $size) | .bits")" = \
      "$(jq -n "$got * $size * 8")" ] || fail "bits at $size is not fps x frame bits"
  done
  # the latency trials ran at the throughput rate
  jq -e -s --argjson t "$(res tput '[.throughput[] | {key: (.size | tostring), value: .fps}] | from_entries')" \
    '[.[] | select(.type == "trial" and .test == "latency")] | length == 3 and all(.rate == $t[.size | tostring])' \
    "$tmp/tput.json" >/dev/null || fail "latency trials not at the throughput rates"
  # the report: its files, and its numbers are the JSON's
  local f
  for f in report.md report.html result.json throughput.csv throughput.png latency.png; do
    [ -s "$tmp/rep/$f" ] || fail "report: no $f"
  done
  file "$tmp/rep/throughput.png" 2>/dev/null | grep -q PNG || head -c 8 "$tmp/rep/throughput.png" | grep -q PNG ||
    fail "throughput.png is not a PNG"
  jq -e -s --slurpfile r "$tmp/rep/result.json" '(last | del(.seconds)) == ($r[0] | del(.seconds))' \
    "$tmp/tput.json" >/dev/null || fail "report's result.json differs from the result line"
  for size in 64 512 1518; do
    got=$(res tput ".throughput[] | select(.size == $size) | .fps")
    awk -F, -v s=$size -v f="$got" '$1 == s { found = 1; if ($3 != f) exit 1 } END { exit !found }' \
      "$tmp/rep/throughput.csv" || fail "throughput.csv at $size: not $got"
    grep -q "^| $size | $got |" "$tmp/rep/report.md" || fail "report.md has no row '| $size | $got |'"
    grep -q "<td>$size</td><td>$got</td>" "$tmp/rep/report.html" || fail "report.html has no row for $size: $got"
  done
  ok "report: files present, numbers equal to the JSON"
}
run_case throughput_latency_report

frame_loss() {
  dut 5000000 8192 8192
  rfc floss --sizes 64,512,1518 --tests frame-loss --trial 0.5 198.19.0.1
  local k size want n last2 top
  for k in 0 1 2; do
    size=$(res floss ".frame_loss[$k].size")
    want=$(truth "$size" 0.5)
    n=$(res floss ".frame_loss[$k].points | length")
    [ "$n" -ge 2 ] || fail "frame loss at $size: $n steps"
    res floss ".frame_loss[$k].points[]" | jq -c . >"$tmp/points"
    local i=0
    top=$(res floss ".frame_loss[$k].top_fps")
    while read -r p; do
      local off sent loss exp
      off=$(jq .offered_fps <<<"$p")
      sent=$(jq .sent_fps <<<"$p") # what the sender reached: the truth's offered load
      loss=$(jq .loss_pct <<<"$p")
      jq -e -n "$off == ($top * (100 - 10 * $i) / 100 | floor)" >/dev/null || fail "$size: step $i offered $off, top $top"
      exp=$(jq -n "if $sent > $want then (1 - $want / $sent) * 100 else 0 end")
      jq -e -n "($loss - $exp) | fabs <= 3" >/dev/null ||
        fail "$size: step $i at $off fps (sent $sent): loss $loss %, truth $exp %"
      echo "$size bytes, step $i: offered $off fps, sent $sent fps, loss $loss % (truth $(printf %.2f "$exp") %)"
      i=$((i + 1))
    done <"$tmp/points"
    last2=$(res floss "[.frame_loss[$k].points[-2:][] | .lost] | add")
    [ "$n" -eq 10 ] || [ "$last2" = 0 ] || fail "frame loss at $size ended after $n steps with loss in the last two"
    ok "frame loss at $size bytes: $n steps from $top fps, each within 3 points of 1 - $(printf %.0f "$want") / offered"
  done
}
run_case frame_loss

back_to_back() {
  local size got fps want
  dut 1000000 32768 32768
  rfc b2b --sizes 64,512,1518 --tests back-to-back --b2b-trials 2 --b2b-max 5000 --settle 0.3 198.19.0.1
  for size in 64 512 1518; do
    got=$(res b2b ".back_to_back[] | select(.size == $size) | .frames")
    fps=$(res b2b ".back_to_back[] | select(.size == $size) | .burst_fps")
    want=$(echo "($BUCKET + $QUEUE) / (($size - 4) * (1 - $RATE / (($size - 4) * 8) / $fps))" | bc -l)
    [ "$(res b2b ".back_to_back[] | select(.size == $size) | .trials | length")" = 2 ] || fail "b2b at $size: not 2 searches"
    within "$got" "$want" 5 || fail "back-to-back at $size bytes: $got frames at $fps fps, the tbf's truth $want"
    ok "back-to-back at $size bytes: $got frames at $fps fps (truth $(printf %.1f "$want"))"
  done
}
run_case back_to_back

interrupted() {
  dut 20000000 32768 32768
  TMPDIR=$tmp/t "$TXS" rfc2544 --send-netns "$S" --recv-netns "$D" "${COMMON[@]}" --sizes 64 --tests throughput -J \
    198.19.0.1 >"$tmp/int.json" 2>"$tmp/int.err" &
  local pid=$! rc=0
  sleep 3
  kill -INT $pid
  wait $pid || rc=$?
  [ $rc = 130 ] || fail "exit $rc after SIGINT, expected 130: $(cat "$tmp/int.err")"
  grep -q "interrupted after" "$tmp/int.err" || fail "no 'interrupted' line: $(cat "$tmp/int.err")"
  # what ran is summed up, marked incomplete
  tail -n1 "$tmp/int.json" | jq -e '.type == "result" and .complete == false' >/dev/null ||
    fail "no incomplete result line after SIGINT: $(tail -n1 "$tmp/int.json")"
  ! pgrep -f -- "$tmp/t/" >/dev/null || fail "children left: $(pgrep -af -- "$tmp/t/")"
  [ -z "$(ls -A "$tmp/t")" ] || fail "temporary files left: $(ls "$tmp/t")"
  ok "SIGINT: exit 130, an incomplete result, no child and no temporary file left"
}
run_case interrupted

remote_v6() {
  # a larger bucket and queue, and a partial drop rate of 0.5 %: a sender stalled for 50 ms on a
  # loaded shared machine bursts what came due, and loses a few frames in a 2 s trial
  dut 20000000 65536 65536
  ip netns exec "$D" "$TXS" server -B 2001:2:0:2::1 >"$tmp/srv.log" 2>&1 &
  B=$D wait_for 20 listens || fail "the server does not listen: $(cat "$tmp/srv.log")"
  TMPDIR=$tmp/t timeout 300 ip netns exec "$S" "$TXS" rfc2544 --remote 2001:2:0:2::1 "${COMMON[@]}" \
    --sizes 1518 --tests throughput --loss 0.5 -J >"$tmp/rem.json" 2>"$tmp/rem.err" || fail "remote: exit $?: $(cat "$tmp/rem.err")"
  local got want
  got=$(res rem '.throughput[0].fps')
  want=$(echo "$(truth 1518 2) / (1 - 0.005)" | bc -l) # PDR: the loss tolerated passes on top
  [ "$(res rem '.throughput[0].payload')" = 1452 ] || fail "remote: payload $(res rem '.throughput[0].payload'), want 1452 (IPv6)"
  within "$got" "$want" 5 || fail "remote throughput at 1518 bytes over IPv6: $got fps, truth $want"
  ok "remote (server in $D), IPv6, 1518 bytes: $got fps (truth $(printf %.0f "$want"))"
}
run_case remote_v6
