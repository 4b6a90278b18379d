#!/usr/bin/env bash
# The CLI as a user meets it: help, version, bad input (exit 2, one line naming
# the value), exact counts, JSON lines that parse. Needs no root.
set -uo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"

# expect_err "needle" args...: exit status 2, one stderr line containing needle
expect_err() {
  local needle=$1; shift
  local err rc
  err=$("$TXS" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 2 ]; then fail "txscale $* -> exit $rc (want 2): $err"; fi
  if ! grep -qF -- "$needle" <<<"$err"; then fail "txscale $*: message lacks '$needle': $err"; fi
  [ "$(wc -l <<<"$err")" -eq 1 ] || fail "txscale $*: more than one line: $err"
}

version() { grep -q '^txscale [0-9]' <<<"$("$TXS" --version)" || fail "--version"; }
run_case version
help_lists_send() { "$TXS" --help | grep '^  send' >/dev/null || fail "--help lists send"; }
run_case help_lists_send
send_help() {
  local help o
  help=$("$TXS" send --help) || fail "send --help exit status"
  for o in --client --port --bind --sport --length --bitrate --time --packets --parallel --affinity --interval --json --dev --tos --ttl --df --no-csum; do
    grep -q -- "$o" <<<"$help" || fail_later "send --help lacks $o"
  done
}
run_case send_help

run_case err_send_p_70000 expect_err "'70000'" send -p 70000 198.18.0.2
run_case err_send_l_70000 expect_err "'70000'" send -l 70000 198.18.0.2
run_case err_send_l_65508 expect_err "'65508'" send -l 65508 198.18.0.2
run_case err_send_dev_nosuch expect_err "nosuch" send --dev nosuch 198.18.0.2
run_case err_send_dev_dummy_links_99 expect_err "links=99" send --dev dummy:links=99 198.18.0.2
run_case err_send_1_2_3 expect_err "'1.2.3'" send 1.2.3
run_case err_send_a_999 expect_err "'999'" send -A 999 198.18.0.2
run_case err_send_a_x_y expect_err "'x-y'" send -A x-y 198.18.0.2
run_case err_send_z expect_err "-Z" send -Z 198.18.0.2
run_case err_send_b_fast expect_err "'fast'" send -b fast 198.18.0.2
run_case err_send_t_1 expect_err "'-1'" send -t -1 198.18.0.2
run_case err_send_n expect_err "'0'" send -n 0 198.18.0.2
run_case err_send_n_10 expect_err "no destination" send -n 10
run_case err_send_4_2001_2_2 expect_err "not IPv4" send -4 2001:2::2
run_case err_send_b_2001_2_1 expect_err "different families" send -B 2001:2::1 198.18.0.2
run_case err_send_no_csum_2001_2_2 expect_err "IPv6 UDP must carry a checksum" send --no-csum 2001:2::2
run_case err_send_ttl_300 expect_err "'300'" send --ttl 300 198.18.0.2
run_case err_send_p expect_err "needs a value" send 198.18.0.2 -p
run_case err_sned expect_err "unknown command 'sned'" sned
run_case err_send_a_n_9_p_9 expect_err "--parallel 9" send -A 0 198.18.0.2 -n 9 -P 9

# every bad value is exit 2 with one line naming it, before any
# packet is sent. Each case sends to a capture file (when the case lets it
# choose the device), which must then hold no record: a 24-byte pcap file
# header at most.
txs_tmp
tab=$tmp
long="$tab/$(printf 'p%.0s' $(seq 280)).pcap"
t13() { # needle args... (a send case gets --dev pcap:$tab/out.pcap unless it names --dev)
  local needle=$1; shift
  rm -f "$tab/out.pcap"
  expect_err "$needle" "$@"
  if [ -e "$tab/out.pcap" ] && [ "$(stat -c %s "$tab/out.pcap")" -gt 24 ]; then
    fail "txscale $*: packets were written before the refusal"
  fi
}
P="--dev pcap:$tab/out.pcap"
run_case refuse_send_b_1e_11_n_5 t13 "'1e-11pps'" send $P -b 1e-11pps -n 5 198.18.0.2
run_case refuse_send_b_1e_6_p_4_n_5 t13 "'1e-06pps'" send $P -b 1e-6pps -P 4 -n 5 198.18.0.2      # per thread below the floor
run_case refuse_recv_verify_1 t13 "'--verify' takes no value" recv --verify=1
run_case refuse_send_json_yes t13 "'--json' takes no value" send $P --json=yes 198.18.0.2
run_case refuse_send_summary_file_tab_no_such_dir_s_json t13 "'$tab/no/such/dir/s.json'" send $P --summary-file "$tab/no/such/dir/s.json" -n 5 198.18.0.2
run_case refuse_send_dev_pcap_nonexistent_x_pcap_n_5 t13 "'/nonexistent/x.pcap'" send --dev pcap:/nonexistent/x.pcap -n 5 198.18.0.2
run_case refuse_send_dev_pcap_long_n_5 t13 "characters long, at most 255" send --dev "pcap:$long" -n 5 198.18.0.2
run_case refuse_send_a_0_0_0_n_5 t13 "CPU 0 appears twice in '0,0,0'" send $P -A 0,0,0 -n 5 198.18.0.2
run_case refuse_recv_a_0_0 t13 "CPU 0 appears twice in '0,0'" recv -A 0,0
run_case refuse_recv_outage_min_99999 t13 "--outage-min: '99999': expected at most 3600 seconds" recv --outage-min 99999
run_case refuse_recv_clock_offset_1_5 t13 "--clock-offset: '1.5': expected a signed integer of nanoseconds" recv --clock-offset 1.5
run_case refuse_send_dev_dummy_links_2_links_3_n_5 t13 "'links' given twice" send --dev dummy:links=2,links=3 -n 5 198.18.0.2
run_case refuse_send_dev_udp_links_127_0_0_1_127_0_0_1_n t13 "link '127.0.0.1' given twice" send --dev udp:links=127.0.0.1+127.0.0.1 -n 5 127.0.0.1
run_case refuse_send_dev_udp_df_n_5 t13 "df: IPv6 only" send --dev udp:df -n 5 127.0.0.1
run_case refuse_ndr_dev_nosuch t13 "unknown device 'nosuch'" ndr --dev nosuch 127.0.0.1
run_case refuse_ndr_l_65520 t13 "'65520'" ndr -l 65520 127.0.0.1
run_case refuse_ndr_recv_dev_nosuch t13 "unknown input 'nosuch'" ndr --recv-dev nosuch 127.0.0.1
# a good run into the same file writes records (so the check above can fail)
good_run_writes() {
  "$TXS" send $P -n 5 -i 0 198.18.0.2 >/dev/null && [ "$(stat -c %s "$tab/out.pcap")" -gt 24 ] ||
    fail "send $P -n 5 writes records"
}
run_case good_run_writes
# --dry-run: checks and opens, sends nothing
dry_run() {
  rm -f "$tab/out.pcap"
  "$TXS" send $P --dry-run -n 5 198.18.0.2 >/dev/null && [ "$(stat -c %s "$tab/out.pcap")" -le 24 ] ||
    fail "send --dry-run sends nothing"
}
run_case dry_run
# -b 0.125pps -P 8 (1 datagram/s in all) -t 1.5 sends what the rate says (due at 0 and 1 s), not one packet per worker at t = 0
rate_1_P8() {
  "$TXS" send -b 0.125pps -P 8 -t 1.5 -i 0 -J 198.18.0.2 | tail -1 | python3 -c '
import json,sys; s=json.loads(sys.stdin.read()); assert s["packets"] == 2, s["packets"]' ||
    fail "send -b 0.125pps -P 8 -t 1.5 sends 2 packets"
}
run_case rate_1_P8
# send is unpinned by default (like iperf3); -A pins, one worker per CPU
unpinned_default() {
  "$TXS" send -n 100 -P 2 -i 0 -J 198.18.0.2 | tail -1 | python3 -c '
import json,sys; s=json.loads(sys.stdin.read()); assert [t["cpu"] for t in s["threads"]] == [-1, -1], s["threads"]' ||
    fail "send without -A is unpinned"
}
run_case unpinned_default
pin_A0() {
  "$TXS" send -n 100 -A 0 -i 0 -J 198.18.0.2 | tail -1 | python3 -c '
import json,sys; s=json.loads(sys.stdin.read()); assert [t["cpu"] for t in s["threads"]] == [0], s["threads"]' ||
    fail "send -A 0 pins to CPU 0"
}
run_case pin_A0

# exact counts, split unevenly over 2 workers, JSON lines that parse
json_lines() {
  local out
  out=$("$TXS" send --dev dummy:verify -n 12345 -P 2 -J -i 0.05 -l 100 198.18.0.2) || fail "send -J exit status"
  python3 - "$out" <<'PY' || fail "JSON output"
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
}
run_case json_lines
summary_file() {
  "$TXS" send -n 1000 -i 0 --summary-file "$tmp/s.json" 2001:2::2 >/dev/null && grep -q '"packets":1000,' "$tmp/s.json" || fail "--summary-file"
}
run_case summary_file
# links: per-link counts add up
per_link_json() {
  "$TXS" send --dev dummy:links=3 -n 999 -i 0 -J 198.18.0.2 | python3 -c '
import json,sys; s=json.loads(sys.stdin.read().splitlines()[-1]); assert len(s["links"])==3; assert sum(l["packets"] for l in s["links"])==999' || fail "per-link JSON"
}
run_case per_link_json
