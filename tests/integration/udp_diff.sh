#!/usr/bin/env bash
# Differential test: the same sends through a kernel UDP socket
# (txs_ksend) and through `txscale send` -- `pcap:` (written to a file) and
# `packet:` (into a veth with MTU 1500, captured in the peer namespace) --
# compared frame by frame with tshark: frame and IP lengths, fragment layout
# (DF, MF, offsets; IPv6 Fragment header offset and M), TTL / hop limit,
# TOS / traffic class, UDP length, IPv4 header and UDP checksum status; then,
# reassembled, the datagram count and sizes (tshark's reassembly and the
# kernel's: a UDP socket in the peer counts what it is handed). Any difference
# fails, except the deliberate ones listed in docs/udp.md ("Against the
# kernel"), which are normalised away here:
#   - IPv4 ID and IPv6 fragment identification values, payload bytes (and so
#     checksum values: their status is compared), the IPv6 flow label;
#   - runt frames: the kernel hands the veth < 60-byte frames, txscale pads;
#   - GSO runs: the kernel's checksums are offloaded (partial on the wire),
#     so only txscale's are checked (all good).
# Cases: IPv4 and IPv6; one frame, the MTU edge, fragments, 64 KiB; TOS/TTL;
# DF (and DF over the MTU: both refuse); the kernel socket's own IPv4 default
# (IP_PMTUDISC_WANT: DF where the datagram fits, the udp device's default)
# against --df and against the frame devices' DF-clear default (the other
# IPv4 cases tell the reference socket nodf, IP_PMTUDISC_DONT, the frame
# devices' default); GSO with -n not a multiple of the
# segments per send; unconnected; paced (-b) and unpaced; a 64-slot TX ring
# that fills (ring-full); -n values that are multiples of nothing.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
KS=${TXS_BUILDDIR:-$SRC/build}/txs_ksend
[ -x "$KS" ] || skip "no txs_ksend helper at $KS (build it)"
command -v ethtool >/dev/null || skip "needs ethtool"
ring_setup udf 1 mergecap
settle
ip netns exec "$A" ethtool -K tx0 tx-udp-segmentation off >/dev/null 2>&1 || true

FIELDS=(frame.len ip.len ip.flags.df ip.flags.mf ip.frag_offset ip.ttl ip.dsfield ip.checksum.status
  ipv6.plen ipv6.tclass ipv6.hlim ipv6.fraghdr.offset ipv6.fraghdr.more udp.length udp.checksum.status)
TSHARK_OPTS=(-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE)

# merged OUT FILE...: the FILEs one after another in OUT (pcapng), each
# frame with its file's place (0 first) as its interface (frame.interface_id)
merged() {
  local out=$1
  shift
  mergecap -a -I none -F pcapng -w "$out" "$@"
}
# frames OUT SKIP_UDP_CSUM MERGED N: one normalised line per frame of each of
# the N files in MERGED, into OUT.0 ... OUT.N-1; SKIP_UDP_CSUM masks the UDP
# checksum status of the first file's frames
frames() {
  local out=$1 skip=$2 ef=() f
  for f in "${FIELDS[@]}"; do ef+=(-e "$f"); done
  for ((f = 0; f < $4; f++)); do : >"$out.$f"; done
  tshark -r "$3" "${TSHARK_OPTS[@]}" -o ip.defragment:FALSE -o ipv6.defragment:FALSE -T fields \
    -E separator=, -E occurrence=f "${ef[@]}" -e frame.interface_id 2>/dev/null |
    awk -F, -v skip="$skip" -v out="$out" 'BEGIN { OFS = "," }
      { if ($1 < 60) $1 = 60; if (skip && $16 == 0) $15 = "-"; f = out "." $16; NF = 15; print > f }'
}
# dgrams OUT MERGED N: the reassembled UDP datagrams of each of the N files
# in MERGED, "length status" per datagram, into OUT.0 ... OUT.N-1 (a
# datagram's file is its last fragment's). A reassembly never spans two
# files: each file's datagrams end before the next file's begin, and an ID
# seen again once its datagram is whole starts a new one (the pcap: and
# packet: runs repeat each other's IDs)
dgrams() {
  local out=$1 f
  for ((f = 0; f < $3; f++)); do : >"$out.$f"; done
  tshark -r "$2" "${TSHARK_OPTS[@]}" -o ip.defragment:TRUE -o ipv6.defragment:TRUE -Y udp -T fields \
    -e udp.length -e udp.checksum.status -e frame.interface_id 2>/dev/null |
    awk -v out="$out" '{ print $1, $2 > (out "." $3) }'
}
# dgram_counts FILE SKIP_UDP_CSUM: FILE's datagrams (of dgrams) as "count length status"
dgram_counts() { awk -v skip="$2" '{ if (skip) $2 = "-"; print $1, $2 }' "$1" | sort | uniq -c; }

cap_start() { # FILE SRC
  ip netns exec "$B" timeout 60 dumpcap -q -i rx0 -P -w "$1" -f "src host $2" >"$WORK/dumpcap.log" 2>&1 &
  CAP=$!
  capturing "$WORK/dumpcap.log" || fail "dumpcap did not start: $(cat "$WORK/dumpcap.log")"
}
sink_start() { # ADDR OUT N: the kernel's count of what arrives, N datagrams expected
  ip netns exec "$B" "$KS" sink "$1" 5201 1 "$3" >"$2" 2>&1 &
  SINK=$!
  wait_for 5 grep -q listening "$2" 2>/dev/null || true
}

# diff_run NAME SRC DST LEN N "KSEND OPTS" "TXSCALE OPTS" [gso]
diff_run() {
  local name=$1 src=$2 dst=$3 len=$4 n=$5 kopt=$6 topt=$7 gso=${8:-}
  local skip=""
  [ -n "$gso" ] && skip=1
  local csum=off
  [ -n "$gso" ] && csum=on # UDP GSO needs checksum offload
  CSUM=$(cat "$WORK/csum" 2>/dev/null || true) # tx0's checksum offload as the last case left it
  if [ "$csum" != "${CSUM:-}" ]; then
    # the kernel's checksums in full on the wire (offload off), except for GSO
    ip netns exec "$A" ethtool -K tx0 tx $csum >/dev/null 2>&1 || true
    echo "$csum" >"$WORK/csum"
    sleep 1 # a feature change settles before the capture starts
  fi
  # the kernel (a capture that saw nothing on a loaded box, dumpcap not yet
  # reading when the burst went by, is taken again, once)
  local kt
  for kt in 1 2; do
    sink_start "$dst" "$WORK/k.sink" "$n"
    cap_start "$WORK/k.pcap" "$src"
    # shellcheck disable=SC2086
    ip netns exec "$A" "$KS" send "$src" "$dst" 5201 40000 "$len" "$n" $kopt 2>"$WORK/k.err" || {
      fail_later "$name: kernel send: $(cat "$WORK/k.err")"; capture_end "$CAP"; kill "$SINK"; wait "$SINK" || true; return; }
    wait "$SINK"
    capture_end "$CAP"
    # a classic pcap file is its 24-byte header and the frames
    [ "$(stat -c %s "$WORK/k.pcap")" -gt 24 ] && break
    echo "   $name: the kernel's capture is empty (try $kt)"
  done
  # txscale: pcap: and packet:
  # shellcheck disable=SC2086
  ip netns exec "$A" "$TXS" send -i 0 --seed 7 -B "$src" --sport 40000 -p 5201 -l "$len" -n "$n" $topt \
    --dev "pcap:$WORK/p.pcap" "$dst" >"$WORK/p.log" 2>&1 || { fail_later "$name: txscale pcap: $(tail -2 "$WORK/p.log")"; return; }
  sink_start "$dst" "$WORK/t.sink" "$n"
  cap_start "$WORK/t.pcap" "$src"
  # shellcheck disable=SC2086
  ip netns exec "$A" "$TXS" send -i 0 --seed 7 -B "$src" --sport 40000 -p 5201 -l "$len" -n "$n" $topt \
    --dev "packet:tx0${RING:-}" "$dst" >"$WORK/t.log" 2>&1 || { fail_later "$name: txscale packet: $(tail -2 "$WORK/t.log")"; kill "$SINK"; wait "$SINK" || true; capture_end "$CAP"; return; }
  wait "$SINK"
  capture_end "$CAP"
  # two tshark passes over the three files, side by side: the frames, and
  # the datagrams reassembled
  local x i=0 pids=()
  merged "$WORK/all.pcapng" "$WORK/k.pcap" "$WORK/p.pcap" "$WORK/t.pcap" ||
    { fail_later "$name: mergecap failed"; return; }
  frames "$WORK/f" "$skip" "$WORK/all.pcapng" 3 & pids+=($!)
  dgrams "$WORK/d" "$WORK/all.pcapng" 3 & pids+=($!)
  for x in "${pids[@]}"; do wait "$x" || { fail_later "$name: reading the captures failed"; return; }; done
  for x in k p t; do
    mv "$WORK/f.$i" "$WORK/$x.frames"
    mv "$WORK/d.$i" "$WORK/$x.dgr"
    i=$((i + 1))
  done
  local nf bad=0
  nf=$(wc -l <"$WORK/k.frames")
  [ "$nf" -gt 0 ] || { fail_later "$name: the kernel's capture is empty"; return; }
  for x in p t; do
    local xf="$WORK/$x.frames"
    [ -n "$gso" ] && awk -F, 'BEGIN { OFS = "," } { $15 = "-"; print }' "$xf" >"$xf.cmp" || cp "$xf" "$xf.cmp"
    if ! diff -q "$WORK/k.frames" "$xf.cmp" >/dev/null; then
      fail_later "$name: $x frames differ from the kernel's (fields: ${FIELDS[*]}):"
      diff "$WORK/k.frames" "$xf.cmp" | head -6 >&2
      bad=1
    fi
    # txscale's own checksums: every IPv4 header good, UDP good where checked
    if awk -F, '$8 == "0" || $15 == "0"' "$xf" | grep . >/dev/null; then fail_later "$name: $x: a bad checksum"; bad=1; fi
  done
  for x in k p t; do dgram_counts "$WORK/$x.dgr" "$skip" >"$WORK/$x.dg"; done
  local kd
  kd=$(awk '{ s += $1 } END { print s + 0 }' "$WORK/k.dg")
  [ "$kd" = "$n" ] || { fail_later "$name: tshark reassembled $kd kernel datagrams, want $n"; bad=1; }
  for x in p t; do
    diff -q "$WORK/k.dg" "$WORK/$x.dg" >/dev/null || { fail_later "$name: $x datagrams after reassembly: $(tr '\n' ' ' <"$WORK/$x.dg") vs kernel $(tr '\n' ' ' <"$WORK/k.dg")"; bad=1; }
    if [ -n "$gso" ] && ! dgram_counts "$WORK/$x.dgr" "" | awk '$3 != "1" { exit 1 }'; then fail_later "$name: $x: a UDP checksum not good"; bad=1; fi
  done
  grep -q "^datagrams $n\$" "$WORK/k.sink" || { fail_later "$name: kernel sink: $(head -1 "$WORK/k.sink"), want $n"; bad=1; }
  diff -q "$WORK/k.sink" "$WORK/t.sink" >/dev/null || { fail_later "$name: delivered datagrams differ: kernel $(tr '\n' ' ' <"$WORK/k.sink") txscale $(tr '\n' ' ' <"$WORK/t.sink")"; bad=1; }
  [ $bad = 0 ] || return 0
  ok "$name: $nf frames, $n datagrams: kernel = pcap: = packet:"
}

S4=198.18.0.1 D4=198.18.0.2 S6=2001:2::1 D6=2001:2::2
run_case v4_runt diff_run "v4 runt" $S4 $D4 16 7 "nodf" ""
run_case v4_1472_mtu_edge diff_run "v4 1472 (MTU edge)" $S4 $D4 1472 5 "nodf" ""
run_case v4_1473_2_fragments diff_run "v4 1473 (2 fragments)" $S4 $D4 1473 5 "nodf" ""
run_case v4_3000_tos_ttl diff_run "v4 3000 tos ttl" $S4 $D4 3000 11 "tos=0x2e ttl=9 nodf" "--tos 46 --ttl 9"
run_case v4_8000_paced diff_run "v4 8000 paced" $S4 $D4 8000 13 "pps=1000 nodf" "-b 1kpps"
run_case v4_65507 diff_run "v4 65507" $S4 $D4 65507 3 "nodf" ""
run_case v4_1000_df diff_run "v4 1000 df" $S4 $D4 1000 5 "df" "--df"
# the kernel socket's own default (IP_PMTUDISC_WANT, the udp device's):
# DF on a datagram that fits the path MTU (as --df), local fragments without
# DF on one that does not (as the frame devices' default)
run_case v4_1000_kernel_default diff_run "v4 1000, kernel default" $S4 $D4 1000 5 "" "--df"
run_case v4_3000_kernel_default diff_run "v4 3000, kernel default" $S4 $D4 3000 5 "" ""
run_case v4_3000_unconnected diff_run "v4 3000 unconnected" $S4 $D4 3000 9 "unconnected nodf" "--unconnected"
run_case v6_runt diff_run "v6 runt" $S6 $D6 0 3 "" ""
run_case v6_1452_mtu_edge diff_run "v6 1452 (MTU edge)" $S6 $D6 1452 5 "" ""
run_case v6_1453_2_fragments diff_run "v6 1453 (2 fragments)" $S6 $D6 1453 5 "" ""
run_case v6_8000_tclass_hlim diff_run "v6 8000 tclass hlim" $S6 $D6 8000 13 "tos=0xb8 ttl=200" "--tos 184 --ttl 200"
run_case v6_3000_paced diff_run "v6 3000 paced" $S6 $D6 3000 19 "pps=1000" "-b 1kpps"
run_case v6_65527 diff_run "v6 65527" $S6 $D6 65527 3 "" ""
ring64() { RING=,ring=64 diff_run "$@"; }
run_case v4_8000_ring64_full ring64 "v4 8000 unpaced, 64-slot ring (ring full)" $S4 $D4 8000 101 "nodf" ""
run_case v6_8000_ring64_full ring64 "v6 8000 unpaced, 64-slot ring (ring full)" $S6 $D6 8000 97 "" ""

# DF over the MTU: the kernel refuses the send (EMSGSIZE), txscale the run (exit 2)
df_over_mtu() { # SRC DST LEN TXSCALE-OPT KSEND-OPT
  local krc=0 trc=0
  ip netns exec "$A" "$KS" send "$1" "$2" 5201 40000 "$3" 1 "$5" 2>/dev/null || krc=$?
  ip netns exec "$A" "$TXS" send -i 0 -B "$1" -l "$3" -n 1 "$4" --dev packet:tx0 "$2" >"$WORK/e.log" 2>&1 || trc=$?
  if [ $krc = 3 ] && [ $trc = 2 ] && grep -q "MTU 1500" "$WORK/e.log"; then ok "DF over the MTU ($2 -l $3): kernel EMSGSIZE, txscale exit 2"
  else fail "DF over the MTU ($2 -l $3): kernel rc $krc (3 = EMSGSIZE), txscale rc $trc: $(cat "$WORK/e.log")"; fi
}
run_case v4_df_over_mtu df_over_mtu $S4 $D4 1473 --df df
run_case v6_df_over_mtu df_over_mtu $S6 $D6 1453 --df df

# the GSO cases need tx0's checksum offload on, the others off: they come last, so
# that it changes twice in the run
run_case v4_gso_1000_x_5500_n_17 diff_run "v4 gso 1000 x 5500, n 17" $S4 $D4 5500 17 "gso=1000" "--gso 1000" gso
run_case v4_gso_1472_x_14720_n_23_paced diff_run "v4 gso 1472 x 14720, n 23 paced" $S4 $D4 14720 23 "gso=1472 pps=2000" "--gso 1472 -b 2kpps" gso
run_case v6_gso_1200_x_6000_n_23 diff_run "v6 gso 1200 x 6000, n 23" $S6 $D6 6000 23 "gso=1200" "--gso 1200" gso
