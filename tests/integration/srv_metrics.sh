#!/usr/bin/env bash
# server --metrics scraped by a real Prometheus server (Debian package
# prometheus, started here with a 1 s scrape interval, its own TSDB in the
# test's tmp dir, loopback ports picked free). One `txscale server
# --max-sessions 3` on loopback serves three sessions at once: two `txscale
# send -c` (30000 and 20000 datagrams) and a stock `iperf3 -c -u`; a fourth
# client meanwhile is refused as busy. After the run, PromQL over
# Prometheus's HTTP API returns, per session (labels session, client), the
# totals of that session's receiver JSON (the txscale clients' receiver
# lines, the server's own -J summary of the iperf3 test): datagrams, bytes,
# unique, lost, expected; and the server's own series: sessions_total 3,
# sessions_active 0, sessions_refused_total{reason="max-sessions"} 1.
# Every wait is bounded.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
. "$SRC/tests/integration/prom.bash"
prom_need
need_cmd iperf3
txs_tmp
mkdir -p "$tmp/ts" "$tmp/tc"
# a failing case shows the end of the server's log
FAIL_HOOKS+=('[ -f "$tmp/srv.log" ] && tail -n 30 "$tmp/srv.log" | sed "s/^/  server: /"')

# free ports (the harness's): the data of the two txscale sessions, the control port, the endpoint, Prometheus
DATA=$(free_port) CP=$(free_port) MP=$(free_port) PP=$(free_port) DATA2=$(free_port)

prom_up "$PP" "txscale_server=127.0.0.1:$MP"
# the last sample of a series; the TSDB is this test's, so the window only has to cover the test
last() { val "last_over_time($1[10m])"; }

TMPDIR=$tmp/ts "$TXS" server -B 127.0.0.1 --control-port "$CP" --max-sessions 3 --metrics "127.0.0.1:$MP" -J \
  --ctl-timeout 3 >"$tmp/srv.json" 2>"$tmp/srv.log" &
SRV_PID=$!
CLEANUP_HOOKS+=('kill $SRV_PID 2>/dev/null; wait $SRV_PID 2>/dev/null')
prom_scraped txscale_server $SRV_PID "the server" "$tmp/srv.log"
[ "$(val 'txscale_server_sessions_active')" = 0 ] || fail "sessions_active is not 0 before any client"

sessions() {
txc() { # NAME [send options...]
  local name=$1; shift
  TMPDIR=$tmp/tc timeout 60 "$TXS" send -c 127.0.0.1 --control-port "$CP" -J -i 0 "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
}
# the three run about 3 s each, so that they still run when the fourth comes
# (after a scrape has shown them): b's 20000 at 7k, not 10k, which ended it
# after 2 s and let the fourth in on a loaded box
txc a -p "$DATA" -n 30k -b 10kpps & pa=$!
txc b -p "$DATA2" -n 20k -b 7kpps & pb=$!
timeout 60 iperf3 -c 127.0.0.1 -p "$CP" -u -l 100 -b 1M -t 3 -J >"$tmp/i.json" 2>"$tmp/i.err" & pi=$!
for _ in $(seq 100); do
  [ "$(ss -Htn state established "( sport = :$CP )" | wc -l)" -ge 3 ] && break
  sleep 0.05
done
# the scrape during the run shows the three sessions running
for _ in $(seq 40); do
  [ "$(val 'sum(txscale_server_session_running)')" = 3 ] && break
  sleep 0.25
done
[ "$(val 'sum(txscale_server_session_running)')" = 3 ] || fail "Prometheus never saw three sessions running"
set +e
busy=$(TMPDIR=$tmp/tc timeout 20 "$TXS" send -c 127.0.0.1 --control-port "$CP" -p 1 -n 10 -i 0 2>&1); rc=$?
set -e
[ $rc -eq 1 ] && grep -q "max-sessions 3" <<<"$busy" || fail "the fourth client was not told busy: $busy"
wait $pa || fail "client a: $(cat "$tmp/a.err")"
wait $pb || fail "client b: $(cat "$tmp/b.err")"
wait $pi || fail "iperf3: $(cat "$tmp/i.err") $(jq -r .error "$tmp/i.json")"
# one scrape in the TSDB with every session over (no session active, none
# running): the values it relays are final (the sessions' processes, which
# write them, have exited); the checks below read it back
ended() { [ "$(val 'sum(txscale_server_sessions_active) + sum(txscale_server_session_running)')" = 0 ]; }
wait_for 15 ended || fail "Prometheus never scraped the server with every session over"

# the session whose receiver counted exactly N datagrams
session_of() {
  q "last_over_time(txscale_recv_datagrams_total[10m]) == $1" | jq -r '[.data.result[].metric.session] | join(" ")'
}
checks=0
seen=""
check_session() { # NAME SUMMARY-JSON
  local name=$1 sum=$2 s m f want got
  s=$(session_of "$(jq -r .received <<<"$sum")")
  [ -n "$s" ] && [ "${s// /}" = "$s" ] || fail "$name: not one session with $(jq -r .received <<<"$sum") datagrams: '$s'"
  case " $seen " in *" $s "*) fail "$name: session $s matched twice" ;; esac
  seen="$seen $s"
  [ "$(last "txscale_server_session_running{session=\"$s\",client=\"127.0.0.1\"}")" = 0 ] || fail "$name: session $s still running"
  for pair in datagrams_total:received bytes_total:bytes unique_total:unique duplicates_total:duplicates \
    reordered_total:reordered lost:lost expected:expected; do
    m=${pair%%:*} f=${pair#*:}
    want=$(jq -r ".$f" <<<"$sum") got=$(last "txscale_recv_$m{session=\"$s\",client=\"127.0.0.1\"}")
    [ "$got" = "$want" ] || fail "$name (session $s): txscale_recv_$m: Prometheus has $got, the receiver's JSON $want"
    checks=$((checks + 1))
  done
  echo "ok: $name: session $s: Prometheus's received $(jq -r .received <<<"$sum"), bytes $(jq -r .bytes <<<"$sum"), lost $(jq -r .lost <<<"$sum") = its receiver JSON"
}
ra=$(jq -c 'select(.type == "receiver")' "$tmp/a.json" | tail -n1)
rb=$(jq -c 'select(.type == "receiver")' "$tmp/b.json" | tail -n1)
[ "$(jq -r .unique <<<"$ra")" = 30000 ] && [ "$(jq -r .unique <<<"$rb")" = 20000 ] || fail "the txscale sessions are not exact: $ra $rb"
check_session a "$ra"
check_session b "$rb"
ri=$(jq -c 'select(.type == "summary" and .kind == "recv" and .device == "iperf3")' "$tmp/srv.json" | tail -n1)
[ "$(jq -r .expected <<<"$ri")" = "$(jq .end.sum_sent.packets "$tmp/i.json")" ] || fail "iperf3: the server's summary is not against the client's count: $ri"
check_session iperf3 "$ri"
[ "$(last txscale_server_sessions_total)" = 3 ] || fail "sessions_total: $(last txscale_server_sessions_total)"
[ "$(last txscale_server_sessions_active)" = 0 ] || fail "sessions_active: $(last txscale_server_sessions_active)"
[ "$(last 'txscale_server_sessions_refused_total{reason="max-sessions"}')" = 1 ] ||
  fail "refused{max-sessions}: $(last 'txscale_server_sessions_refused_total{reason="max-sessions"}')"
checks=$((checks + 3))
echo "srv_metrics: $checks checks passed: per session, Prometheus's totals equal the receiver's JSON; sessions total 3, active 0, refused 1"
}
run_case sessions
