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
  # one pass: a line per frame (tab-separated fields, a field's occurrences
  # comma-separated), then the expert items' summary
  tshark "${opts[@]}" -T fields -e frame.number -e udp -e udp.checksum.status -e ip.checksum.status \
    -e _ws.malformed -e _ws.expert.severity -z expert >"$tmp/dissected" 2>"$tmp/err" || fail "tshark failed: $(cat "$tmp/err")"
  if grep -qE '^(Errors|Warns) \(' "$tmp/dissected"; then
    sed -n '/^$/,$p' "$tmp/dissected" >&2
    fail "tshark expert errors/warnings"
  fi
  # frames; with UDP (after reassembly); a good UDP checksum; a bad UDP or IPv4
  # checksum, malformed, or an expert item of severity warning (6291456) or more
  read -r nf nd ngood nbad < <(awk -F'\t' '
    function any(s, op, v,   k, a, i) { k = split(s, a, ","); for (i = 1; i <= k; i++) if (op == "==" ? a[i] == v : a[i] + 0 >= v) return 1; return 0 }
    /^[0-9]+\t/ {
      nf++
      if ($2 != "") nd++
      if (any($3, "==", 1)) ngood++
      if (any($3, "==", 2) || any($4, "==", 2) || $5 != "" || ($6 != "" && any($6, ">=", 6291456))) nbad++
    }
    END { print nf + 0, nd + 0, ngood + 0, nbad + 0 }' "$tmp/dissected")
  echo "tshark: $nf frames (matrix $frames), $nd UDP datagrams after reassembly (matrix $dgrams)," \
       "$ngood good UDP checksums (expected $((dgrams - nocsum))), $nbad bad/malformed"
  [ "$nf" -eq "$frames" ] || fail "frame count"
  [ "$nd" -eq "$dgrams" ] || fail "datagram count after reassembly"
  [ "$ngood" -eq $((dgrams - nocsum)) ] || fail "good UDP checksum count"
  [ "$nbad" -eq 0 ] || fail "bad or malformed packets"
}
run_case matrix_dissected
