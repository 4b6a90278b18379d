#!/usr/bin/env bash
# recv --rx-timestamps on the udp input, over loopback:
#   kernel (the default): every datagram is timed by the kernel's software
#     receive timestamp (input.ts_kernel == received, ts_user == 0), and the
#     report says so
#   user: every datagram is timed by our clock read per recvmmsg batch
#   the kernel's stamp is taken before the datagram waits in the socket and
#     for our thread to wake: its median latency is below the user mode's
#   with send --timestamps packet no datagram is stamped after its arrival
#     (skew_future 0) and all are in the histogram
#   a bad mode is refused with exit 2
set -euo pipefail

TXS=${TXS_BIN:-build/txscale}
skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v jq >/dev/null || skip "needs jq (scripts/deps test)"
[ -x "$TXS" ] || fail "no txscale binary at $TXS"
PORT=$((5318 + $(printf '%s' "${TXS_LAB_TAG:-}" | cksum | cut -c1-3) % 200))
tmp=$(mktemp -d)
trap 'jobs -p | xargs -r kill 2>/dev/null || true; rm -rf "$tmp"' EXIT

# run NAME RECV-MODE SEND-ARGS...
run() {
  local name=$1 mode=$2
  shift 2
  "$TXS" recv -B 127.0.0.1 -p "$PORT" --rx-timestamps "$mode" -J -i 0 --idle 1 -t 30 >"$tmp/$name.json" \
    2>"$tmp/$name.err" &
  local rpid=$!
  sleep 0.5
  "$TXS" send --dev udp -B 127.0.0.1 127.0.0.1 -p "$PORT" -i 0 -l 32 "$@" >"$tmp/$name.send" 2>&1 ||
    fail "$name: send: $(cat "$tmp/$name.send")"
  wait "$rpid" || fail "$name: recv exited $?: $(cat "$tmp/$name.err")"
  R=$(tail -n1 "$tmp/$name.json")
}
j() { printf '%s\n' "$R" | jq -r "$1"; }

run kernel kernel -b 20k -n 10000
[ "$(j .received)" = 10000 ] || fail "kernel: received $(j .received)"
[ "$(j .input.rx_timestamps)" = kernel ] || fail "kernel: the report says $(j .input.rx_timestamps)"
[ "$(j .input.ts_kernel)" = 10000 ] || fail "kernel: $(j .input.ts_kernel) datagrams with a kernel stamp"
[ "$(j .input.ts_user)" = 0 ] || fail "kernel: $(j .input.ts_user) datagrams fell back to our clock"
k50=$(j .latency_ns.p50)

run user user -b 20k -n 10000
[ "$(j .input.rx_timestamps)" = user ] || fail "user: the report says $(j .input.rx_timestamps)"
[ "$(j .input.ts_user)" = 10000 ] || fail "user: $(j .input.ts_user) datagrams timed by our clock"
[ "$(j .input.ts_kernel)" = 0 ] || fail "user: $(j .input.ts_kernel) kernel stamps"
u50=$(j .latency_ns.p50)
echo "median latency: kernel stamps $k50 ns, user clock $u50 ns"
[ "$k50" -lt "$u50" ] || fail "the kernel's stamp ($k50 ns) is not earlier than our read ($u50 ns)"

run packet kernel -b 20k -n 10000 --timestamps packet
[ "$(j .latency_ns.skew_future)" = 0 ] || fail "packet: $(j .latency_ns.skew_future) datagrams stamped after they arrived"
[ "$(j .latency_ns.count)" = 10000 ] || fail "packet: $(j .latency_ns.count) latency samples"
echo "per-packet send stamps, kernel arrival: p50 $(j .latency_ns.p50) ns, p99 $(j .latency_ns.p99) ns"

set +e
out=$("$TXS" recv -p "$PORT" --rx-timestamps hw -t 1 2>&1)
rc=$?
set -e
[ $rc = 2 ] || fail "--rx-timestamps hw: exit $rc ($out)"
echo "PASS: recv kernel/user receive timestamps"
