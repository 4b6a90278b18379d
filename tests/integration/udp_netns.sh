#!/usr/bin/env bash
# udp device into a peer namespace (scripts/netns-lab): every packet txscale
# says it sent arrives. Counted twice at the receiver: the veth rx0 unicast
# packet counter (on a link made quiet first: no IPv6 router solicitations,
# address-setup MLD reports passed) and the UDP MIB of the receiving namespace
# (InDatagrams + NoPorts + InErrors). Both must equal txscale's count when
# tx0 dropped nothing. GSO is checked per segment (tx-udp-segmentation off on
# tx0, so segments are cut before the veth). A short capture on rx0 checks
# that TOS, TTL, DF and ports on the wire are the frames'.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_root "needs root for network namespaces"
need_cmd ip "no iproute2"
need_txs
"$TXS" send --help | grep 'udp\[' >/dev/null || fail "txscale send --help lists no udp device"

LAB=$(lab_name iu)
A=$LAB-a B=$LAB-b
txs_tmp /tmp/txs_udp_it.XXXXXX
dir=$tmp
lab_up "$LAB"
# quiet link: no more IPv6 router solicitations from either side, and let the
# MLD reports of the address setup pass, so rx0 counts only what we send
for ns in "$A" "$B"; do
  ip netns exec "$ns" sh -c 'for f in /proc/sys/net/ipv6/conf/*/router_solicitations; do echo 0 >"$f"; done'
done
for ((k = 0; k < 60; k++)); do
  r0=$(ip netns exec "$B" cat /sys/class/net/rx0/statistics/rx_packets)
  sleep 1
  [ "$(ip netns exec "$B" cat /sys/class/net/rx0/statistics/rx_packets)" = "$r0" ] && [ $k -ge 1 ] && break
done

stat_b() { ip netns exec "$B" cat "/sys/class/net/rx0/statistics/$1"; }
stat_a() { ip netns exec "$A" cat "/sys/class/net/tx0/statistics/$1"; }
udp_mib() { # InDatagrams + NoPorts + InErrors, IPv4 and IPv6, in B
  ip netns exec "$B" awk '
    /^Udp: [0-9]/ { s += $2 + $3 + $4 }
    /^Udp6(InDatagrams|NoPorts|InErrors) / { s += $2 }
    END { print s }' /proc/net/snmp /proc/net/snmp6
}
summary_field() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1" | head -1; }

# mib_count NAME SEND-ARGS...: one run, counted at rx0 and in the UDP MIB
mib_count() {
  local name=$1; shift
  local s=$dir/$name.json
  local rx0 mib0 drop0 rx1 mib1 drop1
  rx0=$(stat_b rx_packets) mib0=$(udp_mib) drop0=$(stat_a tx_dropped)
  ip netns exec "$A" "$TXS" send -i 0 --summary-file "$s" "$@" >"$dir/$name.out" 2>&1 ||
    fail "$name: txscale send exited $?: $(cat "$dir/$name.out")"
  local sent drops rx mib dropped
  sent=$(summary_field "$s" packets) drops=$(summary_field "$s" drops)
  # let the peer's backlog drain: until rx0 and the MIB reach what was sent (at most 5 s)
  arrived() { [ $(($(stat_b rx_packets) - rx0 + $(stat_a tx_dropped) - drop0)) -ge "${sent:-0}" ] && [ $(($(udp_mib) - mib0)) -ge "${sent:-0}" ]; }
  wait_for 5 arrived || true
  rx1=$(stat_b rx_packets) mib1=$(udp_mib) drop1=$(stat_a tx_dropped)
  rx=$((rx1 - rx0)) mib=$((mib1 - mib0)) dropped=$((drop1 - drop0))
  [ -n "$sent" ] && [ "$sent" -gt 0 ] || fail "$name: no packet count in the summary: $(cat "$s")"
  echo "$name: sent $sent (device drops ${drops:-0}), rx0 +$rx, UDP MIB +$mib, tx0 dropped +$dropped"
  [ $((rx + dropped)) -eq "$sent" ] || fail "$name: rx0 counted $rx + tx0 dropped $dropped != sent $sent"
  if [ "$dropped" -eq 0 ]; then
    [ "$rx" -eq "$sent" ] || fail "$name: rx0 counted $rx, sent $sent"
    [ "$mib" -eq "$sent" ] || fail "$name: UDP MIB counted $mib, sent $sent"
  fi
}

# one flow, nobody listening: ICMP port unreachables come back and must not
# cost a packet (late errors on a connected socket are retried, not counted)
# (--dev udp sends GSO by default (IPv4: with --df): with tx-udp-segmentation off on tx0 the
# kernel cuts the segments before the veth, so rx0 and the MIB count each;
# without ethtool the default cases run with --gso off)
GSO_OFF=()
ip netns exec "$A" ethtool -K tx0 tx-udp-segmentation off 2>/dev/null || GSO_OFF=(--gso off)
run_case v4 mib_count v4 --dev udp "${GSO_OFF[@]}" -n 50000 -p 9 198.18.0.2
run_case v6_2threads mib_count v6_2threads --dev udp "${GSO_OFF[@]}" -n 40000 -P 2 --no-pin -p 9 -l 100 2001:2:0:0::2
run_case v4_bitrate mib_count v4_bitrate --dev udp "${GSO_OFF[@]}" -t 0.5 -b 20kpps -p 9 198.18.0.2
run_case v4_nogso mib_count v4_nogso --dev udp --gso off -n 50000 -p 9 198.18.0.2
if [ ${#GSO_OFF[@]} = 0 ]; then
  run_case v4_gso mib_count v4_gso --dev udp:gso -n 100000 -p 9 198.18.0.2
  run_case v6_gso8 mib_count v6_gso8 --dev udp:gso=8 -n 30000 -l 200 -P 2 --no-pin -p 9 2001:2:0:0::2
else
  no_ethtool() { skip "no ethtool: GSO per-segment check skipped"; }
  run_case v4_gso no_ethtool
  run_case v6_gso8 no_ethtool
fi
# several links: a second pair would need a second lab link; the device-bound
# socket is checked here (bind=tx0), with the source given
run_case v4_bind mib_count v4_bind --dev udp:bind=tx0 -B 198.18.0.1 -n 10000 -p 9 198.18.0.2

# a full device queue: a slow qdisc on tx0 and a socket buffer larger than the
# qdisc limit make the kernel refuse datagrams (ENOBUFS, reported thanks to
# IP_RECVERR). Refused frames are retried, then counted as drops: sent +
# drops = built, the device's drop_full equals the engine's drops, and rx0
# sees exactly the sent ones.
qdisc_full() {
  local s sent drops link ldrops lerrs
  tc -n "$A" qdisc add dev tx0 root tbf rate 1mbit burst 5k limit 5k 2>/dev/null || skip "no tbf qdisc: the full-queue case is skipped"
  CLEANUP_HOOKS+=('tc -n "$A" qdisc del dev tx0 root 2>/dev/null')
  # one datagram per message: each refusal is the kernel's ENOBUFS for that datagram
  mib_count v4_qdisc_full --dev udp:sndbuf=4000000,gso=off -n 3000 -p 9 198.18.0.2
  s=$dir/v4_qdisc_full.json
  sent=$(summary_field "$s" packets) drops=$(summary_field "$s" drops)
  link=$(sed -n 's/.*"links":\[{\([^}]*\)}.*/\1/p' "$s")
  ldrops=$(echo "$link" | sed -n 's/.*"drops":\([0-9]*\).*/\1/p')
  lerrs=$(echo "$link" | sed -n 's/.*"errors":\([0-9]*\).*/\1/p')
  echo "v4_qdisc_full: engine drops $drops, device drop_full $ldrops, drop_err $lerrs"
  [ $((sent + drops)) -eq 3000 ] || fail "v4_qdisc_full: sent $sent + drops $drops != 3000 built"
  [ "$drops" -gt 0 ] || fail "v4_qdisc_full: the slow qdisc refused nothing (test did not test)"
  [ "$ldrops" = "$drops" ] && [ "$lerrs" = 0 ] || fail "v4_qdisc_full: device drop_full $ldrops / drop_err $lerrs, engine drops $drops"
}
run_case v4_qdisc_full qdisc_full

# GSO (the default): tbf cuts a call larger than its burst into segments and
# drops those over its limit itself, unreported to the sender (tbf_segment
# returns success when any segment was queued), so the sender's count holds
# datagrams the qdisc dropped (docs/udp.md, "GSO by default"): here only
# sent + refused = built and rx0 <= sent hold; --gso off above is exact
qdisc_gso() {
  local qd0 rx0 qd rx sent drops
  tc -n "$A" qdisc add dev tx0 root tbf rate 1mbit burst 5k limit 5k 2>/dev/null || skip "no tbf qdisc: the full-queue case is skipped"
  CLEANUP_HOOKS+=('tc -n "$A" qdisc del dev tx0 root 2>/dev/null')
  qd0=$(tc -n "$A" -s -j qdisc show dev tx0 | jq '.[0].drops')
  rx0=$(stat_b rx_packets)
  ip netns exec "$A" "$TXS" send -i 0 --summary-file "$dir/qgso.json" --dev udp:sndbuf=4000000 --df -n 3000 -p 9 \
    198.18.0.2 >"$dir/qgso.out" 2>&1 || fail "v4_qdisc_gso: send: $(cat "$dir/qgso.out")"
  sleep 1.5 # tbf drains 5 kB at 1 Mbit/s in 40 ms; the box may be slow
  qd=$(($(tc -n "$A" -s -j qdisc show dev tx0 | jq '.[0].drops') - qd0)) rx=$(($(stat_b rx_packets) - rx0))
  sent=$(summary_field "$dir/qgso.json" packets) drops=$(summary_field "$dir/qgso.json" drops)
  echo "v4_qdisc_gso: sent $sent (refused $drops), rx0 +$rx, tbf dropped +$qd (segments, retried calls' included)"
  [ $((sent + drops)) -eq 3000 ] || fail "v4_qdisc_gso: sent $sent + refused $drops != 3000 built"
  [ "$rx" -le "$sent" ] || fail "v4_qdisc_gso: rx0 $rx > sent $sent"
}
run_case v4_qdisc_gso qdisc_gso

# the wire: TOS, TTL, DF, ports and source as the frames say
wire() {
  local cap_pid fields want
  need_cmd tshark "no tshark: wire fields not checked"
  need_cmd dumpcap "no dumpcap: wire fields not checked"
  ip netns exec "$B" dumpcap -q -i rx0 -a duration:8 -c 100 -f "udp and dst port 7" -w "$dir/wire.pcap" \
    >"$dir/cap.log" 2>&1 &
  cap_pid=$!
  capturing "$dir/cap.log" || fail "wire: dumpcap did not start: $(cat "$dir/cap.log")"
  ip netns exec "$A" "$TXS" send --dev udp -n 100 -p 7 --sport 41000 --tos 0x20 --ttl 9 --df -i 0 198.18.0.2 \
    >/dev/null || fail "wire: txscale send failed"
  wait "$cap_pid" || true
  cap_pid=
  fields=$(tshark -n -r "$dir/wire.pcap" -T fields -e ip.src -e udp.srcport -e ip.dsfield -e ip.ttl \
    -e ip.flags.df -e udp.length 2>/dev/null | sort | uniq -c)
  echo "wire: $fields"
  want=$(printf '198.18.0.1\t41000\t0x20\t9\t1\t24')
  [ "$(echo "$fields" | wc -l)" -eq 1 ] && [[ "$fields" == *"100 $want"* ]] ||
    fail "wire: expected 100 x '$want', got: $fields"
}
run_case wire

