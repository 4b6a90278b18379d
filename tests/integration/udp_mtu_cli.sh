#!/usr/bin/env bash
# send and the device MTU (issue 12), no root needed: dummy/pcap: default to
# MTU 1500, take mtu=N, --mtu overrides; datagrams over it are fragmented
# (frames = datagrams x fragments, packets = -n datagrams), never cut; --df
# and --gso limits are checked at that MTU and refused with exit 2 naming
# the value; a --burst below one send's frames is refused.
set -euo pipefail
TXS=${TXS_BIN:-build/txscale}
[ -x "$TXS" ] || { echo "SKIP: no txscale at $TXS" >&2; exit 77; }
command -v jq >/dev/null || { echo "SKIP: needs jq" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }

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

counts 10 10 -n 10 -l 1472 198.18.0.2
counts 11 33 -n 11 -l 3000 198.18.0.2                       # 1480 + 1480 + 48
counts 13 13 -n 13 -l 3000 --dev dummy:mtu=9000 198.18.0.2
counts 13 13 -n 13 -l 3000 --mtu 9000 198.18.0.2
counts 7 42 -n 7 -l 8000 -6 2001:2::2                       # 5 x 1448 + 768
counts 7 42 -n 7 -l 8000 -P 2 --unconnected 2001:2::2
counts 9 36 -n 9 -l 3000 --mtu 1000 198.18.0.2               # 976-byte pieces: 4
counts 17 17 -n 17 -l 5500 --gso 1000 198.18.0.2             # 6 per send, the last send 5
counts 10 10 -n 10 -l 1000 --gso 2000 198.18.0.2             # gso over the MTU, payload in one segment
counts 1001 3003 -n 1001 -l 3000 -b 50k 198.18.0.2
counts 5 5 -n 5 -l 3000 --dev "pcap:$tmp/a.pcap,mtu=4000" 198.18.0.2
if command -v tshark >/dev/null; then
  n=$(tshark -r "$tmp/a.pcap" -T fields -e frame.len 2>/dev/null | sort -u | tr '\n' ' ')
  [ "$n" = "3042 " ] && ok "pcap:FILE,mtu=4000: 3042-byte frames" || fail "pcap mtu=4000: frame lengths $n"
fi

refuse "bad value for -l/--length: '3000': over the MTU 1500 with --df" -l 3000 --df 198.18.0.2
"$TXS" send -i 0 -n 5 -l 3000 --df --mtu 9000 198.18.0.2 >/dev/null 2>&1 && ok "--df within --mtu 9000" || fail "--df -l 3000 --mtu 9000 refused"
refuse "bad value for --mtu" --mtu 100 198.18.0.2
refuse "mtu=70000: expected 576..65535" --dev dummy:mtu=70000 198.18.0.2
refuse "IPv6 needs at least 1280" --mtu 1000 2001:2::2
refuse "bad value for --gso: '1473'.*MTU 1500" -l 3000 --gso 1473 198.18.0.2
refuse "bad value for --burst: '2'" -l 3000 --burst 2 198.18.0.2
refuse "UDP_MAX_SEGMENTS" -l 65000 --gso 100 198.18.0.2

[ "$FAILS" = 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo PASS
