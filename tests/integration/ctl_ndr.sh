#!/usr/bin/env bash
# txscale ndr --remote between two namespaces (netns lab "cnd"): a `txscale
# server` in cnd-b, the search in cnd-a, against the local namespace mode
# (both children spawned by ndr) on the same veth with the same options.
#   1. a remote search against a 64 KiB receive buffer on the server: a
#      result line, every trial's counts exact (sent = received + lost), one
#      control session for all trials, and the loss of failing trials is the
#      server's socket drops / RcvbufErrors (the buffer reached the server)
#   2. the same report as the local namespace mode at a rate both pass (the
#      NDR itself varies with the load of a shared 2-core box, more than the
#      search's precision: compared by hand, not here)
#   3. bad combinations exit 2 naming the value
# Needs root and jq; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"

# a failing case shows the server's log
FAIL_HOOKS+=('[ -f "${tmp:-/nonexistent}/srv.log" ] && sed "s/^/  server: /" "$tmp/srv.log"')
need_txs

refused() { txs_refuses "$1" ndr "${@:2}"; }
bad_combinations() {
  refused "--remote" --remote nowhere
  refused "DEST '198.18.0.3'" --remote 198.18.0.2 198.18.0.3
  refused "--recv-netns" --remote 198.18.0.2 --recv-netns x
  refused "--recv-args" --remote 198.18.0.2 --recv-args "--window 64"
  echo "ok: bad combinations exit 2"
}
run_case bad_combinations

lab_test cnd ip
mkdir -p "$tmp/t"

ip netns exec "$B" "$TXS" server -B 198.18.0.2 >"$tmp/srv.log" 2>&1 &
srv=$!
wait_for 20 listens || fail "the server does not listen: $(cat "$tmp/srv.log")"

check() {
  local F=$1
  tail -n1 "$F" | jq -e '.type == "ndr"' >/dev/null || fail "$F: no result: $(tail -n1 "$F")"
  jq -e -s '[.[] | select(.type == "trial")] | length > 0 and all(.sent == .received + .lost)' "$F" >/dev/null ||
    fail "$F: a trial's counts do not add up"
}
# remote NS [options]: the search from namespace A against the server in B
remote() {
  local name=$1; shift
  TMPDIR=$tmp/t timeout 300 ip netns exec "$A" "$TXS" ndr --remote 198.18.0.2 -J "$@" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    fail "$name: exit $?: $(cat "$tmp/$name.err")"
  check "$tmp/$name.json"
}

tiny_rcvbuf_search() {
  local F trials tests fails sockfail
  # 1. a real search against a tiny receive buffer on the server: many trials over one session
  # (one datagram per message, udp:gso=off: the kernel counts the server
  # socket's drops in messages, and a GSO message is many: docs/recv.md)
  remote tiny --dev udp:gso=off --trial 1 --precision 10 --max-trials 8 --lo 1kpps --hi 150kpps --recv-args "--rcvbuf 65536"
  F=$tmp/tiny.json
  trials=$(tail -n1 "$F" | jq .trials)
  [ "$trials" -ge 3 ] || fail "tiny: only $trials trials: no search happened"
  [ "$(grep -c 'connected' "$tmp/srv.log")" -eq 1 ] || fail "tiny: expected one session for the search"
  tests=$(grep -c ': test [0-9]*: receive' "$tmp/srv.log" || true)
  [ "$tests" -eq "$trials" ] || fail "tiny: $trials trials, but the server ran $tests tests"
  fails=$(jq -s '[.[] | select(.type == "trial" and (.pass | not))] | length' "$F")
  sockfail=$(jq -s '[.[] | select(.type == "trial" and (.pass | not) and .kernel_drops.sockets > 0
                     and .kernel_drops.sockets == .lost and .kernel_drops.udp.RcvbufErrors == .lost)] | length' "$F")
  [ "$fails" -gt 0 ] || fail "tiny: no trial lost anything with a 64 KiB buffer up to 150k pps"
  [ "$sockfail" -gt 0 ] || fail "tiny: no failing trial's loss equals the server's socket drops and RcvbufErrors"
  echo "ok: remote search, --rcvbuf 65536 on the server: $(tail -n1 "$F" | jq .rate_pps) pps ($(tail -n1 "$F" | jq -r .outcome)), $trials trials over one session, every trial exact; in $sockfail of $fails failing trials the loss is exactly the server's RcvbufErrors"
}
run_case tiny_rcvbuf_search

remote_equals_local() {
  local OPTS r l
  # 2. the same report as the local namespace mode: a rate both pass, by bound
  OPTS=(--trial 1 --precision 5 --max-trials 4 --lo 2kpps --hi 20kpps --recv-args "--rcvbuf 33554432" -J)
  remote same "${OPTS[@]}"
  TMPDIR=$tmp/t timeout 300 "$TXS" ndr --send-netns "$A" --recv-netns "$B" "${OPTS[@]}" 198.18.0.2 >"$tmp/local.json" 2>"$tmp/local.err" ||
    fail "local: exit $?: $(cat "$tmp/local.err")"
  check "$tmp/local.json"
  r=$(tail -n1 "$tmp/same.json" | jq -c '{outcome, rate_pps, confirmed, limited_by}')
  l=$(tail -n1 "$tmp/local.json" | jq -c '{outcome, rate_pps, confirmed, limited_by}')
  [ "$r" = "$l" ] || fail "remote $r, local $l"
  [ "$(jq -r .type "$tmp/same.json" | sort -u | tr '\n' ' ')" = "$(jq -r .type "$tmp/local.json" | sort -u | tr '\n' ' ')" ] ||
    fail "the remote report has other line types than the local one"
  [ -z "$(find "$tmp/t" -mindepth 1)" ] || fail "temporary files left"
  echo "ok: remote and local report the same at 20k pps: $r"
}
run_case remote_equals_local
