#!/usr/bin/env bash
# send --metrics and recv --metrics scraped by a real Prometheus server
# (Debian package prometheus), started here with a 1 s scrape interval, its
# own TSDB in the test's tmp dir and a loopback port. A bounded send -> recv
# on loopback (4 flows, 40000 datagrams, exact loss from the sender's
# summary); after the run, PromQL over Prometheus's HTTP API
# (/api/v1/query) returns recv's JSON summary's totals and per-flow counts
# exactly, and send's; per-flow series were scraped during the run too.
# Ports are picked free; every wait is bounded.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
. "$SRC/tests/integration/prom.bash"
prom_need
txs_tmp

# free ports: UDP for the data, TCP for the endpoints and Prometheus
DATA=$(free_port) MR=$(free_port) MS=$(free_port) PP=$(free_port)

prom_up "$PP" "txscale_recv=127.0.0.1:$MR" "txscale_send=127.0.0.1:$MS"
# the last sample of a series (once its target is gone, its series are
# stale); the TSDB is this test's, so the window only has to cover the test
last() { val "last_over_time($1[10m])"; }

# summed FILE: FILE's last line is a JSON summary (a run prints it before its linger)
summed() { tail -n1 "$1" 2>/dev/null | jq -e '.type == "summary"' >/dev/null 2>&1; }
# finished KIND: Prometheus has scraped KIND's finished state; the final
# values come in the same scrape (the endpoint writes them from one snapshot)
finished() { [ "$(last "txscale_run_state{kind=\"$1\",state=\"finished\"}")" = 1 ]; }
run() {
  local RECV_PID SEND_PID rc=0
  "$TXS" recv -B 127.0.0.1 -p "$DATA" -t 40 --idle 2 --sender-summary "$tmp/send.json" -i 0 -J \
    --metrics "127.0.0.1:$MR" --metrics-linger 4 >"$tmp/recv.json" 2>"$tmp/recv.err" &
  RECV_PID=$!
  # Prometheus scrapes recv (up == 1) before anything is sent
  prom_scraped txscale_recv $RECV_PID recv "$tmp/recv.err"
  [ "$(val 'txscale_run_state{kind="recv",state="running"}')" = 1 ] || fail "recv's run_state is not running"

  "$TXS" send --dev udp -b 20kpps -n 40000 --flows 4 -p "$DATA" -i 0 -J --summary-file "$tmp/send.json" \
    --metrics "127.0.0.1:$MS" --metrics-linger 4 127.0.0.1 >"$tmp/sendout.json" 2>"$tmp/send.err" &
  SEND_PID=$!
  # both runs over (their summaries printed), their finished states and
  # final values scraped: the lingers need not run out
  wait_for 30 summed "$tmp/sendout.json" || fail "send printed no summary: $(cat "$tmp/send.err")"
  wait_for 30 summed "$tmp/recv.json" || fail "recv printed no summary: $(cat "$tmp/recv.err")"
  wait_for 10 finished send || fail "Prometheus never scraped send's finished run"
  wait_for 10 finished recv || fail "Prometheus never scraped recv's finished run"
  kill -TERM $SEND_PID $RECV_PID 2>/dev/null || true
  wait $SEND_PID || fail "send failed: $(cat "$tmp/send.err")"
  wait $RECV_PID || fail "recv failed: $(cat "$tmp/recv.err")"

  sum=$(tail -1 "$tmp/recv.json")
  [ "$(jq -r .type <<<"$sum")" = summary ] || fail "no recv summary"
  [ "$(jq -r .received <<<"$sum")" = 40000 ] || fail "recv counted $(jq -r .received <<<"$sum") of 40000"
  [ "$(jq -r .lost_exact <<<"$sum")" = true ] || fail "recv's loss is not exact"
}
run_case run


# the cases below read the run's summaries and Prometheus's TSDB
recv_totals() {
  local sum pair m f want got
  sum=$(tail -1 "$tmp/recv.json")
  for pair in datagrams_total:received bytes_total:bytes unique_total:unique duplicates_total:duplicates \
    reordered_total:reordered late_total:late malformed_total:malformed lost:lost expected:expected; do
    m=${pair%%:*} f=${pair#*:}
    want=$(jq -r ".$f" <<<"$sum") got=$(last "txscale_recv_$m")
    [ "$got" = "$want" ] || fail "txscale_recv_$m: Prometheus has $got, recv's summary $want"
  done
}
run_case --needs run recv_totals

recv_flows() {
  local sum nflows i id pair m f want got
  sum=$(tail -1 "$tmp/recv.json")
  nflows=$(jq '.flows | length' <<<"$sum")
  [ "$nflows" = 4 ] || fail "recv saw $nflows flows, not 4"
  for i in $(seq 0 $((nflows - 1))); do
    id=$(jq -r ".flows[$i].flow" <<<"$sum")
    for pair in datagrams_total:received bytes_total:bytes unique_total:unique lost:lost expected:expected \
      duplicates_total:duplicates reordered_total:reordered; do
      m=${pair%%:*} f=${pair#*:}
      want=$(jq -r ".flows[$i].$f" <<<"$sum") got=$(last "txscale_recv_flow_$m{flow=\"$id\"}")
      [ "$got" = "$want" ] || fail "flow $id txscale_recv_flow_$m: Prometheus has $got, the summary $want"
    done
  done
}
run_case --needs run recv_flows

recv_live_and_sums() {
  local sum f0 live got
  sum=$(tail -1 "$tmp/recv.json")
  # per-flow series were scraped live too: a sample of flow 0 below its final count
  f0=$(jq -r '.flows[] | select(.flow == 0) | .received' <<<"$sum")
  live=$(val "max_over_time((txscale_recv_flow_datagrams_total{flow=\"0\"} < $f0)[10m:250ms])")
  [ "$live" != none ] && [ "${live%.*}" -gt 0 ] || fail "no live per-flow sample below the final $f0 (got $live)"
  # the sum over flows in PromQL is the total
  got=$(val 'sum(last_over_time(txscale_recv_flow_datagrams_total[10m]))')
  [ "$got" = 40000 ] || fail "sum over flows in Prometheus: $got"
  [ "$(last 'txscale_run_state{kind="recv",state="finished"}')" = 1 ] || fail "recv's last run_state is not finished"
  [ "$(last 'txscale_recv_latency_seconds_count')" = "$(jq -r .latency_ns.count <<<"$sum")" ] \
    || fail "latency histogram count differs from the summary's"
}
run_case --needs run recv_live_and_sums

recv_kernel_counters() {
  local sum c want
  sum=$(tail -1 "$tmp/recv.json")
  # the kernel's counters: the summary's delta, to the datagram
  for c in RcvbufErrors InDatagrams InErrors; do
    want=$(jq -r ".kernel_drops.udp.$c" <<<"$sum")
    [ "$(last "txscale_recv_kernel_udp_total{proto=\"udp\",counter=\"$c\"}")" = "$want" ] \
      || fail "kernel UDP $c differs from the summary's ($want)"
  done
  for c in rx_packets rx_dropped; do
    want=$(jq -r ".kernel_drops.interfaces.lo.$c" <<<"$sum")
    [ "$(last "txscale_recv_kernel_interface_total{interface=\"lo\",counter=\"$c\"}")" = "$want" ] \
      || fail "lo $c differs from the summary's ($want)"
  done
  [ "$(last txscale_recv_socket_drops_total)" = "$(jq -r .input.socket_drops <<<"$sum")" ] || fail "socket drops differ"
}
run_case --needs run recv_kernel_counters

send_totals() {
  local ssum
  ssum=$(tail -1 "$tmp/sendout.json")
  [ "$(last txscale_send_datagrams_total)" = "$(jq -r .packets <<<"$ssum")" ] || fail "send's total differs"
  [ "$(last 'txscale_send_thread_datagrams_total{thread="0"}')" = "$(jq -r '.threads[0].packets' <<<"$ssum")" ] \
    || fail "send's thread 0 differs"
  [ "$(last 'txscale_send_drops_total{where="full"}')" = "$(jq -r .drops <<<"$ssum")" ] || fail "send's drops differ"
  [ "$(last 'txscale_run_state{kind="send",state="finished"}')" = 1 ] || fail "send's last run_state is not finished"
}
run_case --needs run send_totals

