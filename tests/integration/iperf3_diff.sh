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
#   client_bind  send -c HOST -B ADDR: control, streams and -R destination
#              from ADDR (a txscale server's log, a stock server's JSON)
#   client_*   txscale's client beside iperf3's against a stock one-off
#              server: forward, -R, and -R -n with loss, compared on the
#              server's figures and each client's
#   sessions_default  two txscale clients without -p and an iperf3 -R at
#              once against txscale server, then two -R clients at once:
#              each session its own data port, all exact
# Run time about 75 s (-t 1 or 2, or -k at 10 Mbit/s; txscale's client takes 1 s
# more: the probe that tells an iperf3 server by its silence). Needs root, jq,
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
      '[range($s[0].intervals | length) as $i | (($s[0].intervals[$i] - $t[0].intervals[$i]) | fabs) <= ($s[0].intervals[$i] * 0.1 + 50)] | all' >/dev/null ||
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

# ---- the matrix ----------------------------------------------------------------------------------

# ip_field NS FIELD: FIELD of the Ip: lines of /proc/net/snmp in namespace NS
ip_field() { ip netns exec "$1" awk -v f="$2" '/^Ip:/ { if (h) { print $(c); exit } for (i = 1; i <= NF; i++) if ($i == f) c = i; h = 1 }' /proc/net/snmp; }

m_revk() { pair revk 100 -- $H4 -R -l 100 -b 10M -k 5000; }
m_fwdk() {
  pair fwdk 100 -- $H4 -l 100 -b 10M -k 5000
  [ "$(fig fwdk.stock .sent)" = 5000 ] && [ "$(fig fwdk.txs .sent)" = 5000 ] || fail "fwdk: the client did not send 5000"
}
m_revn_loss() {
  drop_rule ip3dn 100
  # -n 500K: 512000 bytes, 5120 datagrams of 100
  DROP_TABLE=ip3dn pair revn_loss 100 -- $H4 -R -l 100 -b 10M -n 500K
  jq -se '.[0].nft_drops > 0 and .[1].nft_drops > 0 and .[0].wall_ms < 5000 and .[1].wall_ms < 5000 and
          (.[0].rbytes / 100) >= 5120 and (.[1].rbytes / 100) >= 5120' "$tmp/revn_loss.stock.fig" "$tmp/revn_loss.txs.fig" >/dev/null ||
    fail "revn_loss: not ended within 5 s with 5120 received, or nothing dropped"
}
m_p4() { pair p4 100 --paced -- $H4 -P 4 -l 100 -b 2M -t 1; }
m_p4r() { pair p4r 100 --paced -- $H4 -P 4 -R -l 100 -b 2M -t 1; }
m_bidir() {
  captured bidir stock $H4 --bidir -l 100 -b 2M -t 1
  captured bidir txs $H4 --bidir -l 100 -b 2M -t 1
  same bidir 100 --paced
  [ "$(fig bidir.stock '.rintervals | length')" = "$(fig bidir.txs '.rintervals | length')" ] || fail "bidir: reverse intervals differ"
}
m_i1() { pair i1 1400 --paced -- $H4 -R -i 1 -t 2 -l 1400 -b 5M; }
# -l 9000 at MTU 9000: 9028-byte datagrams, two fragments each (the client
# host reassembles: Ip ReasmOKs), every one counted; -l 8972 fits one frame
m_l9000() {
  local r0 r1
  r0=$(ip_field "$A" ReasmOKs)
  pair l9000 9000 -- $H4 -R -l 9000 -b 20M -t 1
  r1=$(ip_field "$A" ReasmOKs)
  [ $((r1 - r0)) -ge $(( $(fig l9000.stock .rbytes) / 9000 + $(fig l9000.txs .rbytes) / 9000 )) ] ||
    fail "l9000: the client host reassembled $((r1 - r0)) datagrams, fewer than were received"
  ok "l9000: fragmented (the client host reassembled $((r1 - r0)))"
  r0=$(ip_field "$A" ReasmOKs)
  pair l8972 8972 -- $H4 -R -l 8972 -b 20M -t 1
  r1=$(ip_field "$A" ReasmOKs)
  [ $((r1 - r0)) = 0 ] || fail "l8972: $((r1 - r0)) reassembled: 8972 + 28 fits MTU 9000"
}
m_l16() { pair l16 16 --paced -- $H4 -l 16 -b 5M -t 1; }
m_l1400() { pair l1400 1400 --paced -- $H4 -l 1400 -b 20M -t 1; }
m_omit() {
  pair omit 100 -- $H4 -R -O 1 -t 1 -l 100 -b 5M
  [ "$(fig omit.txs '.intervals | length')" -ge 2 ] || fail "omit: no omitted interval"
}
m_v6() { pair v6 100 --paced -- $H6 -R -l 100 -b 5M -t 1; }
m_v6f() { pair v6f 100 --paced -- $H6 -l 100 -b 5M -t 1; }
for m in revk fwdk revn_loss p4 p4r bidir i1 l9000 l16 l1400 omit v6 v6f; do run_case "$m" "m_$m"; done

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
  timeout 30 ip netns exec "$A" "$TXS" send -c $H4 -B 198.18.0.3 -n 500 -b 1kpps -J >"$tmp/bind.json" 2>"$tmp/bind.err" ||
    fail "bind: send exited $?: $(cat "$tmp/bind.err")"
  jq -se 'map(select(.type == "receiver"))[0].received == 500' "$tmp/bind.json" >/dev/null || fail "bind: $(cat "$tmp/bind.json")"
  grep -q "(198.18.0.3)" "$tmp/srv.log" || fail "bind: the txscale server never saw a session from 198.18.0.3"
  timeout 30 ip netns exec "$A" "$TXS" send -c $H4 -B 198.18.0.3 -R -n 500 -b 1kpps -J >"$tmp/bindr.json" 2>"$tmp/bindr.err" ||
    fail "bind -R: send exited $?: $(cat "$tmp/bindr.err")"
  jq -se 'map(select(.type == "summary" and .kind == "recv"))[0] | .unique == 500 and .lost == 0' "$tmp/bindr.json" >/dev/null ||
    fail "bind -R: $(cat "$tmp/bindr.json")"
  ok "txscale server: forward and -R from -B 198.18.0.3, 500 of 500"
  ip netns exec "$B" iperf3 -s -1 -p 5203 -J >"$tmp/bind3.srv.json" 2>&1 &
  tmo=$!
  wait_for 20 listens 5203 || fail "iperf3 -s -p 5203 does not listen"
  timeout 30 ip netns exec "$A" "$TXS" send -c $H4 --control-port 5203 -B 198.18.0.3 -n 500 -b 1kpps -J >"$tmp/bind3.json" 2>"$tmp/bind3.err" ||
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

# beside NAME IP3ARGS -- TXSARGS: against a stock one-off server on 5203,
# iperf3's client with IP3ARGS, then txscale's with TXSARGS (each's JSON
# and the server's in $tmp/NAME.{ip3,txs}{,.srv}.json, their rc and wall
# time in $tmp/NAME.{ip3,txs}.run)
beside() {
  local name=$1 who spid rc t0 t1 srv_rc
  shift
  local ip3=() txs=()
  while [ "$1" != -- ]; do ip3+=("$1"); shift; done
  shift
  txs=("$@")
  for who in ip3 txs; do
    ip netns exec "$B" iperf3 -s -1 -p 5203 -J >"$tmp/$name.$who.srv.json" 2>&1 &
    spid=$!
    wait_for 20 listens 5203 || fail "$name: iperf3 -s -p 5203 does not listen"
    rc=0
    t0=$(date +%s%N)
    if [ $who = ip3 ]; then
      timeout 60 ip netns exec "$A" iperf3 -c $H4 -p 5203 -u -J "${ip3[@]}" >"$tmp/$name.ip3.json" 2>"$tmp/$name.ip3.err" || rc=$?
    else
      timeout 60 ip netns exec "$A" "$TXS" send -c $H4 --control-port 5203 -J -i 0 "${txs[@]}" >"$tmp/$name.txs.json" 2>"$tmp/$name.txs.err" || rc=$?
    fi
    t1=$(date +%s%N)
    srv_rc=0
    wait $spid || srv_rc=$?
    echo "$rc $(( (t1 - t0) / 1000000 )) $srv_rc" >"$tmp/$name.$who.run"
    echo "$who: rc $rc, $(( (t1 - t0) / 1000000 )) ms, server rc $srv_rc; the server's: $(jq -c '.end.sum_received // .end.sum_sent | {packets, lost_packets, bytes}' "$tmp/$name.$who.srv.json" 2>/dev/null)"
    [ "$rc" = 0 ] && [ "$srv_rc" = 0 ] || fail "$name ($who): exit $rc, the server's $srv_rc: $(cat "$tmp/$name.$who.err") $(jq -r .error "$tmp/$name.$who.srv.json" 2>/dev/null)"
  done
}
within() { # A B PCT: A and B within PCT% of B (+5)
  local d=$(($1 - $2))
  [ ${d#-} -le $(($2 * $3 / 100 + 5)) ]
}

# forward at 1000 datagrams/s of 100 bytes (-b 800K: payload bits/s in both
# clients' grammar, the same words on both sides), 2 s: the stock server's own figures of
# what arrived agree, and txscale's receiver line is the server's count
cb_forward() {
  local a b
  beside cbf -l 100 -b 800K -t 2 -- -l 100 -b 800K -t 2
  a=$(jq .end.sum_received.packets "$tmp/cbf.ip3.srv.json") b=$(jq .end.sum_received.packets "$tmp/cbf.txs.srv.json")
  within "$b" "$a" 5 || fail "cb_forward: the stock server received $a from iperf3's client, $b from txscale's"
  jq -se --argjson b "$b" 'map(select(.type == "receiver"))[0] | .received == $b' "$tmp/cbf.txs.json" >/dev/null ||
    fail "cb_forward: txscale's receiver line is not the server's $b: $(jq -c 'select(.type == "receiver")' "$tmp/cbf.txs.json")"
  ok "cb_forward: the stock server received $a (iperf3's client) and $b (txscale's)"
}
run_case client_forward cb_forward

# -R: what each client received of the stock server's datagrams
cb_reverse() {
  local a b
  beside cbr -R -l 100 -b 800K -t 2 -- -R -l 100 -b 800K -t 2
  a=$(jq .end.sum_received.packets "$tmp/cbr.ip3.json")
  b=$(jq -s 'map(select(.type == "summary" and .kind == "recv"))[0].unique' "$tmp/cbr.txs.json")
  within "$b" "$a" 5 || fail "cb_reverse: iperf3's client received $a, txscale's $b"
  jq -se 'map(select(.type == "summary" and .kind == "recv"))[0] | .lost_exact and .lost == .kernel_drops.sockets' "$tmp/cbr.txs.json" >/dev/null ||
    fail "cb_reverse: txscale's loss is not its sockets' drops: $(jq -c 'select(.kind == "recv")' "$tmp/cbr.txs.json")"
  ok "cb_reverse: iperf3's client received $a, txscale's $b (exact)"
}
run_case client_reverse cb_reverse

# -R with an amount and nftables dropping 1 in 500: both clients end once
# it arrived (the stock server sends until TEST_END), within seconds
cb_reverse_loss() {
  local a b
  drop_rule ip3dc 100
  ip netns exec "$A" nft "add rule inet ip3dc in udp sport 5203 udp length 108 numgen inc mod 500 0 counter drop"
  beside cbl -R -l 100 -b 10M -k 3000 -- -R -l 100 -b 10M -k 3000
  for who in ip3 txs; do
    read -r _ ms _ <"$tmp/cbl.$who.run"
    [ "$ms" -lt 5000 ] || fail "cb_reverse_loss ($who): took $ms ms"
  done
  a=$(jq .end.sum_received.packets "$tmp/cbl.ip3.json")
  b=$(jq -s 'map(select(.type == "summary" and .kind == "recv"))[0].unique' "$tmp/cbl.txs.json")
  [ "$a" -ge 3000 ] && [ "$b" -ge 3000 ] || fail "cb_reverse_loss: received $a (iperf3) and $b (txscale) of 3000"
  [ "$(nft_count ip3dc)" -gt 0 ] || fail "cb_reverse_loss: nftables dropped nothing"
  ok "cb_reverse_loss: both ended with 3000 received ($a, $b); nftables dropped $(nft_count ip3dc)"
}
run_case client_reverse_loss cb_reverse_loss

# sessions at defaults: two txscale clients without -p and a stock iperf3
# client, at once, against txscale server (default --max-sessions): each
# txscale session gets its own data port (exact, nothing lost), the iperf3
# one is served beside them; the first line names the protocol. Then two
# -R clients at once from one host: each receiver its own free port
sessions_default() {
  local p1 p2 p3 rc k
  for k in 1 2; do
    timeout 30 ip netns exec "$A" "$TXS" send -c $H4 -n 10k -b 5kpps -i 0 >"$tmp/sd$k.out" 2>&1 &
    eval "p$k=\$!"
  done
  timeout 30 ip netns exec "$A" iperf3 -c $H4 -u -R -l 100 -b 2M -t 2 -J >"$tmp/sd3.json" 2>&1 &
  p3=$!
  for k in 1 2 3; do
    rc=0
    eval "wait \$p$k" || rc=$?
    [ $rc = 0 ] || fail "sessions_default: client $k exited $rc: $(cat "$tmp/sd$k.out" "$tmp/sd$k.json" 2>/dev/null | tail -5)"
  done
  for k in 1 2; do
    head -n1 "$tmp/sd$k.out" | grep -q "^txscale send: txscale server $H4, control port 5201 (txscale's protocol): forward (we send) test, data port the server's choice$" ||
      fail "sessions_default: client $k's first line: $(head -n1 "$tmp/sd$k.out")"
    grep -q "^receiver $H4: received 10000, lost 0 (0%) exact" "$tmp/sd$k.out" || fail "sessions_default: client $k: $(grep receiver "$tmp/sd$k.out")"
  done
  [ "$(grep -o '198.18.0.2:[0-9]*' "$tmp/sd1.out" | head -n1)" != "$(grep -o '198.18.0.2:[0-9]*' "$tmp/sd2.out" | head -n1)" ] ||
    fail "sessions_default: both sessions sent to one data port"
  jq -e '.end.sum_received.packets > 0 and .error == null' "$tmp/sd3.json" >/dev/null || fail "sessions_default: iperf3: $(jq -c '.error, .end.sum_received' "$tmp/sd3.json")"
  # two -R clients on one host: each receiver takes a free port of its own
  for k in 4 5; do
    timeout 30 ip netns exec "$A" "$TXS" send -c $H4 -R -n 10k -b 5kpps -i 0 -J >"$tmp/sd$k.json" 2>"$tmp/sd$k.err" &
    eval "p$k=\$!"
  done
  for k in 4 5; do
    rc=0
    eval "wait \$p$k" || rc=$?
    [ $rc = 0 ] || fail "sessions_default: -R client $k exited $rc: $(cat "$tmp/sd$k.err")"
    jq -se 'map(select(.type == "summary" and .kind == "recv"))[0] | .unique == 10000 and .lost == 0 and .lost_exact' "$tmp/sd$k.json" >/dev/null ||
      fail "sessions_default: -R client $k: $(jq -c 'select(.kind == "recv") | {unique, lost}' "$tmp/sd$k.json")"
  done
  ok "sessions_default: two -R clients at once, 10000 each, exact"
  ok "sessions_default: two txscale sessions on data ports $(grep -o '198.18.0.2:[0-9]*' "$tmp/sd1.out" | head -n1 | cut -d: -f2) and $(grep -o '198.18.0.2:[0-9]*' "$tmp/sd2.out" | head -n1 | cut -d: -f2), 10000 each, exact; iperf3 -R beside them: $(jq .end.sum_received.packets "$tmp/sd3.json") received"
}
run_case sessions_default
