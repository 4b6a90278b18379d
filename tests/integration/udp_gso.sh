#!/usr/bin/env bash
# UDP GSO by default on `send --dev udp`, counted where the datagrams arrive:
# txscale recv in the peer namespace of a veth lab, with the sender's summary
# (--sender-summary), so loss is exact per flow.
#   1. the default (gso=auto; IPv4 with --df) at 1k pps, 100k pps and unpaced, two threads
#      (two flows): received == sent per flow, nothing lost, duplicated or
#      malformed, no kernel drop; the summary's "gso" figures add up
#      (segments + single == packets, segments >= 2 * calls), a paced 1k run
#      sends (almost) one datagram per message and keeps its rate, an
#      unpaced one sends full GSO calls
#   2. --gso off, and IPv4 with --no-df: no GSO call, same exact counts;
#      IPv4 with neither (the kernel socket's default, IP_PMTUDISC_WANT):
#      GSO unpaced, exact, and DF on the wire as a kernel socket sets it
#      (DF within the path MTU, fragments without it above)
#   3. the fallback: a route that refuses UDP GSO (EIO, EINVAL; an LD_PRELOAD
#      shim, since this kernel segments in software where a device cannot),
#      from the start and mid-run: one line on stderr, the summary counts
#      the fallen-back sockets, and still received == sent per flow
#   4. IPv6, default, unpaced
#   5. IPv6, the default sender unpaced into recv with UDP GRO (1M 16-byte
#      datagrams exact, counted from GRO messages), and recv udp:gro=off
# Needs root (namespaces) and jq; exits 77 with the reason otherwise.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
lab_test --later ugso

# the option: auto, off, or a SIZE; bad values and a double setting refused
refused() { # WANT ARGS...: exit 2 and WANT on stderr
  local want=$1 rc=0 out
  shift
  out=$("$TXS" send --dry-run "$@" 2>&1) || rc=$?
  [ $rc = 2 ] && grep -q -- "$want" <<<"$out" || fail "send $*: exit $rc, want 2 and '$want': $out"
}
gso_option() {
  refused "bad value for --gso: 'x'" --gso x --dev udp 127.0.0.1
  refused "bad value for --gso: '-1'" --gso -1 --dev udp 127.0.0.1
  refused "both set GSO" --gso off --dev udp:gso=4 127.0.0.1
  refused "gso=129" --dev udp:gso=129 127.0.0.1
  "$TXS" send --dry-run --gso off --dev udp 127.0.0.1 >/dev/null || fail "--gso off --dev udp refused"
  "$TXS" send --dry-run --gso auto --dev udp:gso=8 127.0.0.1 >/dev/null || fail "--gso auto --dev udp:gso=8 refused"
  grep -q -- "--gso auto|off|SIZE" <<<"$("$TXS" send --help)" || fail "send --help does not show --gso auto|off|SIZE"
  echo "ok: --gso auto|off|SIZE parsed, bad values refused"
}
run_case gso_option


lab_up "$LAB"

# gso_run NAME DST "SEND ARGS": recv in B (exact loss from the sender's
# summary), then send in A; R and S name the two JSON summaries
gso_run() {
  local name=$1 dst=$2 sargs=$3
  ip netns exec "$B" "$TXS" recv -B "$dst" -p 5201 --rcvbuf 67108864 -i 0 -J --idle 1.5 -t 50 \
    --sender-summary "$tmp/$name.send.json" --ready-fd 3 >"$tmp/$name.recv.json" 2>"$tmp/$name.recv.err" 3>"$tmp/$name.ready" &
  local rpid=$!
  wait_ready "$tmp/$name.ready" $rpid
  # shellcheck disable=SC2086
  ip netns exec "$A" timeout 40 "$TXS" send --dev udp -i 0 -p 5201 $sargs --summary-file "$tmp/$name.send.json" \
    "$dst" >"$tmp/$name.send.out" 2>"$tmp/$name.send.err" || fail "$name: send: $(cat "$tmp/$name.send.err")"
  wait "$rpid" || fail "$name: recv exited $?: $(cat "$tmp/$name.recv.err")"
  R="$tmp/$name.recv.json" S="$tmp/$name.send.json"
  tail -n1 "$R" | jq -e '.type == "summary" and .kind == "recv"' >/dev/null || fail "$name: no recv summary"
}

# exact NAME FLOWS: received == sent, per flow and in all, nothing else
exact() {
  local name=$1 flows=$2 sent
  sent=$(sj .packets)
  [ "$sent" -gt 0 ] || fail "$name: sent nothing"
  [ "$(sj .drops)" = 0 ] || fail "$name: the sender dropped $(sj .drops)"
  [ "$(rj .received)" = "$sent" ] || fail "$name: received $(rj .received) != sent $sent (lost $(rj .lost))"
  [ "$(rj .lost_exact)" = true ] || fail "$name: loss not exact"
  if [ "$(rj .lost)" != 0 ] || [ "$(rj .duplicates)" != 0 ] || [ "$(rj .malformed)" != 0 ]; then
    fail "$name: lost $(rj .lost), duplicates $(rj .duplicates), malformed $(rj .malformed)"
  fi
  [ "$(rj .kernel_drops.sockets)" = 0 ] || fail "$name: the kernel dropped $(rj .kernel_drops.sockets) at recv's socket"
  [ "$(rj '.flows | length')" = "$flows" ] || fail "$name: $(rj '.flows | length') flows, want $flows"
  [ "$(rj '[.flows[] | select(.lost != 0 or .duplicates != 0 or .expected != .received)] | length')" = 0 ] ||
    fail "$name: a flow differs: $(rj '[.flows[] | {flow, received, expected, lost}]')"
  # the sender's per-thread rows are the flows' expected counts
  [ "$(rj '[.flows[].expected] | add')" = "$sent" ] || fail "$name: flows expect $(rj '[.flows[].expected] | add'), sent $sent"
  # the summary's calls and segments
  local calls segs single
  calls=$(sj .gso.calls) segs=$(sj .gso.segments) single=$(sj .gso.single)
  [ $((segs + single)) = "$sent" ] || fail "$name: gso segments $segs + single $single != sent $sent"
  [ "$segs" -ge $((2 * calls)) ] || fail "$name: $calls GSO calls carry only $segs segments"
  echo "ok: $name: sent $sent = received, $(rj '.flows | length') flows exact; $calls GSO calls carried $segs, $single single"
}

paced1k() {
  local secs
  # 1. the default at three rates
  gso_run paced1k 198.18.0.2 "--df -n 2000 -b 500pps -P 2 --no-pin"
  exact paced1k 2
  # 1k pps over two threads: 500 per thread, 2 ms apart; a message carries the
  # datagrams due, so nearly all go alone (a preempted thread may catch up with a few)
  [ "$(sj .gso.single)" -ge 1800 ] || fail "paced1k: only $(sj .gso.single) of 2000 datagrams went alone: pacing coalesced"
  secs=$(sj .seconds)
  awk -v s="$secs" 'BEGIN { exit !(s > 1.9 && s < 2.3) }' || fail "paced1k: 2000 datagrams at 1k took $secs s"
  grep -q "gso: .* calls carried" "$tmp/paced1k.send.err" "$tmp/paced1k.send.out" 2>/dev/null ||
    fail "paced1k: no gso line in the text summary"
}
run_case paced1k

paced100k() {
  local secs
  gso_run paced100k 198.18.0.2 "--df -n 100000 -b 50kpps -P 2 --no-pin"
  exact paced100k 2
  secs=$(sj .seconds)
  awk -v s="$secs" 'BEGIN { exit !(s > 0.95 && s < 1.3) }' || fail "paced100k: 100000 datagrams at 100k took $secs s"
}
run_case paced100k

unpaced() {
  gso_run unpaced 198.18.0.2 "--df -n 60000 -P 2 --no-pin"
  exact unpaced 2
  [ "$(sj .gso.max_segments)" -ge 64 ] || fail "unpaced: at most $(sj .gso.max_segments) segments per call"
  [ "$(sj .gso.segments)" -ge 54000 ] || fail "unpaced: only $(sj .gso.segments) of 60000 in GSO calls"
  [ "$(sj .gso.fallbacks)" = 0 ] || fail "unpaced: a fallback on a route that takes GSO"
}
run_case unpaced

off() {
  # 2. --gso off
  gso_run off 198.18.0.2 "--df -n 30000 --gso off"
  exact off 1
  [ "$(sj .gso.calls)" = 0 ] && [ "$(sj .gso.max_segments)" = 0 ] || fail "off: $(sj .gso.calls) GSO calls with --gso off"
}
run_case off

nodf() {
  # IPv4 with --no-df: one datagram per message (GSO would repeat the kernel's
  # IPv4 IDs call after call, which only DF datagrams may carry)
  gso_run nodf 198.18.0.2 "-n 30000 --no-df"
  exact nodf 1
  [ "$(sj .gso.calls)" = 0 ] && [ "$(sj .gso.max_segments)" = 0 ] || fail "nodf: $(sj .gso.calls) GSO calls with --no-df"
}
run_case nodf

v4_default() {
  # IPv4 with neither --df nor --no-df: the kernel socket's default
  # (IP_PMTUDISC_WANT), so GSO applies unpaced, exactly counted
  gso_run v4default 198.18.0.2 "-n 60000 -P 2 --no-pin"
  exact v4default 2
  [ "$(sj .gso.segments)" -ge 54000 ] || fail "v4default: only $(sj .gso.segments) of 60000 in GSO calls"
}
run_case v4_default

# wire_df NAME LEN SEND...: DF, MF and offset of each frame of SEND (3
# datagrams of LEN bytes to port 9) as the peer captures them
wire_df() {
  local name=$1 len=$2 cap
  shift 2
  ip netns exec "$B" timeout 20 dumpcap -q -i rx0 -P -w "$tmp/$name.pcap" -f "ip and dst host 198.18.0.2 and (udp dst port 9 or ip[6:2] & 0x1fff != 0)" \
    -a duration:10 2>"$tmp/$name.cap" &
  cap=$!
  capturing "$tmp/$name.cap" || fail "$name: dumpcap did not start: $(cat "$tmp/$name.cap")"
  ip netns exec "$A" "$@" >"$tmp/$name.log" 2>&1 || fail "$name: send failed: $(tail -2 "$tmp/$name.log")"
  sleep 0.3
  kill -INT $cap 2>/dev/null || true
  wait $cap || true
  tshark -r "$tmp/$name.pcap" -T fields -E separator=, -e ip.flags.df -e ip.flags.mf -e ip.frag_offset -e ip.len \
    >"$tmp/$name.df" 2>/dev/null
  [ -s "$tmp/$name.df" ] || fail "$name: nothing captured"
}

v4_default_wire() {
  # the udp device's IPv4 default on the wire is a kernel socket's: DF on a
  # datagram within the path MTU, fragments without DF above it
  need_cmd tshark
  need_cmd dumpcap
  local KS=${TXS_BUILDDIR:-$SRC/build}/txs_ksend len
  [ -x "$KS" ] || skip "no txs_ksend helper at $KS (build it)"
  # segments cut before the veth, so that the capture sees each datagram of a
  # GSO call as the wire carries it
  need_cmd ethtool
  ip netns exec "$A" ethtool -K tx0 tx-udp-segmentation off >/dev/null 2>&1 || skip "ethtool cannot turn tx-udp-segmentation off"
  CLEANUP_HOOKS+=('ip netns exec "$A" ethtool -K tx0 tx-udp-segmentation on >/dev/null 2>&1')
  # a socket at port 9, so that no ICMP port unreachable refuses the next send
  local rpid
  ip netns exec "$B" "$TXS" recv -B 198.18.0.2 -p 9 --idle 8 -t 30 -i 0 --ready-fd 3 >"$tmp/sink.log" 2>&1 \
    3>"$tmp/sink.ready" &
  rpid=$!
  wait_ready "$tmp/sink.ready" $rpid
  for len in 1000 3000; do
    wire_df "k$len" $len "$KS" send 198.18.0.1 198.18.0.2 9 40000 $len 3
    wire_df "t$len" $len "$TXS" send --dev udp -i 0 -n 3 -l $len -p 9 198.18.0.2
    diff "$tmp/k$len.df" "$tmp/t$len.df" >&2 || fail "-l $len: the udp device's frames (DF,MF,offset,len) differ from a kernel socket's"
    echo "ok: -l $len: $(wc -l <"$tmp/t$len.df") frames, DF/MF/offset as the kernel socket's default: $(sort -u "$tmp/t$len.df" | cut -d, -f1 | sort -u | tr '\n' ' ')"
  done
  grep -q "gso: 1 calls carried 3 datagrams" "$tmp/t1000.log" || fail "-l 1000: not one GSO call: $(grep gso: "$tmp/t1000.log")"
  grep -qv '^1,' "$tmp/t1000.df" && fail "-l 1000: a frame without DF"
  grep -q '^1,' "$tmp/t3000.df" && fail "-l 3000: a fragment with DF"
  true
}
run_case v4_default_wire

nodf_ids() {
  local cap
  # ... and on the wire every one of its IPv4 IDs is its own (GSO would give
  # the next call the IDs of this one, less one)
  need_cmd tshark "no tshark: the IPv4 ID check is skipped"
  need_cmd dumpcap "no dumpcap: the IPv4 ID check is skipped"
  ip netns exec "$B" timeout 20 dumpcap -q -i rx0 -c 300 -P -w "$tmp/ids.pcap" -f "udp and dst port 9" \
    2>"$tmp/cap.log" &
  cap=$!
  capturing "$tmp/cap.log" || fail "ids: dumpcap did not start: $(cat "$tmp/cap.log")"
  ip netns exec "$A" "$TXS" send --dev udp --no-df -n 300 -i 0 -p 9 198.18.0.2 >/dev/null 2>&1 || fail "ids: send failed"
  wait $cap || true
  tshark -r "$tmp/ids.pcap" -T fields -e ip.id >"$tmp/ids" 2>/dev/null
  [ "$(wc -l <"$tmp/ids")" = 300 ] && [ "$(sort -u "$tmp/ids" | wc -l)" = 300 ] ||
    fail "ids: $(sort -u "$tmp/ids" | wc -l) distinct IPv4 IDs in $(wc -l <"$tmp/ids") frames without --df"
  echo "ok: nodf: 300 datagrams, 300 distinct IPv4 IDs on the wire"

}
run_case nodf_ids


# 3. a route that refuses GSO: the refusal the kernel makes where it cannot
# segment (EIO through an xfrm route, EINVAL without checksums), made by an
# LD_PRELOAD shim (build/txs_gso_refuse_shim.so, gso_refuse_shim.c) around
# the real sendmmsg: the device's own fallback runs. Refused from the first
# GSO message, and after 100 accepted ones (mid-run, with a partial vector):
# one line on stderr, each socket falls back once, nothing lost or counted twice
SHIM=${TXS_BUILDDIR:-$(dirname "$TXS")}/txs_gso_refuse_shim.so
fallback() { # AFTER ERRNO
  local after=$1 errno_=$2 name fb calls
  [ -f "$SHIM" ] || fail "no $SHIM (built with the tests)"
  if ldd "$TXS" 2>/dev/null | grep -Eq 'lib(a|t|ub)san'; then skip "sanitizer build: the LD_PRELOAD fallback cases are skipped"; fi
  name=fallback$after.$errno_
  TXS_SHIM_GSO_AFTER=$after TXS_SHIM_GSO_ERRNO=$errno_ LD_PRELOAD=$SHIM gso_run $name 198.18.0.2 "--df -n 40000 -P 2 --no-pin"
  exact $name 2
  fb=$(sj .gso.fallbacks) calls=$(sj .gso.calls)
  [ "$fb" -ge 1 ] && [ "$fb" -le 2 ] || fail "$name: $fb sockets fell back, want 1 or 2 (one per thread)"
  [ "$calls" -le "$after" ] || fail "$name: $calls GSO calls accepted, the route took $after"
  [ "$after" = 0 ] || [ "$calls" -gt 0 ] || fail "$name: the first $after GSO calls were not sent as such"
  [ "$(grep -c "refused UDP GSO" "$tmp/$name.send.err")" = 1 ] ||
    fail "$name: want one line on stderr, got: $(cat "$tmp/$name.send.err")"
}
for after in 0 100; do
  for errno_ in 5 22; do run_case "fallback${after}_$errno_" fallback $after $errno_; done
done

v6() {
  # 4. IPv6
  gso_run v6 2001:2:0:0::2 "-n 40000 -l 100"
  exact v6 1
  [ "$(sj .gso.calls)" -gt 0 ] || fail "v6: no GSO call"
}
run_case v6

v6max() {
  local gd gm
  # 5. the default sender unpaced into recv's default udp input: UDP GRO on
  # recv's socket takes each GSO packet whole and recv splits it, so it keeps
  # up with full calls of 16-byte datagrams; a GRO message is counted as its
  # datagrams, and recv:gro=off reads one datagram per message
  gso_run v6max 2001:2:0:0::2 "-n 1000000 -l 16"
  exact v6max 1
  [ "$(rj .input.gro.on)" = true ] || fail "v6max: recv's UDP GRO is off"
  gd=$(rj .input.gro.datagrams) gm=$(rj .input.gro.messages)
  [ "$gm" -gt 0 ] && [ "$gd" -gt "$gm" ] && [ "$gd" -le "$(rj .received)" ] ||
    fail "v6max: $gm GRO messages carried $gd of $(rj .received) datagrams"
  echo "ok: v6max: recv took $gd of $(rj .received) datagrams in $gm GRO messages"
}
run_case v6max

nogro() {
  local rp
  ip netns exec "$B" "$TXS" recv --dev udp:gro=off -B 2001:2:0:0::2 -p 5202 --expect 1000 --idle 1 -J -i 0 -t 20 \
    --ready-fd 3 >"$tmp/nogro.json" 2>&1 3>"$tmp/nogro.ready" &
  rp=$!
  wait_ready "$tmp/nogro.ready" $rp
  ip netns exec "$A" "$TXS" send --dev udp -n 1000 -b 10kpps -p 5202 2001:2:0:0::2 >/dev/null 2>&1 || fail "nogro: send failed"
  wait $rp || fail "nogro: recv failed: $(cat "$tmp/nogro.json")"
  [ "$(tail -n1 "$tmp/nogro.json" | jq -r '[.received, .input.gro.on, .input.gro.messages] | @csv')" = '1000,false,0' ] ||
    fail "nogro: $(tail -n1 "$tmp/nogro.json" | jq -c '{received, gro: .input.gro}')"
  echo "ok: recv --dev udp:gro=off: 1000 received one per message"
}
run_case nogro

