# Shared by the frame-device integration tests (dev_packet.sh, dev_xdp.sh).
# Source it, then call ring_setup LABNAME [LINKS]. Exits 77 when root,
# namespaces, the CLI or tshark are missing.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TXS=${TXS_BIN:-$SRC/build/txscale}
LAB=
WORK=
FAILS=0

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }

ring_cleanup() {
  set +e
  [ -n "$LAB" ] && "$SRC/scripts/netns-lab" down --name "$LAB" >/dev/null 2>&1
  [ -n "$WORK" ] && rm -rf "$WORK"
}

ring_setup() { # LAB [LINKS]
  [ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, AF_PACKET)"
  [ -x "$TXS" ] || skip "no txscale CLI at $TXS"
  command -v tshark >/dev/null && command -v dumpcap >/dev/null || skip "tshark/dumpcap not installed"
  LAB=$1${TXS_LAB_TAG:-}
  WORK=$(mktemp -d)
  trap ring_cleanup EXIT
  "$SRC/scripts/netns-lab" up --name "$LAB" --links "${2:-1}" >/dev/null || skip "cannot create namespaces"
  A=$LAB-a B=$LAB-b
  # no router solicitations from the sender: the peer's RX counters then see our packets only
  ip netns exec "$A" sysctl -qw net.ipv6.conf.all.router_solicitations=0 \
    net.ipv6.conf.default.router_solicitations=0 >/dev/null 2>&1 || true
  for ((i = 0; i < ${2:-1}; i++)); do
    ip netns exec "$A" sysctl -qw "net.ipv6.conf.tx$i.router_solicitations=0" >/dev/null 2>&1 || true
    eval "MAC_TX$i=\$(ip netns exec $A cat /sys/class/net/tx$i/address)"
    eval "MAC_RX$i=\$(ip netns exec $B cat /sys/class/net/rx$i/address)"
  done
}

# settle: wait (at most 10 s) until the link start-up chatter (IPv6 MLD
# reports) is over: the peer's RX counter unchanged for a second.
settle() {
  local prev cur
  prev=$(rx_packets)
  for _ in $(seq 10); do
    sleep 1
    cur=$(rx_packets)
    [ "$cur" = "$prev" ] && return 0
    prev=$cur
  done
}

rx_packets() { ip netns exec "$B" cat "/sys/class/net/${1:-rx0}/statistics/rx_packets"; }

# snmp NS FIELD: a counter of the peer's UDP layer (IPv4 "Udp" line or IPv6 snmp6)
snmp() {
  case $1 in
    Udp6*) ip netns exec "$B" awk -v f="$1" '$1 == f { print $2 }' /proc/net/snmp6 ;;
    *) ip netns exec "$B" awk -v f="$1" '$1 == "Udp:" { if (!h) { for (i = 2; i <= NF; i++) col[$i] = i; h = 1 } else print $col[f] }' /proc/net/snmp ;;
  esac
}

# json_field FILE KEY: first numeric value of "KEY": in FILE
json_field() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2; }

# send ARGS...: txscale send in the sender namespace with a summary file
send() { ip netns exec "$A" "$TXS" send -i 0 --summary-file "$WORK/sum.json" "$@" >"$WORK/send.log" 2>&1; }

# check_delivery DEV DST N [extra send args]: every packet we count as sent
# reaches the peer (veth RX counter) and its UDP layer with good checksums
# (no socket bound: each valid datagram counts once as NoPorts).
check_delivery() {
  local dev=$1 dst=$2 n=$3; shift 3
  local v6=0 np=NoPorts ce=InCsumErrors ie=InErrors
  case $dst in *:*) v6=1 np=Udp6NoPorts ce=Udp6InCsumErrors ie=Udp6InErrors ;; esac
  local rx0 np0 ce0 ie0 rx1 np1 ce1 ie1 sent
  rx0=$(rx_packets) np0=$(snmp $np) ce0=$(snmp $ce) ie0=$(snmp $ie)
  if ! send --dev "$dev" -n "$n" -b 200k --seed 11 "$@" "$dst"; then
    fail "$dev -> $dst: send failed: $(tail -2 "$WORK/send.log")"
    return
  fi
  sent=$(json_field "$WORK/sum.json" packets)
  sleep 0.2
  rx1=$(rx_packets) np1=$(snmp $np) ce1=$(snmp $ce) ie1=$(snmp $ie)
  [ "$sent" = "$n" ] || fail "$dev -> $dst: sent $sent of $n"
  [ $((rx1 - rx0)) = "$sent" ] || fail "$dev -> $dst: peer RX counter +$((rx1 - rx0)), we sent $sent"
  [ $((np1 - np0)) = "$sent" ] || fail "$dev -> $dst: peer UDP layer took $((np1 - np0)) valid datagrams of $sent"
  [ $((ce1 - ce0)) = 0 ] && [ $((ie1 - ie0)) = 0 ] || fail "$dev -> $dst: peer UDP checksum/other errors +$((ce1 - ce0))/+$((ie1 - ie0))"
  ok "$dev -> $dst: $sent sent = $((rx1 - rx0)) received = $((np1 - np0)) valid at UDP (v6=$v6)"
}

# capture_start IFACE COUNT FILE: dumpcap in the peer, returns when it listens
capture_start() {
  ip netns exec "$B" timeout 20 dumpcap -q -i "$1" -c "$2" -P -w "$3" -f udp >"$WORK/dumpcap.log" 2>&1 &
  CAP_PID=$!
  for _ in $(seq 100); do
    grep -q "Capturing on" "$WORK/dumpcap.log" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "dumpcap did not start: $(cat "$WORK/dumpcap.log")"
}

# pcap_frames FILE: one line of hex per frame of a classic little-endian pcap
# (microsecond or nanosecond): 24-byte file header, 16-byte record headers.
pcap_frames() {
  od -An -tx1 -v "$1" | tr -s ' \n' '\n' | grep -v '^$' | awk '
    function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    { b[n++] = $1 }
    END {
      p = 24
      while (p + 16 <= n) {
        len = hex(b[p + 11] b[p + 10] b[p + 9] b[p + 8]); p += 16; s = ""
        for (i = 0; i < len && p + i < n; i++) s = s b[p + i]
        print s; p += len
      }
    }'
}

# check_wire DEV DST N SRC [auto]: the frames on the wire are the generator's:
# our MACs and addresses, ports 40000/5201, good IP and UDP checksums,
# compact payload header (magic 0x7853, flow 0) with sequence 0..N-1,
# IPv4 IDs consecutive; and byte-identical (timestamp and UDP checksum
# masked) to the pcap: device's output for the same seed when it exists.
check_wire() {
  local dev=$1 dst=$2 n=$3 src=$4 ip=ip
  case $dst in *:*) ip=ipv6 ;; esac
  local pc=$WORK/wire.pcap
  rm -f "$pc"
  capture_start rx0 "$n" "$pc" || return
  # MACs from the interface and the neighbour table, source from -B or (auto) the interface
  local bind=(-B "$src")
  [ "${5:-}" = auto ] && bind=()
  send --dev "$dev" -n "$n" -b 2000 --seed 7 "${bind[@]}" "$dst" ||
    { fail "$dev: send failed: $(tail -2 "$WORK/send.log")"; kill "$CAP_PID" 2>/dev/null; return; }
  wait "$CAP_PID" || true
  local fields=(-e eth.src -e eth.dst -e $ip.src -e $ip.dst -e udp.srcport -e udp.dstport -e udp.checksum.status -e data.data)
  [ $ip = ip ] && fields+=(-e ip.checksum.status -e ip.id)
  tshark -r "$pc" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields -E separator=' ' "${fields[@]}" \
    2>/dev/null >"$WORK/wire.txt"
  local got
  got=$(wc -l <"$WORK/wire.txt")
  [ "$got" = "$n" ] || { fail "$dev: captured $got of $n frames"; return; }
  if ! awk -v smac="$MAC_TX0" -v dmac="$MAC_RX0" -v src="$src" -v dst="$dst" -v v4=$([ $ip = ip ] && echo 1 || echo 0) '
    function bad(m) { print "frame " NR ": " m; e = 1; exit 1 }
    function num(s) { return s ~ /^0x/ ? hexv(substr(s, 3)) : s + 0 }
    function hexv(s,   i, v) { v = 0; s = tolower(s); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    {
      if ($1 != smac || $2 != dmac) bad("MACs " $1 " " $2)
      if ($3 != src || $4 != dst) bad("addresses " $3 " " $4)
      if ($5 != 40000 || $6 != 5201) bad("ports " $5 " " $6)
      if ($7 != 1) bad("UDP checksum status " $7)
      if (substr($8, 1, 8) != "78530000") bad("payload header " substr($8, 1, 8))
      seq = sprintf("%08x", NR - 1)
      if (substr($8, 9, 8) != seq) bad("sequence " substr($8, 9, 8) " expected " seq)
      if (v4) {
        if ($9 != 1) bad("IPv4 header checksum status " $9)
        id = num($10)
        if (NR > 1 && id != (prev + 1) % 65536) bad("IPv4 ID " id " after " prev)
        prev = id
      }
    }' "$WORK/wire.txt"; then
    fail "$dev -> $dst: wire frames differ from the generator's"
    return
  fi
  ok "$dev -> $dst: $n frames on the wire carry our headers, checksums and sequence 0..$((n - 1))"
  # byte comparison with the pcap: device, when this build has one
  if "$TXS" send --help 2>/dev/null | grep -q 'pcap:FILE'; then
    local gp=$WORK/gen.pcap
    if ! ip netns exec "$A" "$TXS" send -i 0 --dev "pcap:$gp" -n "$n" --seed 7 --src-mac "$MAC_TX0" \
      --dst-mac "$MAC_RX0" -B "$src" "$dst" >"$WORK/pcap.log" 2>&1; then
      fail "pcap: run failed: $(tail -1 "$WORK/pcap.log")"
      return
    fi
    # frame hex per packet, with the UDP checksum and the timestamp masked;
    # IPv4 also the ID and header checksum: the lease allocator's random delta
    # depends on the clock tick, so IDs are not a function of the seed alone
    local l4=34
    [ $ip = ipv6 ] && l4=54
    for f in "$pc" "$gp"; do
      pcap_frames "$f" |
        awk -v c=$(((l4 + 6) * 2)) -v t=$(((l4 + 16) * 2)) -v v4=$([ $ip = ip ] && echo 1 || echo 0) '{
          s = substr($0, 1, c) "...." substr($0, c + 5, t - c - 4) "................" substr($0, t + 17)
          if (v4) s = substr(s, 1, 36) "...." substr(s, 41, 8) "...." substr(s, 53)
          print s }' >"$f.hex"
    done
    if cmp -s "$pc.hex" "$gp.hex"; then
      ok "$dev -> $dst: wire bytes equal the pcap: device's for the same seed"
    else
      fail "$dev -> $dst: wire bytes differ from the pcap: device's: $(diff "$pc.hex" "$gp.hex" | head -3)"
    fi
  fi
}

ring_finish() {
  if [ "$FAILS" -gt 0 ]; then
    echo "$FAILS check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}
