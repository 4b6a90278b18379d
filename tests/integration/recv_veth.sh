#!/usr/bin/env bash
# txscale send -> veth -> txscale recv in the peer namespace (netns lab "rcv").
#   1. udp input, IPv4 and IPv6, large receive buffer, paced: received == sent
#      exactly, no loss, no duplicates, nothing malformed
#   2. udp input, --rcvbuf 4096, unpaced: lost == sent - received, and the
#      kernel's counters account for the loss (our socket's drops plus the
#      interface/backlog drops on the path)
#   3. packet input (AF_PACKET ring, 2 queues in a fanout group): received ==
#      sent exactly, flows stay on one queue, IP layer seen (IDs, link rx0)
# Needs root (namespaces) and `txscale send --dev udp` (lib/netdev udp
# backend); exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
lab_test rcv

# Is the udp device there yet? One datagram into the lab (198.18.0.2, port 9).
if ! out=$(ip netns exec "$A" timeout 10 "$TXS" send --dev udp -n 1 -i 0 -p 9 -B 198.18.0.1 198.18.0.2 2>&1); then
  case "$out" in
    *"unknown device"*) skip "txscale send --dev udp is not available yet (lib/netdev udp backend): $out" ;;
    *) fail "txscale send --dev udp: $out" ;;
  esac
fi

# recv in B (background, JSON), then send in A; recv ends 1.5 s after the last packet.
# veth_run NAME "RECV ARGS" "SEND ARGS"
veth_run() {
  local name=$1 rargs=$2 sargs=$3
  # shellcheck disable=SC2086
  ip netns exec "$B" "$TXS" recv $rargs -i 0 -J --idle 1.5 -t 60 --sender-summary "$tmp/$name.send.json" \
    --ready-fd 3 >"$tmp/$name.recv.json" 2>"$tmp/$name.recv.err" 3>"$tmp/$name.ready" &
  local rpid=$!
  wait_ready "$tmp/$name.ready" $rpid
  # shellcheck disable=SC2086
  ip netns exec "$A" timeout 60 "$TXS" send --dev udp -i 0 $sargs --summary-file "$tmp/$name.send.json" \
    >"$tmp/$name.send.out" 2>&1 || fail "$name: send: $(cat "$tmp/$name.send.out")"
  wait "$rpid" || fail "$name: recv exited $?: $(cat "$tmp/$name.recv.err")"
  R="$tmp/$name.recv.json"
  S="$tmp/$name.send.json"
  tail -n1 "$R" | jq -e '.type == "summary" and .kind == "recv"' >/dev/null || fail "$name: no recv summary"
}

# 1. lossless, IPv4 and IPv6
lossless() { # 4|6
  local fam=$1 dst src sent
  if [ $fam = 4 ]; then dst=198.18.0.2 src=198.18.0.1; else dst=2001:2:0:0::2 src=2001:2:0:0::1; fi
  veth_run "udp$fam" "-B $dst -p 5201 --rcvbuf 33554432" "-B $src -p 5201 -n 40000 -b 20kpps -P 2 -l 32 $dst"
  sent=$(sj .packets)
  [ "$sent" -gt 0 ] || fail "udp$fam: sender sent nothing"
  [ "$(rj .received)" = "$sent" ] || fail "udp$fam: received $(rj .received) != sent $sent"
  [ "$(rj .lost)" = 0 ] || fail "udp$fam: lost $(rj .lost)"
  [ "$(rj .lost_exact)" = true ] || fail "udp$fam: loss not exact"
  if [ "$(rj .duplicates)" != 0 ] || [ "$(rj .malformed)" != 0 ]; then fail "udp$fam: duplicates/malformed"; fi
  [ "$(rj '.flows | length')" = 2 ] || fail "udp$fam: expected 2 flows, got $(rj '.flows | length')"
  [ "$(rj '.latency_ns.count')" = "$sent" ] || fail "udp$fam: latency samples $(rj .latency_ns.count)"
  echo "ok: udp IPv$fam lossless: sent $sent, received $(rj .received), p99 $(rj '.latency_ns.p99') ns"
}
run_case udp4 lossless 4
run_case udp6 lossless 6

tiny() {
  local sent recvd lost sock rcvbuf ifdrop softnet txdrop local_sum
  # 2. a tiny receive buffer: loss, exactly accounted. The sender's IPv4
  # default sends GSO; recv with UDP GRO off has the kernel cut each GSO
  # packet into its datagrams before the socket, so the kernel's drop
  # counters count datagrams (with GRO on they count messages: docs/recv.md)
  veth_run tiny "-B 198.18.0.2 -p 5201 --rcvbuf 4096 --dev udp:gro=off" "-B 198.18.0.1 -p 5201 -n 50000 198.18.0.2"
  sent=$(sj .packets) recvd=$(rj .received) lost=$(rj .lost)
  [ "$lost" = $((sent - recvd)) ] || fail "tiny: lost $lost != sent $sent - received $recvd"
  sock=$(rj .kernel_drops.sockets)
  rcvbuf=$(rj .kernel_drops.udp.RcvbufErrors)
  ifdrop=$(rj '.kernel_drops.interfaces.rx0.rx_dropped // 0')
  softnet=$(rj '.kernel_drops.softnet.dropped // 0')
  # drops before our socket: the sender-side veth (tx0 tx_dropped) is in A's namespace
  txdrop=$(ip netns exec "$A" cat /sys/class/net/tx0/statistics/tx_dropped)
  local_sum=$((sock + ifdrop + txdrop))
  [ "$sock" = "$rcvbuf" ] || fail "tiny: our socket dropped $sock but Udp RcvbufErrors says $rcvbuf"
  if [ "$lost" -lt "$local_sum" ] || [ "$lost" -gt $((local_sum + softnet)) ]; then
    fail "tiny: lost $lost not accounted: socket $sock + rx0 $ifdrop + tx0 $txdrop (+ softnet $softnet host-wide)"
  fi
  [ "$lost" -gt 0 ] || echo "note: tiny buffer lost nothing this time (receiver kept up)"
  echo "ok: udp --rcvbuf 4096: sent $sent, received $recvd, lost $lost = socket $sock + rx0 $ifdrop + tx0 $txdrop (softnet $softnet)"
}
run_case tiny

packet() {
  local sent ringdrop sink
  # 3. the AF_PACKET input, two queues in a fanout group; a socket receiver on
  # the port as well, so the sender meets no ICMP port-unreachable
  ip netns exec "$B" "$TXS" recv -B 198.18.0.2 -p 5201 --rcvbuf 33554432 -i 0 -t 60 --idle 5 --ready-fd 3 >/dev/null 2>&1 3>"$tmp/sink.ready" &
  sink=$!
  wait_ready "$tmp/sink.ready" $sink
  # (--gso off: a veth hands the peer a GSO packet whole, and the AF_PACKET
# ring sees it as one frame; the stack's sockets see its segments)
veth_run packet "--dev packet:rx0 -P 2 -p 5201" "-B 198.18.0.1 -p 5201 -n 20000 -b 10kpps -P 2 -l 64 --gso off 198.18.0.2"
  sent=$(sj .packets)
  ringdrop=$(rj .input.socket_drops)
  [ "$ringdrop" = 0 ] || fail "packet: ring dropped $ringdrop"
  [ "$(rj .received)" = "$sent" ] || fail "packet: received $(rj .received) != sent $sent"
  if [ "$(rj .lost)" != 0 ] || [ "$(rj .duplicates)" != 0 ] || [ "$(rj .malformed)" != 0 ]; then fail "packet: lost/dup/malformed"; fi
  [ "$(rj '[.flows[] | select(.cores != 1)] | length')" = 0 ] || fail "packet: a flow split over queues"
  [ "$(rj .ip.seen)" = true ] || fail "packet: IP layer not seen"
  [ "$(rj '.links[0].name')" = rx0 ] || fail "packet: link name $(rj '.links[0].name')"
  [ "$(rj '[.ip.id_reuse[].datagrams] | add')" = "$sent" ] || fail "packet: ID tracking saw $(rj '[.ip.id_reuse[].datagrams] | add') datagrams"
  echo "ok: packet:rx0 -P 2: sent $sent, received $(rj .received), jain $(rj .jain)"
}
run_case packet
