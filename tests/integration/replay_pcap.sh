#!/usr/bin/env bash
# send --replay FILE into the pcap device: the capture comes out frame for
# frame identical (looping to -n), at its own timing (and at --replay-speed),
# counted by -n / -t; bad captures and devices refused with exit 2 before
# anything is sent. No root needed.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
T="$SRC/tests/integration/replay_tool.py"
need_cmd python3 "needs python3"
need_cmd jq "needs jq (scripts/deps test)"
need_txs
"$TXS" send --dev pcap:/dev/null --dry-run 198.18.0.2 >/dev/null 2>&1 || skip "no pcap device (libpcap)"
txs_tmp

python3 "$T" make "$tmp/in.pcap" 200
python3 "$T" make "$tmp/trunc.pcap" 10 trunc
python3 "$T" make "$tmp/ng.pcap" 1 pcapng
python3 "$T" make "$tmp/lt.pcap" 10 linktype
python3 "$T" make "$tmp/big.pcap" 10 big
printf 'not a capture at all' >"$tmp/junk.pcap"

one_pass() {
  # 1. the file's own timing, one pass: identical frames, in the capture's time
  "$TXS" send --replay "$tmp/in.pcap" --dev "pcap:$tmp/o1.pcap" -n 200 -i 0 --summary-file "$tmp/o1.json" >/dev/null
  [ "$(jq -r .packets "$tmp/o1.json")" = 200 ] || fail "one pass: send counted $(jq -r .packets "$tmp/o1.json")"
  python3 "$T" same "$tmp/in.pcap" "$tmp/o1.pcap" 200 || fail "one pass: frames differ"
  python3 "$T" timing "$tmp/in.pcap" "$tmp/o1.pcap" 1 || fail "one pass: timing"
}
run_case one_pass

looped() {
  # 2. looped to -n 450 at 4x: frames 0..199, 0..199, 0..49
  "$TXS" send --replay "$tmp/in.pcap" --replay-speed 4 --dev "pcap:$tmp/o2.pcap" -n 450 -i 0 >/dev/null
  python3 "$T" same "$tmp/in.pcap" "$tmp/o2.pcap" 450 || fail "looped: frames differ"
  python3 "$T" timing "$tmp/in.pcap" "$tmp/o2.pcap" 4 || fail "looped at 4x: timing"
}
run_case looped

rate_and_time() {
  local n
  # 3. at -b (frames/s), stopped by -t: the count is what the rate allows
  "$TXS" send --replay "$tmp/in.pcap" -b 2000pps -t 0.5 --dev "pcap:$tmp/o3.pcap" -i 0 --summary-file "$tmp/o3.json" >/dev/null
  n=$(jq -r .packets "$tmp/o3.json")
  { [ "$n" -ge 900 ] && [ "$n" -le 1001 ]; } || fail "-b 2000pps -t 0.5 sent $n frames"
  python3 "$T" same "$tmp/in.pcap" "$tmp/o3.pcap" "$n" || fail "-b: frames differ"
}
run_case rate_and_time

pcapng() {
  # 3b. a pcapng capture of the same frames (editcap, Wireshark's converter):
  # read through libpcap by the one pcap reader, the same frames at the same times
  if command -v editcap >/dev/null; then
    editcap -F pcapng "$tmp/in.pcap" "$tmp/in.pcapng"
    "$TXS" send --replay "$tmp/in.pcapng" --dev "pcap:$tmp/o5.pcap" -n 200 -i 0 --summary-file "$tmp/o5.json" >/dev/null
    [ "$(jq -r .packets "$tmp/o5.json")" = 200 ] || fail "pcapng: send counted $(jq -r .packets "$tmp/o5.json")"
    python3 "$T" same "$tmp/in.pcap" "$tmp/o5.pcap" 200 || fail "pcapng: frames differ"
    python3 "$T" timing "$tmp/in.pcap" "$tmp/o5.pcap" 1 || fail "pcapng: timing"
    echo "ok: pcapng replayed: 200 frames identical, at the capture's timing"
  else
    skip "no editcap (tshark's package) to write a pcapng"
  fi
}
run_case pcapng

# 4. refusals: exit 2, one line naming the value
refuse() {
  local why=$1
  shift
  local out rc=0
  out=$("$TXS" send "$@" -n 1 -i 0 2>&1) || rc=$?
  [ $rc = 2 ] || fail "$why: exit $rc, want 2: $out"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$why: more than one line: $out"
  echo "refused ($why): $out"
}
run_case refuse_truncated_frame refuse "truncated frame" --replay "$tmp/trunc.pcap" --dev dummy
run_case refuse_pcapng_without_an_interface refuse "pcapng without an interface" --replay "$tmp/ng.pcap" --dev dummy
run_case refuse_link_type refuse "link type" --replay "$tmp/lt.pcap" --dev dummy
run_case refuse_not_pcap refuse "not pcap" --replay "$tmp/junk.pcap" --dev dummy
run_case refuse_missing_file refuse "missing file" --replay "$tmp/nope.pcap" --dev dummy
run_case refuse_frame_over_the_mtu refuse "frame over the MTU" --replay "$tmp/big.pcap" --dev dummy
run_case refuse_frame_over_mtu refuse "frame over --mtu" --replay "$tmp/in.pcap" --dev dummy --mtu 1000
run_case refuse_udp_without_dest refuse "udp without DEST" --replay "$tmp/in.pcap" --dev udp
run_case refuse_udp_no_udp_datagram refuse "udp: no UDP datagram" --replay "$tmp/in.pcap" --dev udp 127.0.0.1
run_case refuse_two_threads refuse "two threads" --replay "$tmp/in.pcap" --dev dummy -P 2
run_case refuse_bad_speed refuse "bad speed" --replay "$tmp/in.pcap" --dev dummy --replay-speed 0
big_frame_mtu_1600() {
  # the big frame fits a device with a larger MTU
  "$TXS" send --replay "$tmp/big.pcap" --dev "pcap:$tmp/o4.pcap,mtu=1600" -n 10 -i 0 -b 10kpps >/dev/null
  python3 "$T" same "$tmp/big.pcap" "$tmp/o4.pcap" 10 || fail "mtu=1600: frames differ"
}
run_case big_frame_mtu_1600

udp_loopback() {
  local d
  # 5. through udp over loopback: the capture's UDP payloads, in order (the
  # veth version with timing and IPv6: replay_udp.sh)
  python3 "$T" make "$tmp/mx.pcap" 40 mixed
  python3 "$T" recv 4 0 "$tmp/u.got" "$tmp/u.ready" 1 30 &
  for _ in $(seq 100); do
    [ -s "$tmp/u.ready" ] && break
    sleep 0.1
  done
  [ -s "$tmp/u.ready" ] || fail "udp: the receiver did not start"
  d=$(jq '.["4"].payloads | length' "$tmp/mx.pcap.expect.json")
  "$TXS" send --replay "$tmp/mx.pcap" --dev udp 127.0.0.1 -p "$(cat "$tmp/u.ready")" -n $((d + 5)) -b 5kpps -i 0 \
    --summary-file "$tmp/u.json" >/dev/null
  wait
  python3 "$T" udpsame "$tmp/mx.pcap.expect.json" 4 "$tmp/u.got" $((d + 5)) || fail "udp: payloads differ"
  [ "$(jq -r .replay_skipped.total "$tmp/u.json")" = $(($(jq -r .frames "$tmp/mx.pcap.expect.json") - d)) ] ||
    fail "udp: skipped $(jq -c .replay_skipped "$tmp/u.json")"
}
run_case udp_loopback
