#!/usr/bin/env bash
# send --replay FILE through packet: into a veth (netns lab "rpl"): the
# frames captured at the peer (dumpcap) are the capture's, frame for frame
# and byte for byte, looping to -n, at the capture's timing. Needs root.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
T="$SRC/tests/integration/replay_tool.py"
lab_test rpl dumpcap python3

python3 "$T" make "$tmp/in.pcap" 300

# replay_run NAME ARGS...: capture at the peer (the test frames' ethertype only), replay in A
replay_run() {
  local name=$1
  shift
  ip netns exec "$B" dumpcap -i rx0 -P -B 64 -f "ether proto 0x88b5" -w "$tmp/$name.pcap" \
    >/dev/null 2>"$tmp/$name.dc.err" &
  local dpid=$!
  capturing "$tmp/$name.dc.err" || fail "$name: dumpcap did not start: $(cat "$tmp/$name.dc.err")"
  ip netns exec "$A" timeout 60 "$TXS" send --replay "$tmp/in.pcap" --dev "${DEV:-packet:tx0}" -i 0 \
    --summary-file "$tmp/$name.json" "$@" >"$tmp/$name.out" 2>&1 || fail "$name: send: $(cat "$tmp/$name.out")"
  sleep 0.5
  kill -INT "$dpid"
  wait "$dpid" || true
}

own_timing() {
  # the peer's capture times (CLOCK_REALTIME) against the capture's own; one
  # miss on a steady clock fails (common.bash timed_trials)
  own_trial() {
    replay_run own -n 700
    [ "$(jq -r .packets "$tmp/own.json")" = 700 ] || fail "own timing: send counted $(jq -r .packets "$tmp/own.json")"
    python3 "$T" same "$tmp/in.pcap" "$tmp/own.pcap" 700 || fail "own timing: the peer saw other frames"
    python3 "$T" timing "$tmp/in.pcap" "$tmp/own.pcap" 1
  }
  timed_trials "own timing" own_trial "timing at the peer" 1
}
run_case own_timing

rate_20k() {
  replay_run fast -n 1000 -b 20kpps
  python3 "$T" same "$tmp/in.pcap" "$tmp/fast.pcap" 1000 || fail "-b 20k: the peer saw other frames"
}
run_case rate_20k

xdp() {
  # the same through AF_XDP where this build and kernel have it
  if ip netns exec "$A" "$TXS" send --dev xdp:tx0 --dry-run 198.18.0.2 >/dev/null 2>&1; then
    DEV=xdp:tx0 replay_run xdp -n 600 -b 20kpps
    python3 "$T" same "$tmp/in.pcap" "$tmp/xdp.pcap" 600 || fail "xdp: the peer saw other frames"
  else
    skip "no xdp: device here, replay checked through packet: only"
  fi
}
run_case xdp
