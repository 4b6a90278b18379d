#!/usr/bin/env bash
# Clock offset between client and server (docs/control.md, "Clock offset"):
# the two namespaces share one clock, so the truth is known. The offset is
# measured with UDP probes and the kernels' stamps (method udp-kernel-ts),
# its bound at most 4 us on one host (BOUND_NS). The client's
# sender plays a host whose clock is 5 ms behind (TXS_TEST_STAMP_SHIFT_NS,
# test only: its stamps and its side of the exchange):
#   1. forward: the receiver (the server) reports a clock object measured
#      over the channel (source control): offset within its error bound of
#      the true 5 ms, corrected one-way latency within the error bound of the
#      true latency (raw - 5 ms), the raw figure off by the shift, a drift
#      measured after the test; the client's {"type":"receiver"} line carries
#      the same object; the text form says the latency was corrected
#   2. -R: the offset the exchange finds (true 0) is within its error bound:
#      reported, not applied, every sample kept (latency_ns.count = received)
#   3. -R -b 50kpps -n 50k: every one of the 50,000 samples is in latency_ns
#      and in the raw figures, the offset within its bound (at most 4 us)
#      (3b: the same over IPv6, fewer datagrams)
#   4. UDP from the server dropped (nftables in B): the probes go unanswered,
#      the client says so, falls back to the control connection (method
#      control-tcp) and the test runs, bounded in time
#   5. with TXS_OLD_BIN (a txscale from before the opener, docs/control.md):
#      an old server takes a new client's opener for an iperf3 cookie: the
#      test runs over iperf3's protocol, exact, and the first line says so;
#      a new server and an old client run a test exact, uncorrected where the
#      old client has no UDP exchange (control-tcp where it measured over the
#      control connection)
# Needs root and jq; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
SHIFT=-5000000
BOUND_NS=${TXS_CLOCK_BOUND_NS:-4000} # the bound one host must reach over UDP with kernel stamps


lab_test cclk

# server BIN: a server in B (killed by the next call or at exit)
SRV=
server() {
  # a case runs in a subshell, where the last server is no child to wait for: until it is gone (10 s)
  if [ -n "$SRV" ]; then
    kill "$SRV" 2>/dev/null || true
    wait "$SRV" 2>/dev/null || true
    for _ in $(seq 200); do kill -0 "$SRV" 2>/dev/null || break; sleep 0.05; done
    ! kill -0 "$SRV" 2>/dev/null || fail "the last server ($SRV) did not stop within 10 s"
  fi
  lab_server --bin "$1" --ctl-timeout 5
  SRV=$srv
}
client() { # BIN NAME [send options]
  local bin=$1 name=$2
  shift 2
  TMPDIR=$tmp/tc timeout 60 ip netns exec "$A" "$bin" send -J -i 0 "$@" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    fail "$name: send exited $?: $(cat "$tmp/$name.err")"
}
line() { jq -c "select(.type == \"$2\" and (.kind // \"\") == \"$3\")" "$tmp/$1.json" | tail -n1; }

server "$TXS"

forward() {
  local rcv own off err drift cor raw
  # 1. forward, the sender's clock 5 ms behind
  TXS_TEST_STAMP_SHIFT_NS=$SHIFT client "$TXS" fwd -c 198.18.0.2 -n 5000 -b 5kpps -l 32
  grep -q "test only: timestamps shifted by $SHIFT ns" "$tmp/fwd.err" || fail "fwd: the sender did not say it shifted: $(cat "$tmp/fwd.err")"
  rcv=$(line fwd receiver recv)
  own=$(jq -c 'select(.type == "summary" and .kind == "recv")' "$tmp/srv.json" | tail -n1)
  [ "$(jq -c .clock <<<"$rcv")" = "$(jq -c .clock <<<"$own")" ] || fail "fwd: the client's receiver line's clock differs from the server's"
  jq -e --argjson b "$BOUND_NS" '.clock.corrected == true and .clock.source == "control" and .clock.method == "udp-kernel-ts" and
    .clock.error_ns <= $b and (.clock.drift_ns | type) == "number" and .lost_exact and .lost == 0' \
    <<<"$rcv" >/dev/null || fail "fwd: $(jq -c '{clock, lost, lost_exact}' <<<"$rcv")"
  ! grep -q 'clock:' "$tmp/fwd.err" || fail "fwd: the client warned about the clock: $(cat "$tmp/fwd.err")"
  read -r off err drift cor raw < <(jq -r '[.clock.offset_ns, .clock.error_ns, .clock.drift_ns, .latency_ns.mean, .clock.raw_latency_ns.mean] | @tsv' <<<"$rcv")
  awk -v o="$off" -v e="$err" -v s="$SHIFT" 'BEGIN { d = o + s; if (d < 0) d = -d; exit !(d <= e && e < 2e6) }' ||
    fail "fwd: offset $off +- $err: the truth is $((-SHIFT))"
  # the true latency: raw minus the 5 ms the stamps were shifted back
  awk -v c="$cor" -v r="$raw" -v e="$err" -v s="$SHIFT" 'BEGIN { t = r + s; d = c - t; if (d < 0) d = -d; exit !(d <= e && r >= -s) }' ||
    fail "fwd: corrected mean $cor, raw mean $raw, error $err: not within the bound of the true latency"
  awk -v d="$drift" 'BEGIN { if (d < 0) d = -d; exit !(d < 1e6) }' || fail "fwd: drift $drift ns on one clock"
  ok "forward: offset $off +- $err ns (truth $((-SHIFT))), latency corrected $cor ns, raw $raw ns, drift $drift ns"
}
run_case forward

text() {
  TXS_TEST_STAMP_SHIFT_NS=$SHIFT TMPDIR=$tmp/tc timeout 60 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -n 2000 -b 5kpps -l 32 -i 0 \
    >"$tmp/text.out" 2>&1 || fail "text: $(cat "$tmp/text.out")"
  grep -q '^receiver 198.18.0.2: latency CORRECTED by clock offset .*, measured udp-kernel-ts$' "$tmp/text.out" || fail "text: no correction line: $(cat "$tmp/text.out")"
  grep -q '^receiver 198.18.0.2: outages 0,' "$tmp/text.out" || fail "text: no outage line: $(cat "$tmp/text.out")"
  ok "text: $(grep CORRECTED "$tmp/text.out")"
}
run_case text

reverse() {
  local mine
  # 2. reverse: the exchange finds an offset within its error bound (one
  # clock: 0), which is reported and not applied; every sample is in the
  # statistics (none pushed below zero and dropped), raw = latency
  client "$TXS" rev -c 198.18.0.2 -R -n 3000 -b 5kpps -l 32
  mine=$(line rev summary recv)
  jq -e --argjson b "$BOUND_NS" '.clock.corrected == false and .clock.applied == false and .clock.source == "control" and
    .clock.method == "udp-kernel-ts" and .clock.error_ns <= $b and
    (.clock.drift_ns | type) == "number" and ((.clock.offset_ns | if . < 0 then -. else . end) <= .clock.error_ns) and
    .latency_ns.count == .received and .latency_ns.negative == 0 and .clock.raw_latency_ns.p50 == .latency_ns.p50 and
    .lost_exact' <<<"$mine" >/dev/null ||
    fail "rev: $(jq -c '{clock, lost_exact, received, latency_ns}' <<<"$mine")"
  ok "reverse: offset $(jq -r .clock.offset_ns <<<"$mine") +- $(jq -r .clock.error_ns <<<"$mine") ns reported, not applied; $(jq -r .latency_ns.count <<<"$mine") samples of $(jq -r .received <<<"$mine")"
}
run_case reverse

every_sample() {
  local mine
  # 3. the issue's run: 50,000 datagrams at 50kpps, every one a latency sample
  client "$TXS" all -c 198.18.0.2 -R -b 50kpps -n 50k
  mine=$(line all summary recv)
  jq -e --argjson b "$BOUND_NS" '.received == 50000 and .lost == 0 and .latency_ns.count == .received and
    .clock.raw_latency_ns.count == .received and .latency_ns.negative == .latency_ns.floored and
    .clock.method == "udp-kernel-ts" and .clock.error_ns <= $b and
    ((.clock.offset_ns | if . < 0 then -. else . end) <= .clock.error_ns)' <<<"$mine" >/dev/null ||
    fail "all: $(jq -c '{received, lost, latency_ns, clock}' <<<"$mine")"
  ok "50k at 50kpps: $(jq -r .latency_ns.count <<<"$mine") samples of $(jq -r .received <<<"$mine"), offset $(jq -r .clock.offset_ns <<<"$mine") +- $(jq -r .clock.error_ns <<<"$mine") ns ($(jq -r .clock.method <<<"$mine"))"
}
run_case every_sample

v6() {
  local mine
  # 3b. over IPv6: the probes' sockets take the control connection's family
  client "$TXS" v6 -c 2001:2::2 -R -n 2000 -b 5kpps -l 32
  mine=$(line v6 summary recv)
  jq -e --argjson b "$BOUND_NS" '.clock.method == "udp-kernel-ts" and .clock.error_ns <= $b and .lost == 0 and
    .latency_ns.count == .received and ((.clock.offset_ns | if . < 0 then -. else . end) <= .clock.error_ns)' \
    <<<"$mine" >/dev/null || fail "v6: $(jq -c '{received, lost, clock}' <<<"$mine")"
  ok "IPv6: offset $(jq -r '"\(.clock.offset_ns) +- \(.clock.error_ns) ns (\(.clock.method))"' <<<"$mine")"
}
run_case v6

udp_blocked() {
  local mine t0 t1
  # 4. the server's UDP dropped on its way out (the data goes to it, -R is not
  # asked): the probes never come back, the client falls back and says so
  need_cmd nft
  ip netns exec "$B" nft "add table inet txsclk; add chain inet txsclk out { type filter hook output priority 0; };
    add rule inet txsclk out meta l4proto udp drop" || fail "nft: cannot add the rule"
  CLEANUP_HOOKS+=("ip netns exec $B nft delete table inet txsclk 2>/dev/null")
  t0=$(date +%s.%N)
  client "$TXS" blk -c 198.18.0.2 -n 2000 -b 5kpps -l 32
  t1=$(date +%s.%N)
  ip netns exec "$B" nft delete table inet txsclk
  grep -q 'clock: no UDP clock probe .*came back with kernel timestamps.*: measured over the control connection instead (control-tcp)' "$tmp/blk.err" ||
    fail "blk: the fallback was not said: $(cat "$tmp/blk.err")"
  jq -e '.clock.method == "control-tcp" and .clock.source == "control" and .lost_exact and .lost == 0' \
    <<<"$(line blk receiver recv)" >/dev/null || fail "blk: $(line blk receiver recv | jq -c '{clock, lost}')"
  # four probes of 100 ms each before and after the test, then the control connection's exchange
  awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 8) }' || fail "blk: the run took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s"
  ok "UDP dropped: $(grep -o 'clock: .*' "$tmp/blk.err" | head -n1); offset $(line blk receiver recv | jq -r '"\(.clock.offset_ns) +- \(.clock.error_ns) ns"')"
}
run_case udp_blocked

old_peers() {
  local r
  # 5. peers without the UDP exchange (the last case: it replaces the server)
  [ -n "${TXS_OLD_BIN:-}" ] || skip "TXS_OLD_BIN not given: the old-peer checks did not run"
  [ -x "$TXS_OLD_BIN" ] || fail "TXS_OLD_BIN $TXS_OLD_BIN is not executable"
  server "$TXS_OLD_BIN"
  client "$TXS" oldsrv -c 198.18.0.2 -n 3000 -b 5kpps -l 32
  jq -e '.lost_exact and .lost == 0 and ((.clock // {corrected: false}).corrected == false)' <<<"$(line oldsrv receiver recv)" >/dev/null ||
    fail "old server: $(line oldsrv receiver recv | head -c 300)"
  # a server from before the opener (docs/control.md) takes it for an iperf3 client's cookie: the test
  # runs over iperf3's protocol, exact, and the first line says so
  client "$TXS" oldsrvr -c 198.18.0.2 -R -n 3000 -b 5kpps -l 32
  r=$(line oldsrvr summary recv)
  jq -e '.device == "iperf3" and .received == 3000 and .lost == 0 and .lost_exact' <<<"$r" >/dev/null ||
    fail "old server, -R: $(head -c 300 <<<"$r")"
  TMPDIR=$tmp/tc timeout 60 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -n 1000 -b 5kpps -l 32 -i 0 >"$tmp/oldsrvt.out" 2>&1 ||
    fail "old server, text: $(cat "$tmp/oldsrvt.out")"
  head -n1 "$tmp/oldsrvt.out" | grep -q "iperf3 server 198.18.0.2" ||
    fail "old server: the first line does not name iperf3's protocol: $(head -n1 "$tmp/oldsrvt.out")"
  ok "an old server (before the opener): the new client runs iperf3's protocol with it, exact, and its first line says so"
  server "$TXS"
  client "$TXS_OLD_BIN" oldcli -c 198.18.0.2 -n 3000 -b 5kpps -l 32
  r=$(line oldcli receiver recv)
  # (an old client with the UDP exchange measures as a new one does)
  jq -e '.lost_exact and .lost == 0 and (.clock.method == "udp-kernel-ts" or .clock.corrected == false and
    (.clock.applied == null or .clock.method == "control-tcp"))' <<<"$r" >/dev/null ||
    fail "old client: $(head -c 300 <<<"$r")"
  ok "a new server with an old client: exact; the old client's clock: $(jq -c '.clock | {method, offset_ns, error_ns}' <<<"$r")"
}
run_case old_peers

