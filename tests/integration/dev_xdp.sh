#!/usr/bin/env bash
# xdp: (AF_XDP, TX only) on a real veth: every packet counted as sent
# arrives, with the generator's bytes; one socket per queue; clear errors.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
ring_setup drgx 1
settle
# can this kernel do AF_XDP at all?
if ! ip netns exec "$A" "$TXS" send -i 0 -n 1 --dev xdp:tx0 198.18.0.2 >"$WORK/probe.log" 2>&1; then
  skip "AF_XDP unavailable here: $(grep -o -- '--dev.*' "$WORK/probe.log" | head -1)"
fi
sleep 0.3

ring_cases xdp:tx0 copy,aligned

# one socket per queue: two workers need two queues
run_case err_one_queue ring_expect_err 2 "ethtool -L tx0 rx 2 tx 2" --dev xdp:tx0 -P 2 198.18.0.2
run_case err_bad_option ring_expect_err 2 "unknown xdp option 'bogus'" --dev xdp:tx0,bogus 198.18.0.2
run_case err_bad_queue ring_expect_err 2 "bad queue 'x'" --dev xdp:tx0:x 198.18.0.2
if command -v ethtool >/dev/null && ip netns exec "$A" ethtool -L tx0 rx 2 tx 2 2>/dev/null; then
  settle
  run_case two_queues_counts check_delivery xdp:tx0 198.18.0.2 20000 -P 2
  run_case queue1_counts check_delivery xdp:tx0:1 198.18.0.2 5000
else
  no_queues() { skip "ethtool cannot give tx0 two queues here"; }
  run_case two_queues_counts no_queues
  run_case queue1_counts no_queues
fi
