#!/usr/bin/env bash
# Rate profiles on a real veth (netns lab "pac"), read back from a capture in
# the peer namespace (dumpcap: the kernel's receive timestamps):
#   1. --ramp 2k:20k:4 -t 6: the datagrams of each second (from the first
#      one, which is due at the run's start) match the schedule
#      N(t) = 2000 t + 2250 t^2 (t < 4), then 20k/s, within 1%
#   2. --pace poisson -b 5k: inter-departure gaps have a mean within 3% of
#      200 us, a coefficient of variation within 0.9..1.1 (over gaps below 10 means;
#      at most 1 in 1000 beyond), the median at mean x ln 2 and P(gap < mean)
#      within 0.03 of 1 - 1/e (exponential gaps)
#   3. --burst-on 50 --burst-off 2000 -b 100k: the gap before every 50th
#      datagram is at least 2 ms (minus capture jitter), and the gaps inside
#      groups are short (median < 0.2 ms)
# Every run: frames captured == frames sent (send's own count) and dumpcap
# dropped nothing. Needs root (namespaces) and dumpcap; exits 77 otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
LAB=$(lab_name pac)
A=$LAB-a
B=$LAB-b
PORT=5301

need_root
need_cmd dumpcap "needs dumpcap (tshark)"
need_cmd python3 "needs python3"
need_cmd jq "needs jq (scripts/deps test)"
need_txs

txs_tmp
lab_up "$LAB"

# capture NAME SEND-ARGS...: dumpcap in B, send in A over packet:tx0; leaves
# $tmp/NAME.pcap and checks captured == sent, no capture drops
capture() {
  local name=$1
  shift
  ip netns exec "$B" dumpcap -i rx0 -P -B 64 -s 128 -f "udp dst port $PORT" -w "$tmp/$name.pcap" \
    >"$tmp/$name.dc.out" 2>"$tmp/$name.dc.err" &
  local dpid=$!
  for _ in $(seq 100); do
    grep -q "Capturing on" "$tmp/$name.dc.err" 2>/dev/null && break
    sleep 0.1
  done
  grep -q "Capturing on" "$tmp/$name.dc.err" || fail "$name: dumpcap did not start: $(cat "$tmp/$name.dc.err")"
  sleep 0.3 # "Capturing on" comes just before the capture socket is filtered and reading
  ip netns exec "$A" timeout 60 $RT "$TXS" send --dev packet:tx0 -p $PORT -i 0 --summary-file "$tmp/$name.json" "$@" \
    198.18.0.2 >"$tmp/$name.out" 2>&1 || fail "$name: send: $(cat "$tmp/$name.out")"
  sleep 0.5
  kill -INT "$dpid"
  wait "$dpid" || true
  local sent
  sent=$(jq -r .packets "$tmp/$name.json")
  local got
  got=$(python3 "$tmp/pc.py" count "$tmp/$name.pcap")
  if [ "$got" != "$sent" ]; then
    # the peer's backlog or the capture lost frames (a loaded machine): said, and the caller retries once
    echo "$name: captured $got frames, send says $sent: $(tail -n1 "$tmp/$name.dc.err")" >&2
    return 1
  fi
  echo "$name: $sent frames sent and captured"
}

cat >"$tmp/pc.py" <<'PY'
import math, struct, sys

def times(path):
    with open(path, 'rb') as f:
        d = f.read()
    magic = struct.unpack('<I', d[:4])[0]
    end = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    nano = struct.unpack(end + 'I', d[:4])[0] == 0xa1b23c4d
    off, ts = 24, []
    while off + 16 <= len(d):
        s, frac, incl, _ = struct.unpack(end + 'IIII', d[off:off + 16])
        ts.append(s + frac / (1e9 if nano else 1e6))
        off += 16 + incl
    return ts

mode, path = sys.argv[1], sys.argv[2]
t = times(path)
if mode == 'count':
    print(len(t))
    sys.exit(0)
gaps = [b - a for a, b in zip(t, t[1:])]
bad = []
if mode == 'ramp':
    F, T, S, secs = 2000.0, 20000.0, 4.0, 6
    a = (T - F) / S
    N = lambda x: F * x + a * x * x / 2 if x < S else F * S + a * S * S / 2 + T * (x - S)
    t0 = t[0]
    for i in range(secs):
        got = sum(1 for x in t if i <= x - t0 < i + 1)
        # datagram m is due when N(t) reaches m: those of [i, i+1) are
        # m = ceil(N(i)) .. ceil(N(i+1)) - 1
        want = math.ceil(N(i + 1)) - math.ceil(N(i))
        err = abs(got - want) / want
        print('second %d: %d datagrams, schedule %d (%.3f%%)' % (i, got, want, 100 * err))
        if err > 0.01:
            bad.append('second %d: %d, want %d within 1%%' % (i, got, want))
elif mode == 'poisson':
    mean = sum(gaps) / len(gaps)
    # the coefficient of variation over the gaps below 10 means (an
    # exponential has 4.5e-5 of its mass beyond): one scheduler stall of a
    # few ms in the guest (the sender then catches up) would dominate the
    # variance of 20000 gaps; the stalls are counted and bounded apart
    # A stall of the guest (a gap of 10 means or more: an exponential has
    # 4.5e-5 of its mass beyond) is followed by the sender's catch-up: the
    # datagrams that came due during it leave back to back. Neither the
    # stall nor its catch-up says anything of the schedule: the shape is
    # judged on the other gaps (the stall and the next gap/mean gaps left
    # out), and the stalls are counted and bounded apart.
    core, skip, stalls = [], 0, 0
    for g in gaps:
        if g >= 10 * mean:
            stalls += 1
            skip = int(g / mean) + 1
        elif skip:
            skip -= 1
        else:
            core.append(g)
    cm = sum(core) / len(core)
    sd = math.sqrt(sum((g - cm) ** 2 for g in core) / (len(core) - 1))
    cv = sd / cm
    below = sum(1 for g in core if g < cm) / len(core)
    med = sorted(core)[len(core) // 2]
    print('poisson: %d gaps, mean %.1f us (want 200), %d stalls of 10 means or more, %d gaps judged: cv %.3f, '
          'median %.1f us (want %.1f), P(gap < mean) %.3f (want %.3f)'
          % (len(gaps), mean * 1e6, stalls, len(core), cv, med * 1e6, cm * math.log(2) * 1e6, below,
             1 - math.exp(-1)))
    if abs(mean - 200e-6) / 200e-6 > 0.03:
        bad.append('mean gap %.1f us not within 3%% of 200' % (mean * 1e6))
    if not 0.9 <= cv <= 1.1:
        bad.append('coefficient of variation %.3f not within 0.9..1.1' % cv)
    if len(core) < 0.8 * len(gaps):
        bad.append('%d stalls took %d of %d gaps: the host stalled too much to judge the schedule'
                   % (stalls, len(gaps) - len(core), len(gaps)))
    if abs(med - cm * math.log(2)) / (cm * math.log(2)) > 0.05:
        bad.append('median gap %.1f us not within 5%% of mean x ln 2' % (med * 1e6))
    if abs(below - (1 - math.exp(-1))) > 0.03:
        bad.append('P(gap < mean) %.3f not near 1 - 1/e' % below)
elif mode == 'bursts':
    on, off = 50, 2000e-6
    edges = [gaps[k * on - 1] for k in range(1, len(t) // on)]
    inner = sorted(g for i, g in enumerate(gaps) if (i + 1) % on)
    med = inner[len(inner) // 2]
    print('bursts: %d groups, smallest gap between groups %.0f us, median gap inside %.1f us, largest inside %.0f us'
          % (len(t) // on, min(edges) * 1e6, med * 1e6, inner[-1] * 1e6))
    if min(edges) < off - 100e-6:
        bad.append('a gap between groups is %.0f us < 2000' % (min(edges) * 1e6))
    if med > 200e-6:
        bad.append('median gap inside groups %.0f us: not bursts' % (med * 1e6))
for b in bad:
    print('FAIL: ' + b)
sys.exit(1 if bad else 0)
PY

ramp() {
  # 1. ramp
  RT=
  capture ramp --ramp 2k:20k:4 -t 6 -l 32 || capture ramp --ramp 2k:20k:4 -t 6 -l 32 || fail "ramp: the capture lost frames twice"
  python3 "$tmp/pc.py" ramp "$tmp/ramp.pcap" || fail "ramp: per-second rates off the schedule"
}
run_case ramp

poisson() {
  # 2. Poisson. On a loaded machine a sleeping sender wakes late by
  # milliseconds now and then (and catches up in a burst), which shows as long
  # and near-zero gaps that no exponential has: the sender runs at a real-time
  # priority (SCHED_FIFO; it sleeps between datagrams) where chrt can set one.
  RT=
  chrt -f 10 true 2>/dev/null && RT="chrt -f 10"
  # Even so a guest whose vCPU the host holds back for milliseconds shows
  # the same (25 stalls in 20000 gaps, once in ~5 quiet runs of 2026-12-01):
  # a failed trial is run once more, and both must fail to fail the test (a
  # schedule that is not exponential at the mean rate fails every trial).
  poisson_trial() {
    capture poisson --pace poisson -b 5k -n 20000 --seed 7 -l 32 ||
      capture poisson --pace poisson -b 5k -n 20000 --seed 7 -l 32 || fail "poisson: the capture lost frames twice"
    python3 "$tmp/pc.py" poisson "$tmp/poisson.pcap"
  }
  poisson_trial || { echo "poisson: trial failed, once more (host stalls?)"; poisson_trial; } ||
    fail "poisson: gaps are not exponential at the mean rate (two trials)"
}
run_case poisson

bursts() {
  # 3. on/off bursts
  RT=
  capture bursts --burst-on 50 --burst-off 2000 -b 100k -n 1000 -l 32 || capture bursts --burst-on 50 --burst-off 2000 -b 100k -n 1000 -l 32 || fail "bursts: the capture lost frames twice"
  python3 "$tmp/pc.py" bursts "$tmp/bursts.pcap" || fail "bursts: on/off not visible in the capture"
}
run_case bursts
