#!/usr/bin/env bash
# recv --metrics under abuse while it counts a bounded send on loopback:
# garbage bytes, a 1 MB request line, 1 MB of headers, a 1 MB POST body, a
# path outside /metrics, 8 clients that never read their answer, a client
# sending a byte a second, and 100 parallel scrapes (twice)
# (metrics_abuse.py). recv stays up, answers every parallel scrape, its
# scraped counts never go down, and its count stays exact: received ==
# sent, loss 0 against the sender's count. Ports picked free, bounded.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_cmds python3 jq curl
need_txs
probe=$("$TXS" send -n 1 -i 0 --metrics 127.0.0.1:0 198.18.0.2 2>&1 || true)
! grep -q "built without it" <<<"$probe" || skip "txscale was built without libmicrohttpd (--metrics)"
txs_tmp
N=60000
pick() { echo "$(free_port) $(free_port)"; }
under_abuse() {
  local DATA MP RECV_PID up ABUSE_PID a n200 k got sum ssum sent
  # one scenario: recv counts a bounded send while the endpoint is abused;
  # every check below reads that one run
  # a port picked free may be taken before recv binds it (other tests run): pick again
  for try in 1 2 3; do
    read -r DATA MP < <(pick)
    "$TXS" recv -B 127.0.0.1 -p "$DATA" -t 40 --expect $N -i 0 -J --metrics "127.0.0.1:$MP" --metrics-linger 30 \
      >"$tmp/recv.json" 2>"$tmp/recv.err" &
    RECV_PID=$!
    up=0
    for _ in $(seq 100); do
      curl -sf "http://127.0.0.1:$MP/metrics" >/dev/null && { up=1; break; }
      kill -0 $RECV_PID 2>/dev/null || break
      sleep 0.1
    done
    [ $up = 1 ] && break
    wait $RECV_PID 2>/dev/null || true
    grep -q "in use" "$tmp/recv.err" || fail "recv exited: $(cat "$tmp/recv.err")"
  done
  [ $up = 1 ] || fail "recv did not start: $(cat "$tmp/recv.err")"
  python3 "$SRC/tests/integration/metrics_abuse.py" "$MP" 6 >"$tmp/abuse.json" 2>"$tmp/abuse.err" &
  ABUSE_PID=$!
  sleep 0.5
  "$TXS" send --dev udp -b 15kpps -n $N -p "$DATA" -i 0 -J 127.0.0.1 >"$tmp/send.json" 2>"$tmp/send.err" \
    || fail "send failed: $(cat "$tmp/send.err")"
  wait $ABUSE_PID || fail "the endpoint stopped answering: $(cat "$tmp/abuse.json" "$tmp/abuse.err")"
  kill -0 $RECV_PID 2>/dev/null || fail "recv died under abuse: $(cat "$tmp/recv.err")"

  a=$(cat "$tmp/abuse.json")
  n200=$(jq '[.parallel[] | select(. == 200)] | length' <<<"$a")
  [ "$n200" = 200 ] || fail "$n200 of 200 parallel scrapes answered 200: $(jq -c '[.parallel[] | select(. != 200)]' <<<"$a")"
  jq -e '.counts | length > 5' <<<"$a" >/dev/null || fail "too few scrapes during the run: $(jq -c .counts <<<"$a")"
  jq -e '.counts as $c | [range(1; $c | length) | select($c[.] < $c[. - 1])] | length == 0' <<<"$a" >/dev/null \
    || fail "a scraped count went down: $(jq -c .counts <<<"$a")"
  for k in garbage not_http line_1MB headers_1MB post_1MB path; do
    got=$(jq -r ".abuse.$k" <<<"$a")
    case "$k:$got" in
      garbage:*" 400 "* | not_http:*" 400 "* | line_1MB:*" 414 "* | headers_1MB:*" 431 "* | post_1MB:*" 405 "*) ;;
      path:*" 404 "*) ;;
      garbage:closed* | garbage:reset* | line_1MB:closed* | line_1MB:reset* | headers_1MB:closed* | headers_1MB:reset* | post_1MB:closed* | post_1MB:reset*) ;;
      *) fail "$k: answered '$got'" ;;
    esac
  done

  # the run ended (all N arrived): the endpoint says finished, with the count
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$MP/metrics" >"$tmp/final.txt" || fail "no scrape after the run"
    grep -q '^txscale_run_state{kind="recv",state="finished"} 1$' "$tmp/final.txt" && break
    sleep 0.1
  done
  grep -q '^txscale_run_state{kind="recv",state="finished"} 1$' "$tmp/final.txt" || fail "recv never finished"
  grep -q "^txscale_recv_datagrams_total $N\$" "$tmp/final.txt" || fail "scraped total: $(grep '^txscale_recv_datagrams_total' "$tmp/final.txt")"
  if command -v promtool >/dev/null; then
    promtool check metrics <"$tmp/final.txt" || fail "promtool check metrics: the scraped text does not pass"
  fi
  kill -INT $RECV_PID
  wait $RECV_PID || fail "recv failed: $(cat "$tmp/recv.err")"

  sum=$(tail -1 "$tmp/recv.json") ssum=$(tail -1 "$tmp/send.json")
  sent=$(jq -r .packets <<<"$ssum")
  [ "$sent" = $N ] || fail "send sent $sent of $N"
  [ "$(jq -r .received <<<"$sum")" = "$sent" ] || fail "recv counted $(jq -r .received <<<"$sum"), send sent $sent"
  [ "$(jq -r .lost <<<"$sum")" = 0 ] && [ "$(jq -r .duplicates <<<"$sum")" = 0 ] || fail "lost/duplicates: $(jq -c '{lost, duplicates}' <<<"$sum")"
  echo "metrics_abuse: recv stayed up through $(jq -c .abuse <<<"$a" | tr -d '\n'), 200 parallel scrapes answered, count exact ($sent of $sent)"
}
run_case under_abuse

