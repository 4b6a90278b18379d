#!/usr/bin/env bash
# Every frame of the sendmsg permutation matrix (tests/unit/udp_matrix.h)
# written to a pcap file and dissected by tshark with IPv4/UDP checksum
# validation and IPv4/IPv6 reassembly on. Passes when tshark raises no expert
# error or warning (malformed packet, bad checksum, ...), sees every frame,
# finds exactly the matrix's datagrams after reassembly, and calls every UDP
# checksum that is present good.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
b=${TXS_BUILDDIR:-$SRC/build}
h="$b/txs_udp_matrix"
[ -x "$h" ] || skip "$h not built (needs libpcap)"
need_cmd tshark "tshark not installed"
txs_tmp

matrix_dissected() {
  local frames dgrams nocsum opts nf nd ngood nbad
  read -r _ frames _ dgrams _ nocsum < <("$h" pcap "$tmp/m.pcap") || fail "helper could not write the pcap"
  [ "${frames:-0}" -gt 0 ] || fail "no frames written"
  opts=(-r "$tmp/m.pcap" -d udp.port==5300,data -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE
        -o ip.defragment:TRUE -o ipv6.defragment:TRUE)
  tshark "${opts[@]}" -q -z expert >"$tmp/expert" 2>"$tmp/err" || fail "tshark failed: $(cat "$tmp/err")"
  if grep -qE '^(Errors|Warns) \(' "$tmp/expert"; then
    cat "$tmp/expert" >&2
    fail "tshark expert errors/warnings"
  fi
  count() { tshark "${opts[@]}" "$@" -T fields -e frame.number 2>/dev/null | wc -l; }
  nf=$(count)
  nd=$(count -Y udp)
  ngood=$(count -Y "udp.checksum.status == 1")
  nbad=$(count -Y "udp.checksum.status == 2 || ip.checksum.status == 2 || _ws.malformed || _ws.expert.severity >= 6291456")
  echo "tshark: $nf frames (matrix $frames), $nd UDP datagrams after reassembly (matrix $dgrams)," \
       "$ngood good UDP checksums (expected $((dgrams - nocsum))), $nbad bad/malformed"
  [ "$nf" -eq "$frames" ] || fail "frame count"
  [ "$nd" -eq "$dgrams" ] || fail "datagram count after reassembly"
  [ "$ngood" -eq $((dgrams - nocsum)) ] || fail "good UDP checksum count"
  [ "$nbad" -eq 0 ] || fail "bad or malformed packets"
}
run_case matrix_dissected
