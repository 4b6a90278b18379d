#!/usr/bin/env bash
# The iperf 2 differential: the same stock iperf 2 client command (Debian's
# 2.1.8) against a stock `iperf -s -u` and against `txscale server` (its
# iperf 2 service on UDP 5001), on one lab of two namespaces as two hosts
# ("ip2d", neighbours by ARP/ND), compared on the client's own figures:
# exit status, a server report per stream (no "read failed: Connection
# refused"), its Lost/Total. An nftables rule in the server's host drops 1
# datagram in 500 of the case's length (counted), so the loss is not zero:
# the report's Lost must be exactly the datagrams nftables dropped plus the
# server host's UDP RcvbufErrors (a veth loses nothing else), and its Total
# must cover every id the client says it sent. The stock server on 5002
# (IPv6: `-V` on 5003).
#   the matrix  -b 1M (1470 bytes), -l 16 at 1kpps, -l 100 at 10kpps,
#               -l 1400 at 20kpps, -l 16 at 100kpps, -e, IPv6 -V
#   par2        -P 2 against txscale server: a report per stream, exact (a
#               stock 2.1.8 server, now and then, answers a -P 2 client's
#               ends on sockets it has closed: the client prints "read
#               failed: Connection refused" and no report; shown, not
#               required)
#   send_*      `txscale send --iperf2` beside `iperf -c` against the stock
#               server at 10kpps and 50kpps (-n): our receiver line's loss
#               is the nftables drops (exact), as the stock server's Lost
#   send_txs    `send --iperf2 -P 2` against txscale server: exact
#   refused     `send --iperf2` to a port nothing listens on: exit 1 within
#               a second, "no iperf 2 server"
# Run time about 70 s. Needs root, jq, iperf (2.x), nft; exits 77 with the
# reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"

lab_test --later ip2d iperf nft
case "$(iperf -v 2>&1 | head -n1)" in "iperf version 2"*) ;; *) skip "iperf is not iperf 2: $(iperf -v 2>&1 | head -n1)" ;; esac
lab_up "$LAB" --neigh dynamic
H4=198.18.0.2 H6=2001:2::2
lab_server --ctl-timeout 3 --max-time 20
wait_for 20 ip netns exec "$B" sh -c "ss -lun 'sport = :5001' | grep -q 5001" || fail "txscale server: nothing on UDP 5001"
ip netns exec "$B" iperf -s -u -p 5002 >"$tmp/stock.log" 2>&1 &
ip netns exec "$B" iperf -s -u -V -p 5003 >"$tmp/stock6.log" 2>&1 &
wait_for 20 ip netns exec "$B" sh -c "ss -lun 'sport = :5002' | grep -q 5002 && ss -lun 'sport = :5003' | grep -q 5003" ||
  fail "iperf -s -u does not listen on 5002 and 5003"
FAIL_HOOKS+=('tail -n 12 "$tmp/stock.log" | sed "s/^/  iperf -s -u: /"')

udp_field() { ip netns exec "$1" awk -v f="$2" '/^Udp:/ { if (h) { print $(c); exit } for (i = 1; i <= NF; i++) if ($i == f) c = i; h = 1 }' /proc/net/snmp; }
nft_count() { ip netns exec "$B" nft -j list table inet "$1" | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add // 0'; }
# drop_rule TABLE LEN: in the server's host, drop 1 in 500 datagrams of LEN payload bytes to the servers, counted
drop_rule() {
  ip netns exec "$B" nft "add table inet $1; add chain inet $1 in { type filter hook input priority 0; }; add rule inet $1 in udp dport { 5001-5004 } udp length $(($2 + 8)) numgen inc mod 500 0 counter drop"
  CLEANUP_HOOKS+=("ip netns exec '$B' nft delete table inet $1 2>/dev/null")
}

# parse FILE: the stock client's text as one JSON object: sent (its "Sent N
# datagrams" lines, per stream), the server reports (count, Lost and Total
# summed), "read failed" lines
parse() {
  awk '
    /\[SUM/ { next }
    / Sent [0-9]+ datagrams/ { for (i = 1; i <= NF; i++) if ($i == "Sent") sent += $(i + 1) }
    /Server Report:/ { want = 1; next }
    want && /^\[ *[0-9]+\]/ && match($0, /[0-9]+\/[0-9]+ +\(/) {
      split(substr($0, RSTART, RLENGTH), a, /[\/ (]+/); lost += a[1]; total += a[2]; n++; want = 0 }
    /read failed/ { refused++ }
    END { printf "{\"sent\":%d,\"reports\":%d,\"lost\":%d,\"total\":%d,\"refused\":%d}\n", sent, n, lost, total, refused }' "$1"
}

# one NAME KIND HOST PORT TABLE [iperf args]: the stock client against a
# server; its figures in $tmp/NAME.KIND.fig (rc, nft drops, the server
# host's RcvbufErrors during the run, and parse's)
one() {
  local name=$1 kind=$2 host=$3 port=$4 table=$5 rc=0 d0 b0
  shift 5
  d0=$(nft_count "$table") b0=$(udp_field "$B" RcvbufErrors)
  timeout 60 ip netns exec "$A" iperf -c "$host" -p "$port" -u "$@" >"$tmp/$name.$kind.out" 2>&1 || rc=$?
  sleep 0.3 # a late end datagram's drop is counted before we read the counter
  parse "$tmp/$name.$kind.out" | jq -c --argjson rc $rc --argjson nft $(( $(nft_count "$table") - d0 )) \
    --argjson rb $(( $(udp_field "$B" RcvbufErrors) - b0 )) '. + {rc: $rc, nft: $nft, rcvbuf: $rb}' >"$tmp/$name.$kind.fig"
  echo "$kind: $(cat "$tmp/$name.$kind.fig")"
}
fig() { jq -rc "$2" "$tmp/$1.fig"; }

# check NAME KIND STREAMS: a report per stream, no refusal, rc 0; Lost is
# what nftables dropped plus the socket drops; Total covers the ids sent
# (iperf 2's "Sent" is the ids written plus one per stream; dropped end
# datagrams add to Total)
check() {
  local name=$1 kind=$2 p=$3
  jq -e --argjson p "$p" '.rc == 0 and .reports == $p and .refused == 0 and .lost == .nft + .rcvbuf and
      .total >= .sent - $p and .total <= .sent - $p + .nft' "$tmp/$name.$kind.fig" >/dev/null ||
    fail "$name ($kind): the client's figures do not add up: $(cat "$tmp/$name.$kind.fig") $(tail -n 4 "$tmp/$name.$kind.out" | tr '\n' '|')"
}

# pair NAME LEN HOST6 [iperf args]: the command against both servers
pair() {
  local name=$1 len=$2 v6=$3 sport=5002 host=$H4
  shift 3
  if [ "$v6" = 6 ]; then sport=5003 host=$H6; fi
  drop_rule "t$name" "$len"
  one "$name" txs "$host" 5001 "t$name" -l "$len" "$@"
  one "$name" stock "$host" $sport "t$name" -l "$len" "$@"
  check "$name" txs 1
  check "$name" stock 1
  ok "$name: iperf -c -u -l $len $*: txscale server $(fig "$name.txs" '"\(.lost)/\(.total) (nft \(.nft), rcvbuf \(.rcvbuf)), sent \(.sent)"'); stock $(fig "$name.stock" '"\(.lost)/\(.total) (nft \(.nft), rcvbuf \(.rcvbuf)), sent \(.sent)"')"
}

run_case default pair default 1470 4 -b 1M -t 3
run_case l16_1k pair l16_1k 16 4 -b 1000pps -t 2
run_case l100_10k pair l100_10k 100 4 -b 10kpps -t 2
run_case l1400_20k pair l1400_20k 1400 4 -b 20kpps -t 2
run_case l16_100k pair l16_100k 16 4 -b 100kpps -t 2
run_case enhanced pair enhanced 64 4 -b 5kpps -t 2 -e
run_case v6 pair v6 500 6 -b 5kpps -t 2 -V

par2() {
  drop_rule tpar2 100
  one par2 txs $H4 5001 tpar2 -l 100 -b 5kpps -t 2 -P 2
  check par2 txs 2
  # the stock server, fresh on 5004: what it does is shown
  ip netns exec "$B" timeout 15 iperf -s -u -p 5004 >"$tmp/stock4.log" 2>&1 &
  wait_for 20 ip netns exec "$B" sh -c "ss -lun 'sport = :5004' | grep -q 5004" || fail "iperf -s -u -p 5004 does not listen"
  one par2 stock $H4 5004 tpar2 -l 100 -b 5kpps -t 2 -P 2
  ok "par2: -P 2: txscale server $(fig par2.txs '"\(.reports) reports, \(.lost)/\(.total) (nft \(.nft)), sent \(.sent)"'); stock $(fig par2.stock '"\(.reports) reports, \(.refused) read failed, rc \(.rc)"')"
}
run_case par2

# sendcmp NAME LEN WANT [send args] -- [iperf args]: txscale send --iperf2
# (WANT datagrams: every one due) and iperf -c against the stock server
sendcmp() {
  local name=$1 len=$2 want=$3 sargs=() rc=0 d0 b0
  shift 3
  while [ "$1" != -- ]; do sargs+=("$1"); shift; done
  shift
  drop_rule "t$name" "$len"
  d0=$(nft_count "t$name") b0=$(udp_field "$B" RcvbufErrors)
  timeout 60 ip netns exec "$A" "$TXS" send --iperf2 -c $H4 -p 5002 -l "$len" "${sargs[@]}" -J >"$tmp/$name.send" 2>"$tmp/$name.send.err" || rc=$?
  sleep 0.3
  local nft=$(( $(nft_count "t$name") - d0 )) rb=$(( $(udp_field "$B" RcvbufErrors) - b0 ))
  [ $rc = 0 ] || fail "$name: send --iperf2 exited $rc: $(cat "$tmp/$name.send.err")"
  # the server's Lost counts the ids it did not see, end datagrams before the
  # one it answered among them (datagrams - expected - 1 of them): ours is
  # the data datagrams'
  jq -se --argjson d $((nft + rb)) --argjson want "$want" '(.[0] | .type == "receiver" and .device == "iperf2" and .lost_exact and
      .iperf2.lost == $d and .lost + (.iperf2.datagrams - .expected - 1) == $d and .received + .lost == .expected) and
      .[1].kind == "send" and .[1].packets == .[0].expected and .[1].packets == $want' \
    "$tmp/$name.send" >/dev/null ||
    fail "$name: send --iperf2: nftables dropped $nft, rcvbuf $rb; $(cat "$tmp/$name.send")"
  one "$name" stock $H4 5002 "t$name" -l "$len" "$@"
  check "$name" stock 1
  ok "$name: txscale send --iperf2 ${sargs[*]}: sent $(jq -s '.[1].packets' "$tmp/$name.send"), lost $(jq -s '.[0].lost' "$tmp/$name.send") exact (nft $nft, rcvbuf $rb), the stock server's report $(jq -s '"\(.[0].iperf2.lost)/\(.[0].iperf2.datagrams)"' "$tmp/$name.send"); iperf -c $*: $(fig "$name.stock" '"\(.lost)/\(.total) (nft \(.nft), rcvbuf \(.rcvbuf)), sent \(.sent)"')"
}
run_case send_10k sendcmp send_10k 100 20000 -b 10kpps -t 2 -- -b 10kpps -t 2
run_case send_50k sendcmp send_50k 16 100000 -b 50kpps -n 100000 -- -b 50kpps -t 2

send_txs() {
  local rc=0 d0
  drop_rule tsend_txs 200
  d0=$(nft_count tsend_txs)
  timeout 60 ip netns exec "$A" "$TXS" send --iperf2 -c $H4 -l 200 -b 20kpps -t 2 -P 2 -J >"$tmp/st.send" 2>"$tmp/st.err" || rc=$?
  sleep 0.3
  local nft=$(( $(nft_count tsend_txs) - d0 ))
  [ $rc = 0 ] || fail "send --iperf2 -P 2 against txscale server exited $rc: $(cat "$tmp/st.err")"
  jq -se --argjson d $nft '.[0] | .lost_exact and .iperf2.lost == $d and .lost + (.iperf2.datagrams - .expected - 2) == $d and
      .iperf2.reports == 2 and .received + .lost == .expected' "$tmp/st.send" >/dev/null ||
    fail "send_txs: nftables dropped $nft; $(cat "$tmp/st.send")"
  [ "$nft" -gt 0 ] || fail "send_txs: nftables dropped nothing (the test did not test)"
  ok "send --iperf2 -P 2 against txscale server: $(jq -sc '.[0] | {expected, received, lost, iperf2}' "$tmp/st.send"), nft $nft"
}
run_case send_txs

refused() {
  local rc=0 t0 ms
  t0=$(date +%s%N)
  timeout 20 ip netns exec "$A" "$TXS" send --iperf2 -c $H4 -p 5009 -b 1kpps -t 1 >"$tmp/ref.out" 2>"$tmp/ref.err" || rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ $rc = 1 ] && grep -q 'no iperf 2 server' "$tmp/ref.err" || fail "refused: rc $rc: $(cat "$tmp/ref.err")"
  [ $ms -lt 4000 ] || fail "refused: took $ms ms (1 s of data, then 1 s)"
  ok "refused: rc 1 after $ms ms: $(cat "$tmp/ref.err")"
}
run_case refused
