#!/usr/bin/env bash
# send and the device MTU, no root needed: dummy/pcap: default to
# MTU 1500, take mtu=N, --mtu overrides; datagrams over it are fragmented
# (frames = datagrams x fragments, packets = -n datagrams), never cut; --df
# and --gso limits are checked at that MTU and refused with exit 2 naming
# the value; a --burst below one send's frames is refused.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
[ -x "$TXS" ] || skip "no txscale at $TXS"
need_cmd jq "needs jq"
txs_tmp

# counts ARGS -- DGRAMS FRAMES: a run's summary counts
counts() {
  local want_d=$1 want_f=$2; shift 2
  local s
  if ! s=$("$TXS" send -i 0 -J "$@" 2>"$tmp/err" | tail -1); then fail "$*: exit non-zero: $(cat "$tmp/err")"; return; fi
  local p d f t dr
  p=$(jq .packets <<<"$s") d=$(jq .datagrams <<<"$s") f=$(jq .frames <<<"$s") t=$(jq '[.threads[].frames] | add' <<<"$s")
  dr=$(jq .drops <<<"$s")
  local l
  l=$(jq '[.links[].packets] | add' <<<"$s")
  if [ "$p" = "$want_d" ] && [ "$d" = "$want_d" ] && [ "$f" = "$want_f" ] && [ "$t" = "$want_f" ] && [ "$l" = "$want_f" ] && [ "$dr" = 0 ]; then
    ok "$*: $p datagrams, $f frames"
  else
    fail "$*: packets $p datagrams $d frames $f (threads $t, links $l) drops $dr, want $want_d datagrams in $want_f frames"
  fi
}
# refuse PATTERN ARGS: exit 2 with one line matching PATTERN
refuse() {
  local pat=$1 rc=0; shift
  "$TXS" send -i 0 -n 5 "$@" >"$tmp/out" 2>&1 || rc=$?
  if [ $rc = 2 ] && grep -q -- "$pat" "$tmp/out"; then ok "refused: $(head -1 "$tmp/out")"
  else fail "$*: exit $rc, want 2 and '$pat': $(cat "$tmp/out")"; fi
}

run_case frames_n_10_l_1472 counts 10 10 -n 10 -l 1472 198.18.0.2
run_case frames_n_11_l_3000 counts 11 33 -n 11 -l 3000 198.18.0.2                       # 1480 + 1480 + 48
run_case frames_n_13_l_3000_dev_dummy_mtu_9000 counts 13 13 -n 13 -l 3000 --dev dummy:mtu=9000 198.18.0.2
run_case frames_n_13_l_3000_mtu_9000 counts 13 13 -n 13 -l 3000 --mtu 9000 198.18.0.2
run_case frames_n_7_l_8000_6_2001_2_2 counts 7 42 -n 7 -l 8000 -6 2001:2::2                       # 5 x 1448 + 768
run_case frames_n_7_l_8000_p_2_unconnected_2001_2_2 counts 7 42 -n 7 -l 8000 -P 2 --unconnected 2001:2::2
run_case frames_n_9_l_3000_mtu_1000 counts 9 36 -n 9 -l 3000 --mtu 1000 198.18.0.2               # 976-byte pieces: 4
run_case frames_n_17_l_5500_gso_1000 counts 17 17 -n 17 -l 5500 --gso 1000 198.18.0.2             # 6 per send, the last send 5
run_case frames_n_10_l_1000_gso_2000 counts 10 10 -n 10 -l 1000 --gso 2000 198.18.0.2             # gso over the MTU, payload in one segment
run_case frames_n_1001_l_3000_b_50k counts 1001 3003 -n 1001 -l 3000 -b 50kpps 198.18.0.2
pcap_mtu_4000() {
  local n
  counts 5 5 -n 5 -l 3000 --dev "pcap:$tmp/a.pcap,mtu=4000" 198.18.0.2
  if command -v tshark >/dev/null; then
    n=$(tshark -r "$tmp/a.pcap" -T fields -e frame.len 2>/dev/null | sort -u | tr '\n' ' ')
    [ "$n" = "3042 " ] && ok "pcap:FILE,mtu=4000: 3042-byte frames" || fail "pcap mtu=4000: frame lengths $n"
  fi
}
run_case pcap_mtu_4000

run_case refuse_l_3000_df refuse "bad value for --length: '3000': over the MTU 1500 with --df" -l 3000 --df 198.18.0.2
df_within_mtu_9000() {
  "$TXS" send -i 0 -n 5 -l 3000 --df --mtu 9000 198.18.0.2 >/dev/null 2>&1 && ok "--df within --mtu 9000" || fail "--df -l 3000 --mtu 9000 refused"
}
run_case df_within_mtu_9000
run_case refuse_mtu_100 refuse "bad value for --mtu" --mtu 100 198.18.0.2
run_case refuse_dev_dummy_mtu_70000 refuse "mtu=70000: expected 576..65535" --dev dummy:mtu=70000 198.18.0.2
run_case refuse_mtu_1000_2001_2_2 refuse "IPv6 needs at least 1280" --mtu 1000 2001:2::2
run_case refuse_l_3000_gso_1473 refuse "bad value for --gso: '1473'.*MTU 1500" -l 3000 --gso 1473 198.18.0.2
run_case refuse_l_3000_burst_2 refuse "bad value for --burst: '2'" -l 3000 --burst 2 198.18.0.2
run_case refuse_l_65000_gso_100 refuse "UDP_MAX_SEGMENTS" -l 65000 --gso 100 198.18.0.2
