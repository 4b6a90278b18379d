# A real Prometheus for the metrics tests (source after common.bash).
# prom_need: skips (77) without prometheus, curl, jq, or a txscale with
# --metrics (libmicrohttpd).
# prom_up PORT TARGET...: starts prometheus on 127.0.0.1:PORT scraping each
# TARGET ("job=ADDR:PORT") every second, its TSDB in $tmp, and waits until it
# is ready (bounded); q PROMQL prints the API's JSON, val PROMQL the first
# result's value ("none" without one); prom_scraped JOB PID WHAT LOG waits
# for Prometheus's first scrape of JOB.
prom_up() {
  PP=$1; shift
  {
    printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n'
    local t
    for t in "$@"; do
      printf '  - job_name: %s\n    static_configs: [ { targets: ["%s"] } ]\n' "${t%%=*}" "${t#*=}"
    done
  } >"$tmp/prometheus.yml"
  prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
    --web.listen-address="127.0.0.1:$PP" >"$tmp/prom.log" 2>&1 &
  PROM_PID=$!
  CLEANUP_HOOKS+=('kill $PROM_PID 2>/dev/null; wait $PROM_PID 2>/dev/null')
  for _ in $(seq 100); do
    curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$PP/-/ready" && return 0
    kill -0 $PROM_PID 2>/dev/null || fail "prometheus exited: $(tail -5 "$tmp/prom.log")"
    sleep 0.2
  done
  fail "prometheus was not ready within 20 s: $(tail -5 "$tmp/prom.log")"
}
q() { curl -sf --max-time 5 -G --data-urlencode "query=$1" "http://127.0.0.1:$PP/api/v1/query"; }
val() { q "$1" | jq -r '.data.result[0].value[1] // "none"'; }
# prom_scraped JOB PID WHAT LOG: waits (at most 30 s) until Prometheus has
# scraped JOB (up == 1); fails when PID (WHAT, its stderr in LOG) ends first
prom_scraped() {
  local job=$1 pid=$2 what=$3 log=$4
  for _ in $(seq 150); do
    [ "$(val "up{job=\"$job\"}")" = 1 ] && return 0
    kill -0 "$pid" 2>/dev/null || fail "$what exited: $(cat "$log")"
    sleep 0.2
  done
  [ "$(val "up{job=\"$job\"}")" = 1 ] || fail "Prometheus never scraped $what: $(tail -3 "$tmp/prom.log")"
}
prom_need() {
  need_cmds prometheus curl jq
  need_txs
  local probe
  probe=$("$TXS" send -n 1 -i 0 --metrics 127.0.0.1:0 198.18.0.2 2>&1 || true)
  ! grep -q "built without it" <<<"$probe" || skip "txscale was built without libmicrohttpd (--metrics)"
}
