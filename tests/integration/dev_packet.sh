#!/usr/bin/env bash
# packet: (AF_PACKET TX ring) on a real veth: every packet counted as sent
# arrives, with the generator's bytes; several links; clear open errors.
source "$(dirname "$0")/ring_lib.bash"
ring_setup drgp 2
# link 1 reaches the same destination: give tx1 a neighbour entry for it
ip -n "$A" neigh replace 198.18.0.2 lladdr "$MAC_RX1" dev tx1 nud permanent
settle

check_delivery packet:tx0 198.18.0.2 20000
check_delivery packet:tx0 2001:2::2 20000
check_delivery packet:tx0,qdisc 198.18.0.2 5000
check_delivery packet:tx0,novnet 198.18.0.2 5000
check_delivery packet:tx0,ring=64 198.18.0.2 20000
check_delivery packet:tx0 198.18.0.2 20000 -l 1472
check_delivery packet:tx0 198.18.0.2 2000 -l 0
check_wire packet:tx0 198.18.0.2 64 198.18.0.1 auto
check_wire packet:tx0 2001:2::2 64 2001:2::1 auto
check_wire packet:tx0,novnet 198.18.0.2 64 198.18.0.1

# two links, two workers: worker k sends on link k
for spec in packet:tx0+tx1 packet:tx0,packet:tx1; do
  r0=$(rx_packets rx0) r1=$(rx_packets rx1)
  if send --dev "$spec" -P 2 -n 20000 -b 200k 198.18.0.2; then
    d0=$(($(rx_packets rx0) - r0)) d1=$(($(rx_packets rx1) - r1))
    links=$(grep -o '"link":[0-9]*,"packets":[0-9]*' "$WORK/sum.json" | tr '\n' ' ')
    if [ "$d0" = 10000 ] && [ "$d1" = 10000 ] && [ "$links" = '"link":0,"packets":10000 "link":1,"packets":10000 ' ]; then
      ok "$spec: 10000 + 10000 packets on two links, counted per link"
    else
      fail "$spec: rx0 +$d0, rx1 +$d1, links: $links"
    fi
  else
    fail "$spec: send failed: $(tail -2 "$WORK/send.log")"
  fi
done

# open errors name what is wrong
expect_err() { # WANT-RC PATTERN ARGS...
  local want=$1 pat=$2 rc=0; shift 2
  ip netns exec "$A" "$TXS" send -i 0 -n 10 "$@" >"$WORK/err.log" 2>&1 || rc=$?
  if [ "$rc" = "$want" ] && grep -q "$pat" "$WORK/err.log"; then ok "error: $(head -1 "$WORK/err.log")"
  else fail "expected exit $want and '$pat', got $rc: $(cat "$WORK/err.log")"; fi
}
expect_err 2 "no interface 'nosuch0'" --dev packet:nosuch0 198.18.0.2
expect_err 1 "no resolved neighbour entry for 198.18.0.99" --dev packet:tx0 198.18.0.99
expect_err 2 "unknown packet option 'bogus'" --dev packet:tx0,bogus 198.18.0.2
expect_err 2 "ring=100" --dev packet:tx0,ring=100 198.18.0.2
ring_finish
