#!/usr/bin/env bash
# Hostile sequence numbers and timestamps into `txscale recv`
# give bounded counts. In a network namespace of our own (loopback only):
#   1. seqs 2^64-1, 0, 1 on one flow: received 2, lost 0, one seq-jump
#      (before: lost 18446744073709551615)
#   2. one datagram at 2^63: lost stays 0 (before: 9.2e18)
#   3. 200 random datagrams with the magic (random flow ids, sequences,
#      timestamps) beside a real in-order flow: the real flow is counted
#      exactly, lost stays within the flows' spans, no latency above the
#      clock-skew bound (before: lost 5.9e16, p99 5.6e18 ns = 56 years)
#   4. a timestamp from the future is clock skew, in JSON and in the text
# Needs root (namespaces) and python3; exits 77 otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
ns_test rxw python3

# send_wild CASE: the datagrams of one case, to 127.0.0.1:PORT in the namespace
cat >"$tmp/wild.py" <<'PY'
import random, socket, struct, sys, time
case = sys.argv[1]
port = int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
MAGIC = 0x54585343
def dg(flow, seq, ts):
    p = struct.pack(">IIQQ", MAGIC, flow % 2**32, seq % 2**64, ts % 2**64)
    s.sendto(p + bytes(range(24, 32)), ("127.0.0.1", port))
    time.sleep(0.0002)
now = time.time_ns()
if case == "wrap":
    for q in (2**64 - 1, 0, 1):
        dg(0, q, now)
elif case == "half":
    dg(0, 2**63, now)
elif case == "random":
    r = random.Random(int(sys.argv[3]))
    for i in range(1000):
        dg(7, i, time.time_ns())
        if i % 5 == 0:
            dg(r.getrandbits(32), r.getrandbits(64), r.getrandbits(64))
elif case == "future":
    for i in range(10):
        dg(3, i, time.time_ns() + (3600 * 10**9 if i % 2 else 0))
PY

# wild_run NAME [recv args]: recv in the namespace until 1 s idle, the case's datagrams
wild_run() {
  local name=$1; shift
  ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT -i 0 -t 20 --idle 1 "$@" --ready-fd 3 \
    >"$tmp/$name.out" 2>"$tmp/$name.err" 3>"$tmp/$name.ready" &
  local pid=$!
  wait_ready "$tmp/$name.ready" $pid
  ip netns exec "$NS" python3 "$tmp/wild.py" "$WCASE" $PORT "${SEED:-1}"
  wait "$pid" || fail "$name: recv exited $?: $(cat "$tmp/$name.err")"
}
rj() { tail -n1 "$tmp/$1.out" | jq -r "$2"; }
# every count bounded by the datagrams sent ($2)
bounded() {
  local name=$1 n=$2
  for k in received unique duplicates reordered late malformed resyncs; do
    local v
    v=$(rj "$name" ".$k")
    [ "$v" -le "$n" ] || fail "$name: $k $v above the $n datagrams sent"
  done
  rj "$name" '[.flows[] | select(.lost != null) | (.lost <= .span)] | all' | grep -x true >/dev/null ||
    fail "$name: a flow's loss above its sequence span: $(rj "$name" '.flows')"
  local maxlat
  maxlat=$(rj "$name" '.latency_ns.max_latency')
  rj "$name" "(.latency_ns.max <= $maxlat) and (.latency_ns.p99 <= $maxlat)" | grep -x true >/dev/null ||
    fail "$name: latency above the clock-skew bound: $(rj "$name" '.latency_ns')"
}

wrap() {
  WCASE=wrap wild_run wrap -J
  [ "$(rj wrap .received)" = 2 ] || fail "wrap: received $(rj wrap .received), expected 2 (0 and 1)"
  [ "$(rj wrap .lost)" = 0 ] || fail "wrap: lost $(rj wrap .lost)"
  [ "$(rj wrap '.malformed_by_kind["seq-jump"]')" = 1 ] || fail "wrap: seq-jump $(rj wrap '.malformed_by_kind')"
  bounded wrap 3
  echo "ok: 2^64-1, 0, 1: received 2, lost 0, 1 seq-jump"
}
run_case wrap

half() {
  WCASE=half wild_run half -J
  [ "$(rj half .lost)" = 0 ] && [ "$(rj half .received)" = 0 ] && [ "$(rj half .malformed)" = 1 ] ||
    fail "half: $(tail -n1 "$tmp/half.out" | jq -c '{received, lost, malformed}')"
  echo "ok: 2^63: lost 0, 1 malformed"
}
run_case half

random_flows() { # SEED
  local seed=$1 n f7 lost
  SEED=$seed WCASE=random wild_run "random$seed" -J
  n=$((1000 + 200))
  bounded "random$seed" $n
  f7=$(rj "random$seed" '.flows[] | select(.flow == 7) | "\(.unique) \(.lost) \(.duplicates) \(.resyncs)"')
  [ "$f7" = "1000 0 0 0" ] || fail "random$seed: the real flow 7 (1000 in order): unique lost dup resyncs = $f7"
  lost=$(rj "random$seed" .lost)
  [ "$lost" -lt $((1 << 32)) ] || fail "random$seed: lost $lost"
  echo "ok: 200 random datagrams (seed $seed) beside 1000 real: flow 7 exact, lost $lost," \
    "malformed $(rj "random$seed" .malformed), latency max $(rj "random$seed" .latency_ns.max) ns"
}
for seed in 1 2 3; do run_case "random$seed" random_flows $seed; done

future() {
  WCASE=future wild_run future -J
  [ "$(rj future .latency_ns.skew_future)" = 5 ] && [ "$(rj future .latency_ns.count)" = 5 ] ||
    fail "future: $(rj future '.latency_ns')"
  [ "$(rj future '.latency_ns.max < 1000000000')" = true ] || fail "future: max $(rj future .latency_ns.max)"
  WCASE=future wild_run futuretext
  grep -q "clock skew, not in the histogram: 5 packets stamped after they arrived" "$tmp/futuretext.out" ||
    fail "future (text): no clock-skew line: $(cat "$tmp/futuretext.out")"
  grep -qE "latency  ns p50 .* \(5 samples\)" "$tmp/futuretext.out" ||
    fail "future (text): histogram line: $(cat "$tmp/futuretext.out")"
  echo "ok: timestamps 1 h in the future: 5 counted as clock skew, 5 samples below 1 s"
}
run_case future
