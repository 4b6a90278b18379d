#!/usr/bin/env bash
# packet: (AF_PACKET TX ring) on a real veth: every packet counted as sent
# arrives, with the generator's bytes; several links; clear open errors.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
ring_setup drgp 2
# link 1 reaches the same destination: give tx1 a neighbour entry for it
ip -n "$A" neigh replace 198.18.0.2 lladdr "$MAC_RX1" dev tx1 nud permanent
settle

ring_cases packet:tx0 qdisc,novnet
run_case novnet_wire check_wire packet:tx0,novnet 198.18.0.2 64 198.18.0.1

# two links, two workers: worker k sends on link k
two_links() { # SPEC
  local spec=$1 r0 r1 d0 d1 links
  r0=$(rx_packets rx0) r1=$(rx_packets rx1)
  ring_send --dev "$spec" -P 2 -n 20000 -b 100kpps 198.18.0.2 || fail "$spec: send failed: $(tail -2 "$WORK/send.log")"
  d0=$(($(rx_packets rx0) - r0)) d1=$(($(rx_packets rx1) - r1))
  links=$(grep -o '"link":[0-9]*,"packets":[0-9]*' "$WORK/sum.json" | tr '\n' ' ')
  if [ "$d0" = 10000 ] && [ "$d1" = 10000 ] && [ "$links" = '"link":0,"packets":10000 "link":1,"packets":10000 ' ]; then
    ok "$spec: 10000 + 10000 packets on two links, counted per link"
  else
    fail "$spec: rx0 +$d0, rx1 +$d1, links: $links"
  fi
}
run_case two_links_plus two_links packet:tx0+tx1
run_case two_links_comma two_links packet:tx0,packet:tx1

# open errors name what is wrong
run_case err_no_iface ring_expect_err 2 "no interface 'nosuch0'" --dev packet:nosuch0 198.18.0.2
run_case err_no_neigh ring_expect_err 1 "no resolved neighbour entry for 198.18.0.99" --dev packet:tx0 198.18.0.99
run_case err_bad_option ring_expect_err 2 "unknown packet option 'bogus'" --dev packet:tx0,bogus 198.18.0.2
run_case err_bad_ring ring_expect_err 2 "ring=100" --dev packet:tx0,ring=100 198.18.0.2
