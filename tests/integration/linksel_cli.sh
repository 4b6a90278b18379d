#!/usr/bin/env bash
# txscale send --links N --bond SPEC on the dummy device: the per-link counts
# in the JSON summary are the ones each mode promises, exactly; bad specs exit
# 2 with one line naming the bad item. Needs no root.
set -uo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"

# links ARGS...: the summary's per-link packet counts, space separated
links() {
  "$TXS" send -J -i 0 --no-pin "$@" 198.18.0.2 | grep '"type":"summary"' |
    grep -o '"link":[0-9]*,"packets":[0-9]*' | sed 's/.*"packets"://' | tr '\n' ' ' | sed 's/ $//'
}
expect() { # expect "want" ARGS...
  local want=$1; shift
  local got; got=$(links "$@")
  [ "$got" = "$want" ] || fail "send $*: links '$got', want '$want'"
}
expect_err() { txs_refuses --one-line "$1" send "${@:2}" 198.18.0.2; } # NEEDLE ARGS...

run_case links_links_4_n_4000 expect "1000 1000 1000 1000" --links 4 -n 4000
run_case links_links_4_bond_balance_rr_n_4000_p_2 expect "1000 1000 1000 1000" --links 4 --bond balance-rr -n 4000 -P 2
run_case links_links_3_bond_balance_rr_packets_per_slav expect "2100 2100 2100" --links 3 --bond balance-rr,packets_per_slave=7,scope=shared -n 6300 -P 2
run_case links_links_3_bond_balance_rr_packets_per_slav_2 expect "2100 2100 2100" --links 3 --bond balance-rr,packets_per_slave=7,scope=percore -n 6300 -P 2
run_case links_dev_dummy_links_3_bond_active_backup_pri expect "0 5000 0" --dev dummy:links=3 --bond active-backup,primary=1 -n 5000 -P 2
# thread 0's flow 198.18.0.1:40000 -> 198.18.0.2:5201, layer3+4 hash 0x2923034d
run_case links_links_4_bond_balance_xor_hash_layer3_4_n expect "0 3000 0 0" --links 4 --bond balance-xor,hash=layer3+4 -n 3000
# broadcast: every copy is a wire packet; -n counts copies
run_case links_links_3_bond_broadcast_n_3000_p_2 expect "1000 1000 1000" --links 3 --bond broadcast -n 3000 -P 2
run_case links_bond_broadcast_n_5000 expect "5000" --bond broadcast -n 5000
bond_fields() {
  local summary
  summary=$("$TXS" send -J -i 0 --links 2 --bond broadcast -n 10 198.18.0.2 | grep '"type":"summary"')
  grep -q '"bond":"broadcast","bond_nolink":0' <<<"$summary" || fail "summary lacks bond fields: $summary"
}
run_case bond_fields
link_rows() {
  local text
  text=$("$TXS" send -i 0.01 --links 2 -n 1000 198.18.0.2)
  grep -q '^\[  L1\]' <<<"$text" || fail "text report lacks per-link rows"
}
run_case link_rows

run_case err_links_2_bond_balance_xx expect_err "'balance-xx'" --links 2 --bond balance-xx
run_case err_links_2_bond_balance_rr_packets_per_slav expect_err "packets_per_slave=70000" --links 2 --bond balance-rr,packets_per_slave=70000
run_case err_links_2_bond_balance_rr_scope_global expect_err "scope=global" --links 2 --bond balance-rr,scope=global
run_case err_links_2_bond_balance_xor_hash_layer4 expect_err "hash=layer4" --links 2 --bond balance-xor,hash=layer4
run_case err_links_2_bond_balance_xor_scope_percore expect_err "does not apply" --links 2 --bond balance-xor,scope=percore
run_case err_links_2_bond_active_backup_primary_3 expect_err "primary=3" --links 2 --bond active-backup,primary=3
run_case err_links expect_err "--links" --links 0
run_case err_dev_dummy_links_2_links_3 expect_err "both set the links" --dev dummy:links=2 --links 3

