#!/usr/bin/env bash
# xdp: (AF_XDP, TX only) on a real veth: every packet counted as sent
# arrives, with the generator's bytes; one socket per queue; clear errors.
source "$(dirname "$0")/ring_lib.bash"
ring_setup drgx 1
settle
# can this kernel do AF_XDP at all?
if ! ip netns exec "$A" "$TXS" send -i 0 -n 1 --dev xdp:tx0 198.18.0.2 >"$WORK/probe.log" 2>&1; then
  skip "AF_XDP unavailable here: $(grep -o -- '--dev.*' "$WORK/probe.log" | head -1)"
fi
sleep 0.3

check_delivery xdp:tx0 198.18.0.2 20000
check_delivery xdp:tx0 2001:2::2 20000
check_delivery xdp:tx0,copy 198.18.0.2 5000
check_delivery xdp:tx0,aligned 198.18.0.2 5000
check_delivery xdp:tx0,ring=64 198.18.0.2 20000
check_delivery xdp:tx0 198.18.0.2 20000 -l 1472
check_delivery xdp:tx0 198.18.0.2 2000 -l 0
check_wire xdp:tx0 198.18.0.2 64 198.18.0.1 auto
check_wire xdp:tx0 2001:2::2 64 2001:2::1 auto

expect_err() { # WANT-RC PATTERN ARGS...
  local want=$1 pat=$2 rc=0; shift 2
  ip netns exec "$A" "$TXS" send -i 0 -n 10 "$@" >"$WORK/err.log" 2>&1 || rc=$?
  if [ "$rc" = "$want" ] && grep -q -- "$pat" "$WORK/err.log"; then ok "error: $(head -1 "$WORK/err.log")"
  else fail "expected exit $want and '$pat', got $rc: $(cat "$WORK/err.log")"; fi
}
# one socket per queue: two workers need two queues
expect_err 2 "ethtool -L tx0 rx 2 tx 2" --dev xdp:tx0 -P 2 198.18.0.2
expect_err 2 "unknown xdp option 'bogus'" --dev xdp:tx0,bogus 198.18.0.2
expect_err 2 "bad queue 'x'" --dev xdp:tx0:x 198.18.0.2
if command -v ethtool >/dev/null && ip netns exec "$A" ethtool -L tx0 rx 2 tx 2 2>/dev/null; then
  settle
  check_delivery xdp:tx0 198.18.0.2 20000 -P 2
  check_delivery xdp:tx0:1 198.18.0.2 5000
else
  echo "note: ethtool cannot give tx0 two queues here: multi-queue checks skipped"
fi
ring_finish
