#!/usr/bin/env bash
# pcap device, dissected by tshark: for several flows (IPv4/IPv6, payload
# sizes, zero checksum, DF, TOS, 1..3 threads) the file holds exactly the
# packets sent, and tshark, checking IP and UDP checksums, reports no expert
# item (no malformed frame, no bad checksum). A corrupted copy must produce
# one, so the oracle is shown to work. No root needed.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_cmd tshark "tshark not installed"
need_txs
"$TXS" send --help | grep 'pcap:FILE' >/dev/null || skip "txscale built without the pcap device"

txs_tmp /tmp/txs_pcap_it.XXXXXX
dir=$tmp
TS=(tshark -n -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE)

# expert items tshark reports for a file (empty when clean)
expert() { "${TS[@]}" -r "$1" -q -z expert 2>/dev/null | grep -E '^(Errors|Warnings|Notes|Chats) \(' || true; }
# dissect FILE: one tshark pass: a line per frame (its number, UDP
# destination ports, expert items, malformed mark; tab-separated), then the
# expert items' summary
dissect() { "${TS[@]}" -r "$1" -T fields -e frame.number -e udp.dstport -e _ws.expert -e _ws.malformed -z expert 2>/dev/null; }

env_port9() { PORT=9 "$@"; }

check() {
  local name=$1 n=$2; shift 2
  local f=$dir/$name.pcap s=$dir/$name.json
  "$TXS" send --dev "pcap:$f" -n "$n" -i 0 --summary-file "$s" "$@" >/dev/null ||
    fail "$name: txscale send exited $?"
  grep -q "\"packets\":$n[,}]" "$s" || fail "$name: summary does not say $n packets: $(cat "$s")"
  dissect "$f" >"$f.txt"
  local got
  got=$(grep -c $'^[0-9]*\t' "$f.txt" || true)
  [ "$got" -eq "$n" ] || fail "$name: tshark sees $got frames, sent $n"
  local ex
  ex=$(grep -E '^(Errors|Warnings|Notes|Chats) \(' "$f.txt" || true)
  [ -z "$ex" ] || fail "$name: tshark expert info: $ex"
  # every frame is UDP to the destination port, with no expert item and not malformed
  local udp
  udp=$(awk -F'\t' -v p="${PORT:-5201}" '/^[0-9]+\t/ {
      k = split($2, d, ","); to = 0
      for (i = 1; i <= k; i++) if (d[i] == p) to = 1
      if (to && $3 == "" && $4 == "") c++
    } END { print c + 0 }' "$f.txt")
  [ "$udp" -eq "$n" ] || fail "$name: $udp of $n frames are clean UDP to port ${PORT:-5201}"
  echo "ok: $name ($n frames)"
}

run_case v4_16 check v4_16 5000 198.18.0.2
run_case v4_1472_df_tos check v4_1472_df_tos 300 -l 1472 --df --tos 0x2e --ttl 7 198.18.0.2
run_case v4_nocsum check v4_nocsum 1000 -l 64 --no-csum 198.18.0.2
run_case v4_3threads check v4_3threads 9999 -P 3 --no-pin -l 24 198.18.0.2
run_case v6_100 check v6_100 2000 -l 100 2001:2::2
run_case v6_0 check v6_0 100 -l 0 -P 2 --no-pin 2001:2::2
run_case v4_port9_macs env_port9 check v4_port9_macs 100 -p 9 --src-mac 02:00:00:00:00:01 --dst-mac 02:00:00:00:00:02 198.18.0.2

# the oracle: one payload byte changed in the first frame -> a bad UDP checksum
# (offset: 24 file header + 16 record header + 14 + 20 + 8 + 10 into the payload)
oracle() {
  local ex
  cp "$dir/v4_16.pcap" "$dir/bad.pcap"
  printf '\xee' | dd of="$dir/bad.pcap" bs=1 seek=$((24 + 16 + 14 + 20 + 8 + 10)) conv=notrunc status=none
  ex=$(expert "$dir/bad.pcap")
  [[ "$ex" == *Errors* || "$ex" == *Warnings* ]] || fail "a corrupted frame went unnoticed by tshark (oracle broken)"
  echo "ok: corrupted copy flagged ($ex)"
}
run_case --needs v4_16 oracle
