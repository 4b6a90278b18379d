#!/usr/bin/env bash
# The CLI as a user meets it: help, version, bad input (exit 2, one line naming
# the value), exact counts, JSON lines that parse. Needs no root.
set -uo pipefail
TXS=${TXS_BIN:-build/txscale}
fail=0 pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# expect_err "needle" args...: exit status 2, one stderr line containing needle
expect_err() {
  local needle=$1; shift
  local err rc
  err=$("$TXS" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 2 ]; then bad "txscale $* -> exit $rc (want 2): $err"; return; fi
  if ! grep -qF -- "$needle" <<<"$err"; then bad "txscale $*: message lacks '$needle': $err"; return; fi
  [ "$(wc -l <<<"$err")" -eq 1 ] || { bad "txscale $*: more than one line: $err"; return; }
  ok
}

"$TXS" --version | grep -q '^txscale [0-9]' && ok || bad "--version"
"$TXS" --help | grep '^  send' >/dev/null && ok || bad "--help lists send"
help=$("$TXS" send --help) && ok || bad "send --help exit status"
for o in --client --port --bind --sport --length --bitrate --time --packets --parallel --affinity --interval --json --dev --tos --ttl --df --no-csum; do
  grep -q -- "$o" <<<"$help" && ok || bad "send --help lacks $o"
done

expect_err "'70000'" send -p 70000 198.18.0.2
expect_err "'70000'" send -l 70000 198.18.0.2
expect_err "'65508'" send -l 65508 198.18.0.2
expect_err "nosuch" send --dev nosuch 198.18.0.2
expect_err "links=99" send --dev dummy:links=99 198.18.0.2
expect_err "'1.2.3'" send 1.2.3
expect_err "'999'" send -A 999 198.18.0.2
expect_err "'x-y'" send -A x-y 198.18.0.2
expect_err "-Z" send -Z 198.18.0.2
expect_err "'fast'" send -b fast 198.18.0.2
expect_err "'-1'" send -t -1 198.18.0.2
expect_err "'0'" send -n 0 198.18.0.2
expect_err "no destination" send -n 10
expect_err "not IPv4" send -4 2001:2::2
expect_err "different families" send -B 2001:2::1 198.18.0.2
expect_err "IPv6 UDP must carry a checksum" send --no-csum 2001:2::2
expect_err "'300'" send --ttl 300 198.18.0.2
expect_err "needs a value" send 198.18.0.2 -p
expect_err "unknown command 'sned'" sned
expect_err "-P 9" send -A 0 198.18.0.2 -n 9 -P 9

# issue 13: every bad value is exit 2 with one line naming it, before any
# packet is sent. Each case sends to a capture file (when the case lets it
# choose the device), which must then hold no record: a 24-byte pcap file
# header at most.
tab=$(mktemp -d)
long="$tab/$(printf 'p%.0s' $(seq 280)).pcap"
t13() { # needle args... (a send case gets --dev pcap:$tab/out.pcap unless it names --dev)
  local needle=$1; shift
  rm -f "$tab/out.pcap"
  expect_err "$needle" "$@"
  if [ -e "$tab/out.pcap" ] && [ "$(stat -c %s "$tab/out.pcap")" -gt 24 ]; then
    bad "txscale $*: packets were written before the refusal"
  fi
}
P="--dev pcap:$tab/out.pcap"
t13 "'1e-11'" send $P -b 1e-11 -n 5 198.18.0.2
t13 "'1e-06'" send $P -b 1e-6 -P 4 -n 5 198.18.0.2      # per thread below the floor
t13 "'--verify' takes no value" recv --verify=1
t13 "'--json' takes no value" send $P --json=yes 198.18.0.2
t13 "'$tab/no/such/dir/s.json'" send $P --summary-file "$tab/no/such/dir/s.json" -n 5 198.18.0.2
t13 "'/nonexistent/x.pcap'" send --dev pcap:/nonexistent/x.pcap -n 5 198.18.0.2
t13 "characters long, at most 255" send --dev "pcap:$long" -n 5 198.18.0.2
t13 "CPU 0 appears twice in '0,0,0'" send $P -A 0,0,0 -n 5 198.18.0.2
t13 "CPU 0 appears twice in '0,0'" recv -A 0,0
t13 "--outage-min: '99999': expected at most 3600 seconds" recv --outage-min 99999
t13 "--clock-offset: '1.5': expected a signed integer of nanoseconds" recv --clock-offset 1.5
t13 "'links' given twice" send --dev dummy:links=2,links=3 -n 5 198.18.0.2
t13 "link '127.0.0.1' given twice" send --dev udp:links=127.0.0.1+127.0.0.1 -n 5 127.0.0.1
t13 "df: IPv6 only" send --dev udp:df -n 5 127.0.0.1
t13 "unknown device 'nosuch'" ndr --dev nosuch 127.0.0.1
t13 "'65520'" ndr -l 65520 127.0.0.1
t13 "unknown input 'nosuch'" ndr --recv-dev nosuch 127.0.0.1
# a good run into the same file writes records (so the check above can fail)
"$TXS" send $P -n 5 -i 0 198.18.0.2 >/dev/null && [ "$(stat -c %s "$tab/out.pcap")" -gt 24 ] && ok ||
  bad "send $P -n 5 writes records"
# --dry-run: checks and opens, sends nothing
rm -f "$tab/out.pcap"
"$TXS" send $P --dry-run -n 5 198.18.0.2 >/dev/null && [ "$(stat -c %s "$tab/out.pcap")" -le 24 ] && ok ||
  bad "send --dry-run sends nothing"
rm -rf "$tab"
# issue 13: -b 1 -P 8 -t 1.5 sends what the rate says (due at 0 and 1 s), not one packet per worker at t = 0
"$TXS" send -b 1 -P 8 -t 1.5 -i 0 -J 198.18.0.2 | tail -1 | python3 -c '
import json,sys; s=json.loads(sys.stdin.read()); assert s["packets"] == 2, s["packets"]' &&
  ok || bad "send -b 1 -P 8 -t 1.5 sends 2 packets"
# issue 12: send is unpinned by default (like iperf3); -A pins, one worker per CPU
"$TXS" send -n 100 -P 2 -i 0 -J 198.18.0.2 | tail -1 | python3 -c '
import json,sys; s=json.loads(sys.stdin.read()); assert [t["cpu"] for t in s["threads"]] == [-1, -1], s["threads"]' &&
  ok || bad "send without -A is unpinned"
"$TXS" send -n 100 -A 0 -i 0 -J 198.18.0.2 | tail -1 | python3 -c '
import json,sys; s=json.loads(sys.stdin.read()); assert [t["cpu"] for t in s["threads"]] == [0], s["threads"]' &&
  ok || bad "send -A 0 pins to CPU 0"

# exact counts, split unevenly over 2 workers, JSON lines that parse
out=$("$TXS" send --dev dummy:verify -n 12345 -P 2 -J -i 0.05 -l 100 198.18.0.2) && ok || bad "send -J exit status"
python3 - "$out" <<'PY' && ok || bad "JSON output"
import json, sys
lines = [json.loads(l) for l in sys.argv[1].splitlines()]
s = lines[-1]
assert s["type"] == "summary", s
assert s["packets"] == 12345, s["packets"]
assert sum(t["packets"] for t in s["threads"]) == 12345
assert {t["packets"] for t in s["threads"]} == {6173, 6172}
assert s["bytes"] == 12345 * (14 + 20 + 8 + 100)
assert s["verify_errors"] == 0 and s["drops"] == 0
assert all(l["type"] == "interval" for l in lines[:-1])
assert sum(l["packets"] for l in lines[:-1]) == 12345, "intervals add up to the total"
PY
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$TXS" send -n 1000 -i 0 --summary-file "$tmp/s.json" 2001:2::2 >/dev/null && grep -q '"packets":1000,' "$tmp/s.json" && ok || bad "--summary-file"
# links: per-link counts add up
"$TXS" send --dev dummy:links=3 -n 999 -i 0 -J 198.18.0.2 | python3 -c '
import json,sys; s=json.loads(sys.stdin.read().splitlines()[-1]); assert len(s["links"])==3; assert sum(l["packets"] for l in s["links"])==999' && ok || bad "per-link JSON"

echo "cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
