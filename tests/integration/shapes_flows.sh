#!/usr/bin/env bash
# Flows and sizes on a veth (netns lab "shp"):
#   1. 1000 flows over a source-port range and a destination-address range
#      (send --dev packet:tx0 -P 2 --flows 500) into `recv -P 2` (two
#      SO_REUSEPORT sockets): every flow arrives with exactly the count the
#      sender sent it (per-flow expectations from the sender's summary), no
#      flow lost, none split inexactly, and the kernel's Udp InDatagrams
#      delta equals what recv counted.
#   1b. The same through kernel sockets (--dev udp, a socket per tuple):
#      every flow exact and on its own (source port, destination); past
#      the open-file limit: refused up front.
#   1c. A destination port range (udp and packet:) into recv -p LO-HI:
#      every flow exact, each at the port the range walk gives it.
#   2. Two senders into one receiver with --flow-base: their flows do not
#      collide (2 x 2 x 50 flows, each exact); IPv6 flows over 2001:2::/48
#      destinations, each exact.
#   3. An IMIX run (-l imix, a whole number of 12-packet cycles): the
#      receiver's size histogram holds exactly 7:4:1 of the three payloads.
#   4. A weighted list (-l 100,200,300:1,2,3) through the pcap device, read
#      back by recv --dev pcap: the same histogram, frame by frame.
# Needs root (namespaces) and jq; exits 77 otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
lab_test shp
# the destination range: 198.18.0.2 .. 198.18.0.9, all local to B
for i in 3 4 5 6 7 8 9; do ip -n "$B" addr add "198.18.0.$i/32" dev rx0; done
# IPv6 destinations 2001:2::2..5 (case v6)
for i in 3 4 5; do ip -n "$B" addr add "2001:2:0:0::$i/128" dev rx0 nodad; done

udp_in() { ip netns exec "$B" awk '/^Udp:/ { if (h) { print $2; exit } h = 1 }' /proc/net/snmp; }

# recv in B (udp input, 2 threads, any local address), then the senders in A.
# shp_run NAME "RECV ARGS" "SEND ARGS" ["SEND ARGS 2"]
shp_run() {
  local name=$1 rargs=$2 s1=$3 s2=${4:-}
  # shellcheck disable=SC2086
  ip netns exec "$B" "$TXS" recv $rargs -i 0 -J --idle 2 -t 60 --sender-summary "$tmp/$name.send.json" \
    --ready-fd 3 >"$tmp/$name.recv.json" 2>"$tmp/$name.recv.err" 3>"$tmp/$name.ready" &
  local rpid=$!
  wait_ready "$tmp/$name.ready" $rpid
  # shellcheck disable=SC2086
  ip netns exec "$A" timeout 60 "$TXS" send -i 0 $s1 -J >"$tmp/$name.s1.json" 2>"$tmp/$name.s1.err" ||
    fail "$name: send: $(cat "$tmp/$name.s1.err")"
  if [ -n "$s2" ]; then
    # shellcheck disable=SC2086
    ip netns exec "$A" timeout 60 "$TXS" send -i 0 $s2 -J >"$tmp/$name.s2.json" 2>"$tmp/$name.s2.err" ||
      fail "$name: send 2: $(cat "$tmp/$name.s2.err")"
  fi
  tail -n1 "$tmp/$name.s1.json" >"$tmp/$name.send.json"
  wait "$rpid" || fail "$name: recv exited $?: $(cat "$tmp/$name.recv.err")"
  R="$tmp/$name.recv.json"
  tail -n1 "$R" | jq -e '.type == "summary" and .kind == "recv"' >/dev/null || fail "$name: no recv summary"
}

flows() {
  local in0 in1 S sent bad kdelta
  # 1. 1000 flows over port and address ranges, recv -P 2
  in0=$(udp_in)
  shp_run flows "-P 2 -p 5201 --max-flows 2048" \
    "--dev packet:tx0 -P 2 --flows 500 --sport 40000-40499 --dst 198.18.0.2-198.18.0.9 -p 5201 -n 40000 -b 10kpps -l 32"
  in1=$(udp_in)
  S="$tmp/flows.send.json"
  sent=$(jq -r .packets "$S")
  [ "$sent" = 40000 ] || fail "flows: sender sent $sent"
  [ "$(jq -r .flows_per_thread "$S")" = 500 ] || fail "flows: summary flows_per_thread $(jq -r .flows_per_thread "$S")"
  rj_is flows '.flows | length' 1000
  rj_is flows .received "$sent"
  rj_is flows .lost 0
  rj_is flows .duplicates 0
  rj_is flows '[.flows[] | select(.expected == null)] | length' 0 # flows without an expected count
  bad=$(rj '[.flows[] | select(.received != .expected or .lost != 0 or .duplicates != 0)] | length')
  [ "$bad" = 0 ] || fail "flows: $bad flows off their expected count: $(rj '[.flows[] | select(.received != .expected)][0]')"
  [ "$(rj '[.flows[].expected] | add')" = "$sent" ] || fail "flows: per-flow expectations do not add up to $sent"
  [ "$(rj '[.flows[] | select(.expected != 40)] | length')" = 0 ] || fail "flows: a flow not expected 40 datagrams"
  [ "$(rj .split_inexact)" = 0 ] || fail "flows: $(rj .split_inexact) flows merged inexactly"
  # both receive threads had a share (SO_REUSEPORT spreads the 1000 4-tuples)
  [ "$(rj '[.threads[] | select(.received > 0)] | length')" = 2 ] || fail "flows: one receive thread got everything"
  kdelta=$((in1 - in0))
  [ "$kdelta" -ge "$sent" ] || fail "flows: kernel Udp InDatagrams grew by $kdelta < sent $sent"
  [ "$kdelta" -le $((sent + 50)) ] || fail "flows: kernel Udp InDatagrams grew by $kdelta, far above $sent"
  echo "ok: 1000 flows (500 source ports x 8 destinations, 2 threads) -> recv -P 2: $sent sent, $(rj .received) received," \
    "every flow exact (40), split flows $(rj .split_flows), kernel InDatagrams +$kdelta"
}
run_case flows

kflows() {
  local cap in0 in1 S bad off wire tuples
  # 1b. the same 1000 flows through kernel sockets (--dev udp): a connected
  # socket per tuple, 2 x 500 of them (past the default open-file limit of
  # 1024, which send raises), every flow exact and on its own tuple
  ulimit -Sn 1024
  # the tuples on the wire, from a capture at B (full checksums: no tx offload,
  # so that recv --dev pcap parses the kernel's frames)
  cap=
  if command -v dumpcap >/dev/null && ip netns exec "$A" ethtool -K tx0 tx off >/dev/null 2>&1; then
    ip netns exec "$B" dumpcap -q -P -i rx0 -f "udp port 5201" -w "$tmp/kflows.pcap" -a duration:20 \
      >/dev/null 2>"$tmp/kflows.dc.err" &
    cap=$!
    capturing "$tmp/kflows.dc.err" || fail "dumpcap did not start: $(cat "$tmp/kflows.dc.err")"
  fi
  in0=$(udp_in)
  shp_run kflows "-P 2 -p 5201 --max-flows 2048" \
    "--dev udp -P 2 --flows 500 --sport 40000-40499 --dst 198.18.0.2-198.18.0.9 -p 5201 -n 40000 -b 10kpps -l 32"
  in1=$(udp_in)
  S="$tmp/kflows.send.json"
  [ "$(jq -r .packets "$S")" = 40000 ] || fail "udp flows: sender sent $(jq -r .packets "$S")"
  [ "$(rj '.flows | length')" = 1000 ] || fail "udp flows: recv saw $(rj '.flows | length') flows, not 1000"
  [ "$(rj .received)" = 40000 ] || fail "udp flows: received $(rj .received)"
  bad=$(rj '[.flows[] | select(.received != .expected or .expected != 40 or .lost != 0 or .duplicates != 0)] | length')
  [ "$bad" = 0 ] || fail "udp flows: $bad flows off their 40 datagrams"
  # flow g (thread k = g / 500) from port 40000 + g mod 500 (the socket's source port, as recv saw it)
  off=$(rj '[.flows[] | select(.sport != 40000 + (.flow % 500))] | length')
  [ "$off" = 0 ] || fail "udp flows: $off flows not from their source port: $(rj -c '[.flows[] | select(.sport != 40000 + (.flow % 500))][0]')"
  [ "$((in1 - in0))" -ge 40000 ] && [ "$((in1 - in0))" -le 40050 ] ||
    fail "udp flows: kernel Udp InDatagrams grew by $((in1 - in0)), sent 40000"
  wire="no capture (needs dumpcap and ethtool)"
  if [ -n "$cap" ]; then
    capture_end "$cap"
    ip netns exec "$A" ethtool -K tx0 tx on >/dev/null 2>&1 || true
    R="$tmp/kflows.wire.json"
    "$TXS" recv --dev "pcap:$tmp/kflows.pcap" -J -i 0 --max-flows 4096 >"$R" 2>"$tmp/kflows.wire.err" ||
      fail "udp flows: recv of the capture: $(cat "$tmp/kflows.wire.err")"
    # ... and to 198.18.0.(2 + g mod 8): 1000 distinct tuples on the wire
    [ "$(rj .received)" = 40000 ] || fail "udp flows: the capture holds $(rj .received) datagrams, not 40000"
    tuples=$(rj '[.flows[] | "\(.src):\(.sport)>\(.dst):\(.dport)"] | unique | length')
    [ "$tuples" = 1000 ] || fail "udp flows: $tuples distinct tuples on the wire, not 1000"
    off=$(rj '[.flows[] | select(.sport != 40000 + (.flow % 500) or .dst != "198.18.0.\(2 + (.flow % 8))")] | length')
    [ "$off" = 0 ] || fail "udp flows: $off flows not on their tuple on the wire: $(rj -c '[.flows[] |
      select(.sport != 40000 + (.flow % 500) or .dst != "198.18.0.\(2 + (.flow % 8))")][0]')"
    wire="1000 distinct tuples in a capture at the peer, each flow on its own"
  fi
  echo "ok: 1000 flows through --dev udp (a socket per tuple, 2 x 500) -> recv -P 2: every flow exact (40)," \
    "kernel InDatagrams +$((in1 - in0)); $wire"
}
run_case kflows

# ... and where the open-file limit cannot be raised that far: refused up front
# refused NAME WANT CMD...: CMD exits 2 with WANT in its error line
refused() {
  local name=$1 want=$2 rc=0
  shift 2
  "$@" >/dev/null 2>"$tmp/$name.err" || rc=$?
  [ $rc = 2 ] && grep -qF "$want" "$tmp/$name.err" || fail "$name: exit $rc, $(cat "$tmp/$name.err")"
}
refused_open_files() {
  refused "udp flows past the open-file limit" "need 1064 open files, the limit is 256" \
    bash -c 'ulimit -n 256; exec ip netns exec "$0" "$1" send --dev udp -P 2 --flows 500 --sport 40000-40499 \
      --dst 198.18.0.2-198.18.0.9 -p 5201 -n 10' "$A" "$TXS"
  echo "ok: 2 x 500 udp flows under a hard limit of 256 open files: refused up front"
}
run_case refused_open_files

refused_nonlocal_src() {
  # ... and a --src range with addresses that are not local: refused up front, naming the first
  refused "udp flows from non-local sources" "'198.18.0.2' is not a local address" \
    ip netns exec "$A" "$TXS" send --dev udp --flows 4 --src 198.18.0.1-198.18.0.4 --dst 198.18.0.2 -p 5201 -n 10
  echo "ok: --src 198.18.0.1-198.18.0.4 on --dev udp (only .1 is local): refused up front"
}
run_case refused_nonlocal_src

# 1c. a destination port range into a receiver on the same range (recv -p
# LO-HI: a socket per port and thread), from kernel sockets and from frames
port_range() { # DEV
  local dev=$1 off
  shp_run ports "-P 2 -p 5301-5310" \
    "--dev $dev -P 2 --flows 50 --sport 41000-41049 --dport 5301-5310 -p 5301 -n 10000 -b 10kpps 198.18.0.2"
  rj_is "ports ($dev)" .received 10000
  rj_is "ports ($dev)" '.flows | length' 100
  rj_is "ports ($dev)" '[.flows[] | select(.received != 100 or .expected != 100 or .duplicates != 0)] | length' 0
  off=$(rj '[.flows[] | select(.dport != 5301 + (.flow % 10))] | length')
  [ "$off" = 0 ] || fail "ports ($dev): $off flows not at their port: $(rj -c '[.flows[] | select(.dport != 5301 + (.flow % 10))][0]')"
  [ "$(rj '[.flows[].dport] | unique | length')" = 10 ] || fail "ports ($dev): not all 10 ports reached"
  echo "ok: --dport 5301-5310 ($dev) -> recv -P 2 -p 5301-5310: 100 flows exact, each at its own port"
}
run_case ports_udp port_range udp
run_case ports_packet port_range packet:tx0

base() {
  # 2. two senders, --flow-base apart, into one receiver
  shp_run base "-P 2 -p 5201" \
    "--dev packet:tx0 -P 2 --flows 50 --sport 41000-41099 --dst 198.18.0.2-198.18.0.9 -p 5201 -n 10000 -b 10kpps" \
    "--dev packet:tx0 -P 2 --flows 50 --flow-base 100 --sport 42000-42099 --dst 198.18.0.2-198.18.0.9 -p 5201 -n 10000 -b 10kpps"
  [ "$(rj '.flows | length')" = 200 ] || fail "base: $(rj '.flows | length') flows, not 200"
  [ "$(rj .received)" = 20000 ] || fail "base: received $(rj .received)"
  [ "$(rj '[.flows[] | select(.received != 100 or .duplicates != 0)] | length')" = 0 ] ||
    fail "base: a flow off 100 datagrams"
  [ "$(rj '[.flows[].flow] | max')" = 199 ] || fail "base: highest flow id $(rj '[.flows[].flow] | max')"
  # recv read the first sender's summary: its 100 flows exact, the other's all excess
  [ "$(rj '[.flows[] | select(.flow < 100 and .expected == 100 and .lost == 0)] | length')" = 100 ] ||
    fail "base: the first sender's flows not exact"
  [ "$(rj '[.flows[] | select(.flow >= 100 and .excess == 100)] | length')" = 100 ] ||
    fail "base: the second sender's flows not told apart"
  echo "ok: two senders, --flow-base 0 and 100: 200 flows of exactly 100 datagrams, none collided"
}
run_case base

v6() {
  # 2b. IPv6: 200 flows over 2001:2::2..5 and 50 source ports, recv -P 2
  shp_run v6 "-P 2 -p 5201 -6" \
    "--dev packet:tx0 -P 2 --flows 100 --sport 43000-43049 --dst 2001:2:0:0::2-2001:2:0:0::5 -p 5201 -n 8000 -b 10kpps -l 64"
  [ "$(rj '.flows | length')" = 200 ] || fail "v6: $(rj '.flows | length') flows, not 200"
  [ "$(rj .received)" = 8000 ] || fail "v6: received $(rj .received)"
  [ "$(rj '[.flows[] | select(.expected != 40 or .received != 40 or .lost != 0)] | length')" = 0 ] ||
    fail "v6: a flow off its 40 datagrams"
  echo "ok: IPv6, 200 flows over 4 destinations x 50 ports -> recv -P 2: every flow exact (40)"
}
run_case v6

imix() {
  local pw p want got
  # 3. IMIX at the receiver: 12000 datagrams = 1000 whole 7:4:1 cycles
  shp_run imix "-p 5201" "--dev packet:tx0 -p 5201 -n 12000 -b 20kpps -l imix 198.18.0.2"
  [ "$(rj .received)" = 12000 ] || fail "imix: received $(rj .received)"
  for pw in 18:7000 548:4000 1472:1000; do
    p=${pw%:*} want=${pw#*:}
    got=$(rj "[.sizes[] | select(.payload == $p) | .datagrams] | add // 0")
    [ "$got" = "$want" ] || fail "imix: payload $p: $got datagrams, want $want"
  done
  [ "$(rj '.sizes | length')" = 3 ] || fail "imix: $(rj '.sizes | length') sizes at the receiver"
  [ "$(jq -r '[.sizes[].datagrams] | join(",")' "$tmp/imix.s1.json" | tail -n1)" = 7000,4000,1000 ] ||
    fail "imix: sender's size report $(tail -n1 "$tmp/imix.s1.json" | jq -c .sizes)"
  echo "ok: imix 12000 datagrams: 18 B x 7000, 548 B x 4000, 1472 B x 1000 at the receiver (frames 64/594/1518 with FCS)"
}
run_case imix

pcap_list() {
  # 4. weighted list through a capture, read back frame by frame
  "$TXS" send --dev "pcap:$tmp/w.pcap" -n 600 -i 0 -l 100,200,300:1,2,3 198.18.0.2 >/dev/null
  "$TXS" recv --dev "pcap:$tmp/w.pcap" -J -i 0 >"$tmp/w.json"
  R="$tmp/w.json"
  [ "$(rj '[.sizes[] | "\(.payload):\(.datagrams)"] | join(",")')" = "100:100,200:200,300:300" ] ||
    fail "pcap list: sizes $(rj -c .sizes)"
  echo "ok: -l 100,200,300:1,2,3 through pcap: 100/200/300 datagrams"
}
run_case pcap_list
