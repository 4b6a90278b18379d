#!/usr/bin/env bash
# Hostile or vanishing peers on the control channel, on loopback:
#   1. a txscale server whose session dies mid-test: `send -c` (-t 20) ends
#      within seconds with exit 1 and a line saying why, not at its -t
#   2. an iperf3 server (Debian's 3.12) killed mid-test: `send -c` against
#      it ends at once the same way
#   3. a CPU list this server does not have (--remote-cpus 0-4095) is
#      refused before any process starts (no receiver is started)
# Loopback only (127.0.0.1); needs iperf3 for case 2 (skipped without).
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_txs
txs_tmp

session_dies() {
  local PORT srv t0 cl sess rc t
  # 1. a txscale server's session dies
  PORT=$(free_port)
  "$TXS" server -B 127.0.0.1 --control-port "$PORT" >"$tmp/srv.log" 2>&1 &
  srv=$!
  wait_for 20 listens "$PORT" || fail "the server does not listen on $PORT"
  t0=$(date +%s.%N)
  "$TXS" send -c 127.0.0.1 --control-port "$PORT" -p "$(free_port)" -t 20 -b 1kpps -i 0 >"$tmp/c1.out" 2>&1 &
  cl=$!
  sess=
  for _ in $(seq 100); do
    sess=$(ps --ppid "$srv" -o pid= | head -n1 | tr -d " ") || true # ps fails while there is no child yet
    [ -n "$sess" ] && grep -q 'connected' "$tmp/srv.log" 2>/dev/null && break
    sleep 0.1
  done
  [ -n "$sess" ] || fail "no session process under the server"
  sleep 1
  kill -9 "$sess"
  rc=0
  wait "$cl" || rc=$?
  t=$(echo "$(date +%s.%N) - $t0" | bc)
  kill "$srv" 2>/dev/null || true
  [ "$rc" = 1 ] || fail "txscale: the client exited $rc after the server's session died: $(cat "$tmp/c1.out")"
  [ "$(echo "$t < 12" | bc)" = 1 ] || fail "txscale: the client took $t s (its -t is 20)"
  grep -q 'txscale send: 127.0.0.1: ' "$tmp/c1.out" || fail "txscale: no line saying why: $(cat "$tmp/c1.out")"
  echo "ok: a txscale server's session died: the client ended after $t s (-t 20): $(grep 'txscale send: 127.0.0.1: ' "$tmp/c1.out" | head -n1)"
}
run_case session_dies

cpus_refused() {
  local PORT srv rc=0
  # 3. a CPU list checked before any process starts
  PORT=$(free_port)
  "$TXS" server -B 127.0.0.1 --control-port "$PORT" -1 >"$tmp/srv3.log" 2>&1 &
  srv=$!
  wait_for 20 listens "$PORT" || fail "the server does not listen on $PORT"
  "$TXS" send -c 127.0.0.1 --control-port "$PORT" -p "$(free_port)" --remote-cpus 0-4095 -n 10 -b 1kpps -i 0 >"$tmp/c3.out" 2>&1 || rc=$?
  wait "$srv" || true
  [ "$rc" = 1 ] && grep -q "the receiver's CPU list '0-4095'" "$tmp/c3.out" || fail "cpus: exit $rc: $(cat "$tmp/c3.out")"
  if grep -q 'test 1: receive' "$tmp/srv3.log"; then fail "cpus: a receiver was started: $(cat "$tmp/srv3.log")"; fi
  echo "ok: a CPU list the server does not have is refused before any process starts"
}
run_case cpus_refused

iperf3_dies() {
  local PORT isrv t0 cl rc t
  # 2. an iperf3 server dies
  need_cmd iperf3 "no iperf3: case 2 skipped"
  PORT=$(free_port)
  iperf3 -s -1 -B 127.0.0.1 -p "$PORT" >"$tmp/ip3.log" 2>&1 &
  isrv=$!
  wait_for 20 listens "$PORT" || fail "iperf3 does not listen on $PORT"
  t0=$(date +%s.%N)
  "$TXS" send -c 127.0.0.1 --control-port "$PORT" -t 20 -l 100 -b 1kpps >"$tmp/c2.out" 2>&1 &
  cl=$!
  sleep 2.5
  kill -9 "$isrv"
  rc=0
  wait "$cl" || rc=$?
  t=$(echo "$(date +%s.%N) - $t0" | bc)
  [ "$rc" = 1 ] || fail "iperf3: the client exited $rc: $(cat "$tmp/c2.out")"
  [ "$(echo "$t < 6" | bc)" = 1 ] || fail "iperf3: the client took $t s (its -t is 20)"
  grep -q 'the peer closed it' "$tmp/c2.out" || fail "iperf3: no line saying why: $(cat "$tmp/c2.out")"
  echo "ok: an iperf3 server died: the client ended after $t s (-t 20)"
}
run_case iperf3_dies

