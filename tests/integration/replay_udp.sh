#!/usr/bin/env bash
# send --replay FILE --dev udp into a veth (netns lab "rpu"): a capture that
# mixes UDP datagrams of several sizes (IPv4 and IPv6, tagged, with options
# or extension headers, one over the MTU) with ARP, TCP, ICMP, IP fragments
# and a malformed datagram. A kernel socket in the peer namespace must get
# exactly the capture's UDP payloads of the destination's family, byte for
# byte, in file order, looping to -n; the skipped frames are counted by
# reason in the JSON summary; the file's own timing holds (never faster);
# --df with a datagram over the MTU and a capture without any datagram are
# refused with exit 2 and one line. Needs root.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
T="$SRC/tests/integration/replay_tool.py"
lab_test rpu python3

# 200 datagrams (every fifth IPv6) among 50 other frames, 1 ms apart
python3 "$T" make "$tmp/in.pcap" 200 mixed
E="$tmp/in.pcap.expect.json"

# replay_run NAME FAMILY DEST ARGS...: a receiver in B, the replay in A
replay_run() {
  local name=$1 fam=$2 dest=$3
  shift 3
  rm -f "$tmp/$name.ready"
  ip netns exec "$B" python3 "$T" recv "$fam" 47000 "$tmp/$name.got" "$tmp/$name.ready" 1.5 60 &
  local rpid=$!
  for _ in $(seq 100); do
    [ -s "$tmp/$name.ready" ] && break
    sleep 0.1
  done
  [ -s "$tmp/$name.ready" ] || fail "$name: the receiver did not start"
  ip netns exec "$A" timeout 60 "$TXS" send --replay "$tmp/in.pcap" --dev udp "$dest" -p 47000 -i 0 \
    --summary-file "$tmp/$name.json" "$@" >"$tmp/$name.out" 2>&1 || fail "$name: send: $(cat "$tmp/$name.out")"
  wait "$rpid" || fail "$name: the receiver failed"
}

# skipped NAME FAMILY: the summary's skip counts are the capture's
skipped() {
  local got want
  got=$(jq -c '.replay_skipped | del(.total) | with_entries(select(.value > 0))' "$tmp/$1.json")
  want=$(jq -c --arg f "$2" '.[$f].skipped' "$E")
  [ "$(jq -S . <<<"$got")" = "$(jq -S . <<<"$want")" ] || fail "$1: skipped $got, want $want"
  [ "$(jq -r '.replay_skipped.total' "$tmp/$1.json")" = "$(jq --arg f "$2" '[.[$f].skipped[]] | add' "$E")" ] ||
    fail "$1: skipped total $(jq -c .replay_skipped "$tmp/$1.json")"
  grep -q "skipped: " "$tmp/$1.out" || fail "$1: no skip count in the text summary: $(cat "$tmp/$1.out")"
}

v4() {
  local d4
  # 1. IPv4 at the file's own timing, two passes
  d4=$(jq '.["4"].payloads | length' "$E")
  replay_run v4 4 198.18.0.2 -n $((2 * d4))
  [ "$(jq -r .packets "$tmp/v4.json")" = $((2 * d4)) ] || fail "v4: send counted $(jq -r .packets "$tmp/v4.json")"
  [ "$(jq -r .replay_datagrams "$tmp/v4.json")" = "$d4" ] || fail "v4: replay_datagrams $(jq -r .replay_datagrams "$tmp/v4.json")"
  [ "$(jq -r '.drops + .errors' "$tmp/v4.json")" = 0 ] || fail "v4: drops or errors: $(cat "$tmp/v4.out")"
  skipped v4 4
  python3 "$T" udpsame "$E" 4 "$tmp/v4.got" $((2 * d4)) 1 || fail "v4: payloads or timing at the receiver"
}
run_case v4

v6() {
  local d6
  # 2. IPv6 at -b, three passes
  d6=$(jq '.["6"].payloads | length' "$E")
  replay_run v6 6 2001:2:0:0::2 -n $((3 * d6)) -b 5kpps
  [ "$(jq -r .packets "$tmp/v6.json")" = $((3 * d6)) ] || fail "v6: send counted $(jq -r .packets "$tmp/v6.json")"
  skipped v6 6
  python3 "$T" udpsame "$E" 6 "$tmp/v6.got" $((3 * d6)) || fail "v6: the receiver got other datagrams"
}
run_case v6

# 3. refusals: exit 2, one line
refuse() {
  local why=$1
  shift
  local out rc=0
  out=$(ip netns exec "$A" "$TXS" send "$@" -n 1 -i 0 2>&1) || rc=$?
  [ $rc = 2 ] || fail "$why: exit $rc, want 2: $out"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$why: more than one line: $out"
  echo "refused ($why): $out"
}
python3 "$T" make "$tmp/none.pcap" 20
run_case refuse_df_over_mtu refuse "--df, a 3000-byte payload over the MTU" --replay "$tmp/in.pcap" --dev udp 198.18.0.2 --df
run_case refuse_no_udp refuse "no UDP datagram" --replay "$tmp/none.pcap" --dev udp 198.18.0.2
