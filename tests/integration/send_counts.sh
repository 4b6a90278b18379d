#!/usr/bin/env bash
# Counts nobody can corrupt, the send side:
#  1. pcap:/dev/full exits 1 with one line naming the device and the reason,
#     and counts every frame as an error, none as sent;
#  2. pcap:- keeps stdout a pure capture (text and -J reports go to stderr):
#     piped into a reader, and into `recv --dev pcap:-`, every record is there;
#  3. a closed port (udp device, connected socket, ICMP port unreachable)
#     shows its refused sends in the summary and on stderr;
#  4. a downed packet: link: the summary equals the sum of its link rows and
#     of its thread rows, and the run exits 1 naming the device;
#  5. udp --df with datagrams over the path MTU never exits 0 silently.
# In every JSON summary: packets/drops/errors == sum of thread rows == sum of
# link rows. Parts 4-5 need root and namespaces (skipped alone otherwise).
set -uo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
[ -x "$TXS" ] || skip "no txscale CLI at $TXS"
"$TXS" send --help | grep 'pcap:FILE' >/dev/null || skip "built without libpcap"
txs_tmp

# one_story FILE: the last JSON line is a summary whose totals are the sums
# of its thread rows and of its link rows; prints "packets drops errors icmp"
one_story() {
  python3 - "$1" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert s["type"] == "summary", s
for k in ("packets", "bytes", "drops", "errors"):
    t = sum(r[k] for r in s["threads"]); l = sum(r[k] for r in s["links"])
    assert s[k] == t == l, (k, s[k], t, l)
print(s["packets"], s["drops"], s["errors"], s.get("icmp_errors", 0))
PY
}

pcap_dev_full() {
  local rc pk dr er text
  # ---- 1. pcap:/dev/full -------------------------------------------------------
  "$TXS" send --dev pcap:/dev/full -n 100000 -i 0 -J 198.18.0.2 >"$tmp/full.json" 2>"$tmp/full.err"
  rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l <"$tmp/full.err")" -eq 1 ] && grep -q 'pcap:/dev/full' "$tmp/full.err" &&
     grep -q 'No space left on device' "$tmp/full.err"; then
    ok "pcap:/dev/full exits 1: $(cat "$tmp/full.err")"
  else
    fail_later "pcap:/dev/full: exit $rc, stderr: $(cat "$tmp/full.err")"
  fi
  if read -r pk dr er _ < <(one_story "$tmp/full.json") && [ "$pk" = 0 ] && [ "$er" -gt 0 ]; then
    ok "pcap:/dev/full counts $er errors, 0 packets, one story"
  else
    fail_later "pcap:/dev/full summary: $(tail -1 "$tmp/full.json")"
  fi
  # the text report says errors too
  text=$("$TXS" send --dev pcap:/dev/full -n 1000 -i 0 198.18.0.2 2>/dev/null)
  grep -q '^\[ SUM\].* 0 pkts .* errors$' <<<"$text" && ok "text report shows the errors" ||
    fail_later "text report of pcap:/dev/full lacks errors: $text"

  # ---- 2. pcap:- is a clean capture on stdout -------------------------------------
}
run_case pcap_dev_full

count_records() { # stdin: a pcap stream -> number of records (fails on anything else)
  python3 -c '
import struct, sys
d = sys.stdin.buffer.read()
assert len(d) >= 24 and struct.unpack("<I", d[:4])[0] == 0xa1b23c4d, "not a nanosecond pcap"
off, n = 24, 0
while off < len(d):
    assert off + 16 <= len(d), "truncated record header"
    caplen = struct.unpack("<IIII", d[off:off + 16])[2]
    assert off + 16 + caplen <= len(d), "truncated record"
    off += 16 + caplen; n += 1
print(n)'
}
pcap_stdout() {
  local j n pk
  for j in "" "-J"; do
    n=$("$TXS" send --dev pcap:- -n 5000 -P 2 -l 64 -i 0.001 $j 198.18.0.2 2>"$tmp/pipe.err" | count_records)
    if [ "$n" = 5000 ]; then ok "pcap:- $j: 5000 records on stdout"; else fail_later "pcap:- $j: '$n' records"; fi
    if [ -n "$j" ]; then
      grep '"type":"summary"' "$tmp/pipe.err" >"$tmp/pipe.json" && read -r pk _ < <(one_story "$tmp/pipe.json") &&
        [ "$pk" = 5000 ] && ok "pcap:- -J: the summary went to stderr" || fail_later "pcap:- -J: no summary on stderr"
    else
      grep -q 'send: 5000 packets' "$tmp/pipe.err" && ok "pcap:-: the text report went to stderr" ||
        fail_later "pcap:-: no report on stderr"
    fi
  done
}
run_case pcap_stdout

pcap_stdout_closed() {
  local rc pk dr er
  # a reader that goes away: a device write error (EPIPE), one line, exit 1, counts agree
  "$TXS" send --dev pcap:- -n 1M -i 0 -J 198.18.0.2 2>"$tmp/epipe.err" | head -c 1000 >/dev/null
  rc=${PIPESTATUS[0]}
  grep '"type":"summary"' "$tmp/epipe.err" >"$tmp/epipe.json"
  if [ "$rc" = 1 ] && [ "$(tail -n 1 "$tmp/epipe.err")" = "txscale send: --dev pcap:-: Broken pipe" ] &&
     read -r pk dr er _ < <(one_story "$tmp/epipe.json") && [ "$er" -gt 0 ]; then
    ok "pcap:- into a closed pipe: exit 1, Broken pipe, $pk written, $er errors"
  else
    fail_later "pcap:- into a closed pipe: exit $rc: $(tail -n 1 "$tmp/epipe.err")"
  fi
}
run_case pcap_stdout_closed

pcap_stdout_into_recv() {
  # into txscale recv reading the capture from stdin (a stream: read as it comes)
  "$TXS" send --dev pcap:- -n 5000 -P 2 -l 64 -J 198.18.0.2 2>/dev/null |
    "$TXS" recv --dev pcap:- -J -i 0 >"$tmp/recv.json" 2>"$tmp/recv.err"
  python3 - "$tmp/recv.json" <<'PY' && ok "send pcap:- | recv pcap:-: every record received" || fail_later "recv pcap:-: $(tail -n 2 "$tmp/recv.json" "$tmp/recv.err")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert s["received"] == 5000 and s["lost"] == 0, (s["received"], s["lost"])
PY
}
run_case pcap_stdout_into_recv

# ---- 3. a closed port shows its refused sends ------------------------------------
# loopback, a port nothing listens on
port=$(free_port)
closed_port() {
  local rc pk dr er ic
  "$TXS" send --dev udp -n 2000 -b 20kpps -p "$port" -i 0 -J 127.0.0.1 >"$tmp/closed.json" 2>"$tmp/closed.err"
  rc=$?
  if read -r pk dr er ic < <(one_story "$tmp/closed.json") && [ "$pk" = 2000 ] && [ "$ic" -ge 1 ] && [ "$ic" -le 2000 ]; then
    ok "closed port: 2000 sent, $ic ICMP errors counted (exit $rc)"
  else
    fail_later "closed port summary: $(tail -1 "$tmp/closed.json")"
  fi
  grep -q "ICMP errors.*Connection refused.*127.0.0.1 port $port" "$tmp/closed.err" &&
    ok "closed port: said on stderr" || fail_later "closed port: stderr: $(cat "$tmp/closed.err")"
}
run_case closed_port

open_port() {
  local lpid pk ic
  # an open port: no ICMP errors, nothing said
  python3 - "$port" "$tmp/open.ready" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", int(sys.argv[1])))
open(sys.argv[2], "w").write("ready\n")
s.settimeout(5); t = time.time()
try:
    while time.time() - t < 5: s.recv(2048)
except OSError: pass
PY
  lpid=$!
  wait_ready "$tmp/open.ready" $lpid
  "$TXS" send --dev udp -n 2000 -b 20kpps -p "$port" -i 0 -J 127.0.0.1 >"$tmp/open.json" 2>"$tmp/open.err"
  read -r pk _ _ ic < <(one_story "$tmp/open.json")
  [ "$pk" = 2000 ] && [ "$ic" = 0 ] && [ ! -s "$tmp/open.err" ] && ok "open port: no ICMP errors" ||
    fail_later "open port: icmp $ic, stderr $(cat "$tmp/open.err")"
  kill "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null || true
}
run_case open_port

# ---- 4, 5: namespaces ------------------------------------------------------------
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
  LAB= why="not root"
else
  LAB=$(lab_name sndc)
  why="no namespaces"
  lab_try "$LAB" || { cat "$tmp/lab.log" >&2; LAB=; }
fi
A=$LAB-a
link_down() {
  local rc pk dr er
  [ -n "$LAB" ] || skip "$why"
  # 4. the link is down: frames go to the ring, the kernel refuses the kick
  ip -n "$A" link set tx0 down
  ip netns exec "$A" "$TXS" send --dev packet:tx0 --dst-mac 02:00:00:00:00:02 -B 198.18.0.1 -n 32 -i 0 -J \
    198.18.0.2 >"$tmp/down.json" 2>"$tmp/down.err"
  rc=$?
  ip -n "$A" link set tx0 up
  # a link that is down before the run is refused up front by the link
  # monitor (nothing offered, nothing to count); otherwise the summary must
  # still be one count
  if [ ! -s "$tmp/down.json" ] && grep -q 'no link is up' "$tmp/down.err"; then
    ok "downed packet: link refused before sending: $(tail -1 "$tmp/down.err")"
  elif read -r pk dr er _ < <(one_story "$tmp/down.json") && [ "$pk" = 0 ] && [ $((dr + er)) = 32 ]; then
    ok "downed packet: link: summary = link rows = thread rows (0 sent, $er errors)"
  else
    fail_later "downed packet: link summary: $(tail -1 "$tmp/down.json")"
  fi
  [ $rc -eq 1 ] && grep -q 'packet:tx0' "$tmp/down.err" && ok "downed link exits 1: $(tail -1 "$tmp/down.err")" ||
    fail_later "downed link: exit $rc, stderr $(cat "$tmp/down.err")"
}
run_case link_down

df_over_mtu() {
  local rc pk er
  [ -n "$LAB" ] || skip "$why"
  # 5. DF datagrams over the MTU-1500 path: refused up front (2) or all dropped (1), never a silent 0
  ip netns exec "$A" "$TXS" send --dev udp --df -l 2000 -n 1000 -i 0 -J 198.18.0.2 >"$tmp/df.json" 2>"$tmp/df.err"
  rc=$?
  if { [ $rc -eq 1 ] || [ $rc -eq 2 ]; } && [ -s "$tmp/df.err" ]; then
    ok "udp --df -l 2000 over MTU 1500: exit $rc: $(tail -1 "$tmp/df.err")"
  else
    fail_later "udp --df -l 2000: exit $rc, stderr $(cat "$tmp/df.err")"
  fi
  [ $rc -ne 1 ] || { read -r pk _ er _ < <(one_story "$tmp/df.json") && [ "$pk" = 0 ] && [ "$er" = 1000 ]; } &&
    ok "udp --df: counts agree" || fail_later "udp --df summary: $(tail -1 "$tmp/df.json")"
}
run_case df_over_mtu

