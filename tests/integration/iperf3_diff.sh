#!/usr/bin/env bash
# The iperf3 differential: the same stock iperf3 client command (Debian's
# 3.12) against a stock `iperf3 -s` and against `txscale server`, in one
# run, on one lab of two namespaces as two hosts ("ip3d": MTU 9000,
# neighbours by ARP/ND, not static), compared on the client's own figures:
# exit status, duration, the number of intervals and each interval's
# datagrams, the loss it prints, and the UDP receive-buffer drops
# (RcvbufErrors in /proc/net/snmp) of both hosts, which bound the loss on a
# veth that loses nothing else. The txscale server on 5201, the stock one on
# 5202 (iperf3's streams use the control port's number).
#   rev16      -R -l 16 -b 10M: TEST_RUNNING is on the wire before the
#              server's first datagram (a capture at the client: before
#              TCP_NODELAY it was held by Nagle while the data flowed, and
#              the client's socket overflowed), and the loss is the hosts'
#              socket drops, as the stock server's
#   revk_loss  -R -k 5000 with nftables dropping 1 datagram in 500: the
#              client ends once 5000 arrived (both servers send until its
#              TEST_END), rc 0 within seconds (it never ended before)
#   the matrix -R -k, -k, -R -n with loss, -P 4, -P 4 -R, --bidir (with the
#              capture), -i 1, -l 1400, -l 9000 (two fragments at MTU 9000:
#              the client still counts every datagram), -O 1, IPv6
#   client     txscale's client beside iperf3's against a stock one-off
#              server: forward, -R, and -R -n with loss, compared on the
#              server's figures and each client's
# Run time about a minute (-t 1 or -k at 10 Mbit/s). Needs root, jq,
# iperf3, nft, dumpcap/tshark; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"

lab_test --later ip3d iperf3 nft tshark dumpcap
lab_up "$LAB" --mtu 9000 --neigh dynamic
STOCK=5202
H4=198.18.0.2 H6=2001:2::2
lab_server --ctl-timeout 3 --max-time 20
ip netns exec "$B" iperf3 -s -p $STOCK >"$tmp/stock.log" 2>&1 &
wait_for 20 listens $STOCK || fail "iperf3 -s -p $STOCK does not listen"
FAIL_HOOKS+=('tail -n 20 "$tmp/stock.log" | sed "s/^/  iperf3 -s: /"')

# udp_field NS FIELD: FIELD of the Udp: lines of /proc/net/snmp in namespace NS
udp_field() { ip netns exec "$1" awk -v f="$2" '/^Udp:/ { if (h) { print $(c); exit } for (i = 1; i <= NF; i++) if ($i == f) c = i; h = 1 }' /proc/net/snmp; }
# drops TABLE: the packets an nftables table of the client's host counted (its drop rule)
nft_count() { ip netns exec "$A" nft -j list table inet "$1" | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add // 0'; }

# one NAME KIND HOST [iperf3 args]: the stock client against server KIND
# (txs or stock); its JSON in $tmp/NAME.KIND.json, its figures in
# $tmp/NAME.KIND.fig (one JSON object: rc, wall_ms, the hosts' RcvbufErrors
# during the run, error, intervals' datagrams, sent, received, lost, bytes)
one() {
  local name=$1 kind=$2 host=$3 port=5201 a0 b0 t0 t1 rc=0 drop=0
  shift 3
  [ "$kind" = txs ] || port=$STOCK
  a0=$(udp_field "$A" RcvbufErrors) b0=$(udp_field "$B" RcvbufErrors)
  [ -z "${DROP_TABLE:-}" ] || drop=$(nft_count "$DROP_TABLE")
  t0=$(date +%s%N)
  timeout 60 ip netns exec "$A" iperf3 -c "$host" -p $port -u -J "$@" >"$tmp/$name.$kind.json" 2>"$tmp/$name.$kind.err" || rc=$?
  t1=$(date +%s%N)
  [ -z "${DROP_TABLE:-}" ] || drop=$(( $(nft_count "$DROP_TABLE") - drop ))
  jq -c --argjson rc $rc --argjson wall $(( (t1 - t0) / 1000000 )) --argjson drop $drop \
    --argjson ra $(( $(udp_field "$A" RcvbufErrors) - a0 )) --argjson rb $(( $(udp_field "$B" RcvbufErrors) - b0 )) \
    '{rc: $rc, wall_ms: $wall, rcvbuf_client: $ra, rcvbuf_server: $rb, nft_drops: $drop, error: (.error // null),
      intervals: [.intervals[]? | .sum.packets], rintervals: [.intervals[]? | .sum_bidir_reverse.packets // empty],
      sent: .end.sum_sent.packets, received: .end.sum_received.packets, lost: .end.sum_received.lost_packets,
      rbytes: .end.sum_received.bytes, seconds: .end.sum_received.seconds, streams: (.end.streams // [] | length)}' \
    "$tmp/$name.$kind.json" >"$tmp/$name.$kind.fig" 2>/dev/null ||
    fail "$name ($kind): rc $rc, no JSON from iperf3: $(head -c 300 "$tmp/$name.$kind.json") $(cat "$tmp/$name.$kind.err")"
  echo "$kind: $(cat "$tmp/$name.$kind.fig")"
}
fig() { jq -rc "$2" "$tmp/$1.fig"; }

# same NAME LEN [--paced]: the two runs of NAME agree on the client's figures.
# Both exit 0 with no error; the same number of intervals; durations within
# 1 s; each run's loss is no more than its hosts' socket drops plus the
# nftables drops (a veth loses nothing else); the bytes received are whole
# LEN-byte datagrams. --paced: each interval's datagrams within 10% (+50) of
# the other's (a noisy 2-core host: the rate is the client's own -b)
same() {
  local name=$1 len=$2 paced=${3:-} k
  for k in stock txs; do
    fig "$name.$k" '"\(.rc) \(.error)"' | grep -qx '0 null' || fail "$name ($k): $(cat "$tmp/$name.$k.fig")"
    jq -e --argjson l "$len" '.lost <= .rcvbuf_client + .rcvbuf_server + .nft_drops and .lost >= 0 and .rbytes % $l == 0' \
      "$tmp/$name.$k.fig" >/dev/null || fail "$name ($k): a loss the hosts' socket drops and nftables do not explain, or bytes not whole datagrams: $(cat "$tmp/$name.$k.fig")"
  done
  [ "$(fig "$name.stock" '.intervals | length')" = "$(fig "$name.txs" '.intervals | length')" ] ||
    fail "$name: intervals $(fig "$name.stock" '.intervals') (stock) and $(fig "$name.txs" '.intervals') (txscale)"
  [ "$(fig "$name.stock" '.streams')" = "$(fig "$name.txs" '.streams')" ] || fail "$name: not the same number of streams"
  local ws wt
  ws=$(fig "$name.stock" .wall_ms) wt=$(fig "$name.txs" .wall_ms)
  [ $((wt - ws)) -le 1000 ] && [ $((ws - wt)) -le 1000 ] || fail "$name: the client ran $ws ms against stock, $wt ms against txscale"
  if [ "$paced" = --paced ]; then
    jq -e -n --slurpfile s "$tmp/$name.stock.fig" --slurpfile t "$tmp/$name.txs.fig" \
      '[range($s[0].intervals | length) | ($s[0].intervals[.] - $t[0].intervals[.]) | fabs <= ($s[0].intervals[.] * 0.1 + 50)] | all' >/dev/null ||
      fail "$name: per-interval datagrams differ by over 10%: stock $(fig "$name.stock" .intervals), txscale $(fig "$name.txs" .intervals)"
  fi
  ok "$name: rc 0 both, $(fig "$name.stock" '.intervals | length') intervals, $ws ms / $wt ms, lost $(fig "$name.stock" .lost) / $(fig "$name.txs" .lost) (socket drops $(fig "$name.stock" '.rcvbuf_client + .rcvbuf_server') / $(fig "$name.txs" '.rcvbuf_client + .rcvbuf_server'))"
}

# pair NAME LEN [--paced] -- [iperf3 args]: one against each server, then same
pair() {
  local name=$1 len=$2 paced=
  shift 2
  if [ "$1" = --paced ]; then paced=--paced; shift; fi
  [ "$1" = -- ] && shift
  one "$name" stock "$@"
  one "$name" txs "$@"
  same "$name" "$len" $paced
}

# running_first PCAP PORT: in a capture at the client, the server's
# TEST_RUNNING (the 4th byte it writes on the control connection, after
# PARAM_EXCHANGE, CREATE_STREAMS, TEST_START) is in a frame before the
# server's first test datagram (a UDP payload over 4 bytes: not the stream
# handshake's reply). Says the two frame numbers.
running_first() {
  local pcap=$1 port=$2 bytes frames= f run data i=0 k
  # the server's control bytes, frame by frame
  run=
  while read -r f bytes; do
    [ -n "$bytes" ] || continue
    for ((k = 0; k < ${#bytes}; k += 2)); do
      i=$((i + 1))
      [ $i -le 4 ] || break
      frames+="${bytes:k:2} "
      [ $i -eq 4 ] && run=$f
    done
    [ $i -lt 4 ] || break
  done < <(tshark -r "$pcap" -Y "tcp.srcport == $port && tcp.len > 0" -T fields -e frame.number -e tcp.payload 2>/dev/null)
  [ "$frames" = "09 0a 01 02 " ] || { echo "the server's first control bytes: $frames"; return 1; }
  data=$(tshark -r "$pcap" -Y "udp.srcport == $port && udp.length > 12" -T fields -e frame.number 2>/dev/null | head -n1)
  [ -n "$data" ] || { echo "no datagram from the server"; return 1; }
  echo "TEST_RUNNING in frame $run, the first datagram in frame $data"
  [ "$run" -lt "$data" ]
}

# captured NAME KIND HOST [iperf3 args]: one, under a capture at the client
# ($tmp/NAME.KIND.pcap); then running_first
captured() {
  local name=$1 kind=$2 port=5201 cap why
  [ "$kind" = txs ] || port=$STOCK
  ip netns exec "$A" dumpcap -q -i tx0 -f "port $port" -w "$tmp/$name.$kind.pcap" 2>"$tmp/$name.$kind.cap" &
  cap=$!
  capturing "$tmp/$name.$kind.cap" || fail "$name ($kind): dumpcap did not start: $(cat "$tmp/$name.$kind.cap")"
  one "$@"
  capture_end $cap
  why=$(running_first "$tmp/$name.$kind.pcap" $port) || fail "$name ($kind): TEST_RUNNING after the data: $why"
  ok "$name ($kind): $why"
}

rev16() {
  captured rev16 stock $H4 -R -l 16 -b 10M -t 1
  captured rev16 txs $H4 -R -l 16 -b 10M -t 1
  same rev16 16
}
run_case rev16

# drop_rule TABLE LEN PORT: an nftables table in the client's host that
# drops 1 in 500 of the LEN-byte test datagrams from PORT (not the stream
# handshake's reply), counted; removed at the case's end
drop_rule() {
  ip netns exec "$A" nft "add table inet $1; add chain inet $1 in { type filter hook input priority 0; }; add rule inet $1 in udp sport { 5201, $STOCK } udp length $(($2 + 8)) numgen inc mod 500 0 counter drop"
  CLEANUP_HOOKS+=("ip netns exec '$A' nft delete table inet $1 2>/dev/null")
}

revk_loss() {
  drop_rule ip3dk 100
  DROP_TABLE=ip3dk pair revk_loss 100 -- $H4 -R -l 100 -b 10M -k 5000
  local k
  for k in stock txs; do
    jq -e '.nft_drops > 0 and .wall_ms < 5000 and .received >= 5000' "$tmp/revk_loss.$k.fig" >/dev/null ||
      fail "revk_loss ($k): not ended within 5 s with 5000 received, or nothing dropped: $(cat "$tmp/revk_loss.$k.fig")"
  done
  ok "revk_loss: nftables dropped $(fig revk_loss.stock .nft_drops) / $(fig revk_loss.txs .nft_drops); ended in $(fig revk_loss.stock .wall_ms) / $(fig revk_loss.txs .wall_ms) ms"
}
run_case revk_loss

# ---- txscale's client ------------------------------------------------------------------------------

# client_bind: send -c HOST -B ADDR leaves from ADDR for everything, as
# iperf3's -B: the control connection (a txscale server's log names the
# session's client by it; a stock server's JSON its remote_host), the data
# (the stock server's streams come from it) and, with -R, the destination
# the server sends to (all received)
client_bind() {
  local rc=0 tmo
  ip -n "$A" addr add 198.18.0.3/24 dev tx0
  CLEANUP_HOOKS+=("ip -n '$A' addr del 198.18.0.3/24 dev tx0 2>/dev/null")
  timeout 30 ip netns exec "$A" "$TXS" send -c $H4 -B 198.18.0.3 -n 500 -b 1k -J >"$tmp/bind.json" 2>"$tmp/bind.err" ||
    fail "bind: send exited $?: $(cat "$tmp/bind.err")"
  jq -se 'map(select(.type == "receiver"))[0].received == 500' "$tmp/bind.json" >/dev/null || fail "bind: $(cat "$tmp/bind.json")"
  grep -q "(198.18.0.3)" "$tmp/srv.log" || fail "bind: the txscale server never saw a session from 198.18.0.3"
  timeout 30 ip netns exec "$A" "$TXS" send -c $H4 -B 198.18.0.3 -R -n 500 -b 1k -J >"$tmp/bindr.json" 2>"$tmp/bindr.err" ||
    fail "bind -R: send exited $?: $(cat "$tmp/bindr.err")"
  jq -se 'map(select(.type == "summary" and .kind == "recv"))[0] | .unique == 500 and .lost == 0' "$tmp/bindr.json" >/dev/null ||
    fail "bind -R: $(cat "$tmp/bindr.json")"
  ok "txscale server: forward and -R from -B 198.18.0.3, 500 of 500"
  ip netns exec "$B" iperf3 -s -1 -p 5203 -J >"$tmp/bind3.srv.json" 2>&1 &
  tmo=$!
  wait_for 20 listens 5203 || fail "iperf3 -s -p 5203 does not listen"
  timeout 30 ip netns exec "$A" "$TXS" send -c $H4 --control-port 5203 -B 198.18.0.3 -n 500 -b 1k -J >"$tmp/bind3.json" 2>"$tmp/bind3.err" ||
    fail "bind iperf3: send exited $?: $(cat "$tmp/bind3.err")"
  wait $tmo || rc=$?
  [ $rc = 0 ] || fail "bind iperf3: iperf3 -s exited $rc"
  jq -e '.start.accepted_connection.host == "198.18.0.3" and ([.start.connected[].remote_host] | all(. == "198.18.0.3"))
         and .end.sum_received.packets == 500' "$tmp/bind3.srv.json" >/dev/null ||
    fail "bind iperf3: the server's JSON: $(jq -c '[.start.accepted_connection, .start.connected, .end.sum_received]' "$tmp/bind3.srv.json")"
  ok "stock iperf3 -s: control and stream from -B 198.18.0.3, 500 received"
  # an address this host does not have: one line naming it, nothing sent
  rc=0
  timeout 30 ip netns exec "$A" "$TXS" send -c $H4 -B 198.18.0.9 -n 5 >"$tmp/bindx.out" 2>&1 || rc=$?
  [ $rc = 1 ] && grep -q "cannot bind the control connection to -B 198.18.0.9: Cannot assign requested address" "$tmp/bindx.out" ||
    fail "bind: -B 198.18.0.9 (not ours): exit $rc: $(cat "$tmp/bindx.out")"
}
run_case client_bind
