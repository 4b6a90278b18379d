#!/usr/bin/env bash
# send/recv --metrics and --metrics-file from the command line: bad values
# refused with exit 2 and a line naming them, a port in use refused, a test
# through a server refuses --metrics, port 0 names the port picked; a
# loopback run's --metrics-file is rewritten during the run and left with
# the final values (equal to recv's JSON summary), passing promtool check
# metrics, with no temporary file left beside it. Built without
# libmicrohttpd, --metrics is refused with one line and --metrics-file works.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_cmds jq python3
need_txs
txs_tmp
refused() { # refused WANT_RC PATTERN CMD...: exits WANT_RC, stderr matches PATTERN
  local want=$1 pat=$2 rc=0
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ $rc -eq "$want" ] || fail "$* exited $rc, not $want: $(cat "$tmp/err")"
  grep -q -- "$pat" "$tmp/err" || fail "$*: no '$pat' in: $(cat "$tmp/err")"
}
help_lists() { grep -q -- --metrics <<<"$("$TXS" recv --help)" || fail "recv --help does not list --metrics"; }
run_case help_lists
have_http=1
probe=$("$TXS" recv -B 127.0.0.1 -p 1 -t 0.1 --metrics 127.0.0.1:0 2>&1 || true)
if grep -q "built without it" <<<"$probe"; then
  have_http=0
fi
bad_values() { # recv|send
  local cmd=$1 extra=()
  [ $cmd = send ] && extra=(-n 1 127.0.0.1)
  refused 2 "bad value for --metrics: 'nohost'" "$TXS" $cmd --metrics nohost "${extra[@]}"
  refused 2 "bad value for --metrics: '127.0.0.1:99999'" "$TXS" $cmd --metrics 127.0.0.1:99999 "${extra[@]}"
  refused 2 "bad value for --metrics-file: '$tmp/no/such/dir/x.prom'" "$TXS" $cmd --metrics-file "$tmp/no/such/dir/x.prom" "${extra[@]}"
}
run_case bad_values_recv bad_values recv
run_case bad_values_send bad_values send
run_case bad_metrics_flows refused 2 "--metrics-flows" "$TXS" recv --metrics-flows 0
run_case server_test_refused refused 2 "not yet to a test set up with a txscale server" "$TXS" send --server -c 127.0.0.1 -n 1 --metrics 127.0.0.1:0

DATA=$(free_port) MP=$(free_port)
endpoint() {
  local HOLD HP
  if [ $have_http = 1 ]; then
    # a port in use: refused before the run, naming it
    python3 -u -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1]); time.sleep(5)' >"$tmp/held" &
    HOLD=$!
    for _ in $(seq 50); do [ -s "$tmp/held" ] && break; sleep 0.1; done
    HP=$(cat "$tmp/held")
    refused 1 "--metrics '127.0.0.1:$HP': Address already in use" "$TXS" recv -B 127.0.0.1 -p "$DATA" -t 1 --metrics "127.0.0.1:$HP"
    kill $HOLD; wait $HOLD 2>/dev/null || true
    # port 0: the one picked is named
    "$TXS" send -n 10 -i 0 --metrics 127.0.0.1:0 198.18.0.2 >/dev/null 2>"$tmp/err" || fail "send: $(cat "$tmp/err")"
    grep -q "^txscale send: metrics at http://127.0.0.1:[1-9][0-9]*/metrics$" "$tmp/err" || fail "port 0 not named: $(cat "$tmp/err")"
  else
    refused 2 "needs libmicrohttpd" "$TXS" recv -B 127.0.0.1 -p "$DATA" -t 1 --metrics "127.0.0.1:$MP"
  fi
}
run_case endpoint

metrics_file() {
  local mf RP SP seen c sum f want
  # --metrics-file during and after a loopback run
  mf=$tmp/tf/txscale.prom
  mkdir -p "$tmp/tf"
  "$TXS" recv -B 127.0.0.1 -p "$DATA" -t 20 --expect 30000 -i 0.5 -J --metrics-file "$mf" --ready-fd 3 >"$tmp/recv.json" 2>"$tmp/recv.err" 3>"$tmp/recv.ready" &
  RP=$!
  wait_ready "$tmp/recv.ready" $RP
  "$TXS" send --dev udp -b 10kpps -n 30000 --flows 2 -p "$DATA" -i 0 127.0.0.1 >/dev/null 2>"$tmp/send.err" &
  SP=$!
  seen=0
  for _ in $(seq 40); do # the file during the run: running, a count between 0 and all
    sleep 0.1
    [ -f "$mf" ] || continue
    c=$(sed -n 's/^txscale_recv_datagrams_total \([0-9]*\)$/\1/p' "$mf")
    if grep -q '^txscale_run_state{kind="recv",state="running"} 1$' "$mf" && [ -n "$c" ] && [ "$c" -gt 0 ] && [ "$c" -lt 30000 ]; then
      seen=1
      break
    fi
  done
  wait $SP || fail "send: $(cat "$tmp/send.err")"
  wait $RP || fail "recv: $(cat "$tmp/recv.err")"
  [ $seen = 1 ] || fail "--metrics-file never showed the run going"
  sum=$(tail -1 "$tmp/recv.json")
  grep -q '^txscale_run_state{kind="recv",state="finished"} 1$' "$mf" || fail "the last file is not finished"
  for f in 0 1; do
    want=$(jq -r ".flows[] | select(.flow == $f) | .received" <<<"$sum")
    grep -q "^txscale_recv_flow_datagrams_total{flow=\"$f\"} $want\$" "$mf" || fail "flow $f: not $want in the file"
  done
  grep -q "^txscale_recv_datagrams_total $(jq -r .received <<<"$sum")\$" "$mf" || fail "file total differs from the summary"
  [ "$(ls -A "$tmp/tf")" = txscale.prom ] || fail "left beside the file: $(ls -A "$tmp/tf")"
  if command -v promtool >/dev/null; then
    promtool check metrics <"$mf" || fail "promtool check metrics: $mf"
  fi
}
run_case metrics_file

