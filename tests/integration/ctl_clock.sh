#!/usr/bin/env bash
# Clock offset over the control channel (docs/control.md, "Clock offset"):
# the two namespaces share one clock, so the truth is known. The client's
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
#   3. with TXS_OLD_BIN (a txscale without the exchange): an old server and a
#      new client, a new server and an old client, each run a test
#      uncorrected and exact
# Needs root and jq; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
SHIFT=-5000000


lab_test cclk

# server BIN: a server in B (killed by the next call or at exit)
SRV=
server() {
  [ -z "$SRV" ] || { kill "$SRV" 2>/dev/null || true; wait "$SRV" 2>/dev/null || true; }
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
  jq -e '.clock.corrected == true and .clock.source == "control" and (.clock.drift_ns | type) == "number" and .lost_exact and .lost == 0' \
    <<<"$rcv" >/dev/null || fail "fwd: $(jq -c '{clock, lost, lost_exact}' <<<"$rcv")"
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
  grep -q '^receiver 198.18.0.2: latency CORRECTED by clock offset ' "$tmp/text.out" || fail "text: no correction line: $(cat "$tmp/text.out")"
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
  jq -e '.clock.corrected == false and .clock.applied == false and .clock.source == "control" and
    (.clock.drift_ns | type) == "number" and ((.clock.offset_ns | if . < 0 then -. else . end) <= .clock.error_ns) and
    .latency_ns.count == .received and .latency_ns.negative == 0 and .clock.raw_latency_ns.p50 == .latency_ns.p50 and
    .lost_exact' <<<"$mine" >/dev/null ||
    fail "rev: $(jq -c '{clock, lost_exact, received, latency_ns}' <<<"$mine")"
  ok "reverse: offset $(jq -r .clock.offset_ns <<<"$mine") +- $(jq -r .clock.error_ns <<<"$mine") ns reported, not applied; $(jq -r .latency_ns.count <<<"$mine") samples of $(jq -r .received <<<"$mine")"
}
run_case reverse

old_peers() {
  # 3. peers without the exchange (the last case: it replaces the server)
  [ -n "${TXS_OLD_BIN:-}" ] || skip "TXS_OLD_BIN not given: the old-peer checks did not run"
  [ -x "$TXS_OLD_BIN" ] || fail "TXS_OLD_BIN $TXS_OLD_BIN is not executable"
  server "$TXS_OLD_BIN"
  client "$TXS" oldsrv -c 198.18.0.2 -n 3000 -b 5kpps -l 32
  jq -e '.lost_exact and .lost == 0 and ((.clock // {corrected: false}).corrected == false)' <<<"$(line oldsrv receiver recv)" >/dev/null ||
    fail "old server: $(line oldsrv receiver recv | head -c 300)"
  server "$TXS"
  client "$TXS_OLD_BIN" oldcli -c 198.18.0.2 -n 3000 -b 5kpps -l 32
  jq -e '.lost_exact and .lost == 0 and .clock.corrected == false' <<<"$(line oldcli receiver recv)" >/dev/null ||
    fail "old client: $(line oldcli receiver recv | head -c 300)"
  ok "an old server with a new client and a new server with an old client: exact, uncorrected"
}
run_case old_peers

