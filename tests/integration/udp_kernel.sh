#!/usr/bin/env bash
# The frames of the sendmsg permutation matrix are injected through
# a plain AF_PACKET socket on the lab's sender veth (netns-lab "usm", or
# $TXS_UDP_LAB); kernel UDP sockets in the peer namespace (198.18.0.2 and
# 2001:2::2, port 5300) must receive every datagram, fragments reassembled,
# with exactly the payload bytes, source, TOS / traffic class and TTL / hop
# limit each case intended (IP_RECVTOS, IP_RECVTTL, IPV6_RECVTCLASS,
# IPV6_RECVHOPLIMIT), and the kernel must count no UDP checksum errors and no
# reassembly failures. Root + namespaces, else exit 77.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_root "needs root (network namespaces, AF_PACKET)"
b=${TXS_BUILDDIR:-$SRC/build}
h="$b/txs_udp_matrix"
[ -x "$h" ] || skip "$h not built (needs libpcap)"
name=$(lab_name "${TXS_UDP_LAB:-usm}")
txs_tmp
lab_up "$name"
A="$name-a" B="$name-b"
amac=$(ip netns exec "$A" cat /sys/class/net/tx0/address)
bmac=$(ip netns exec "$B" cat /sys/class/net/rx0/address)

# the receiving kernel's own counters
snmp() { ip netns exec "$B" awk -v k="$1" -v f="$2" '$1 == k":" { if (!h) { for (i = 2; i <= NF; i++) if ($i == f) c = i; h = 1 } else print $c }' /proc/net/snmp; }
snmp6() { ip netns exec "$B" awk -v f="$1" '$1 == f { print $2 }' /proc/net/snmp6; }

matrix_received() {
  local rpid rrc=0 csum4 reasm4 csum6 reasm6
  ip netns exec "$B" timeout 90 "$h" recv 60 "$tmp/ready" >"$tmp/recv" 2>&1 &
  rpid=$!
  for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
  [ -e "$tmp/ready" ] || fail "receiver did not start: $(cat "$tmp/recv")"
  ip netns exec "$A" timeout 90 "$h" inject tx0 "$amac" "$bmac" || fail "injection"
  wait "$rpid" || rrc=$?
  cat "$tmp/recv"
  csum4=$(snmp Udp InCsumErrors) reasm4=$(snmp Ip ReasmFails) csum6=$(snmp6 Udp6InCsumErrors) reasm6=$(snmp6 Ip6ReasmFails)
  echo "kernel counters: Udp InCsumErrors $csum4, Ip ReasmFails $reasm4, Udp6 InCsumErrors $csum6, Ip6 ReasmFails $reasm6"
  [ "$rrc" -eq 0 ] || fail "receiver saw missing or different datagrams"
  [ "$csum4$reasm4$csum6$reasm6" = "0000" ] || fail "kernel counted checksum errors or reassembly failures"
}
run_case matrix_received
