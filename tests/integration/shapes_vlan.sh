#!/usr/bin/env bash
# VLAN/QinQ on a veth (netns lab "shv"):
#   1. send --dev packet:tx0 --vlan 100 into a VLAN sub-interface rx0.100 in
#      the peer: a kernel UDP socket there (txscale recv) gets every datagram,
#      full-size ones included (1472-byte payload: a 1518-byte frame, the tag
#      does not reduce the IP MTU), and rx0.100's kernel counter agrees; at
#      the same time recv --dev packet:rx0 counts them all under VLAN 100.
#   2. --qinq 200,300 into rx0.200 (802.1ad) / rx0.200.300 (802.1Q): the same,
#      counted under 200.300; a QinQ datagram that needs more than MTU + 18
#      bytes on packet: (the kernel's AF_PACKET limit) is refused, exit 2.
#   3. Refusals: --vlan on udp: exit 2; --vlan and --qinq together exit 2.
# If the kernel cannot create VLAN devices (no 8021q), steps 1-2 check the
# tags in a capture (pcap:) and over the veth with recv's per-VLAN report,
# and then run against a VLAN sub-interface made of a tc BPF program on rx0
# (txs_vlan_sub, tests/integration/vlan_sub.c: the kernel's own tag parse,
# the matching tags popped, the rest dropped and counted): the socket on rx0
# gets every datagram (1472-byte payloads for --vlan, 1468 for --qinq: the
# largest a 1500-MTU veth passes, MTU + 18 frame bytes), the program counts
# them under the right tags; a wrong VLAN, a wrong inner VLAN and untagged
# frames reach no socket and are counted apart. Without libbpf or a usable
# tc BPF hook only the capture checks run, and the output says so.
# Needs root (namespaces) and jq; exits 77 otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
lab_test --later shv

refusals() {
  local rc1=0 rc2=0 rc3=0 rc4=0
  # 3. refusals need no lab
  "$TXS" send --dev udp --vlan 100 -n 1 -i 0 127.0.0.1 >"$tmp/r1" 2>&1 || rc1=$?
  "$TXS" send --dev dummy --vlan 100 --qinq 1,2 -n 1 -i 0 198.18.0.2 >"$tmp/r2" 2>&1 || rc2=$?
  "$TXS" send --dev dummy --vlan 4095 -n 1 -i 0 198.18.0.2 >"$tmp/r3" 2>&1 || rc3=$?
  "$TXS" send -c 198.18.0.2 -R -l imix -n 1 >"$tmp/r4" 2>&1 || rc4=$?
  [ $rc1 = 2 ] && grep -q "frame device" "$tmp/r1" || fail "--vlan on udp: exit $rc1: $(cat "$tmp/r1")"
  [ $rc2 = 2 ] || fail "--vlan with --qinq: exit $rc2: $(cat "$tmp/r2")"
  [ $rc3 = 2 ] && grep -q -- "--vlan" "$tmp/r3" || fail "--vlan 4095: exit $rc3: $(cat "$tmp/r3")"
  [ $rc4 = 2 ] && grep -q "one way only" "$tmp/r4" || fail "-R with -l imix: exit $rc4: $(cat "$tmp/r4")"
  echo "ok: refusals: --vlan on udp:, --vlan with --qinq, VLAN 4095, -R with a size mix (exit 2)"
}
run_case refusals


lab_up "$LAB"
bmac=$(ip netns exec "$B" cat /sys/class/net/rx0/address)

vlan_devs=yes
if ! ip -n "$B" link add link rx0 name rx0.100 type vlan id 100 2>"$tmp/vl.err"; then
  vlan_devs=no
  echo "note: the kernel cannot create a VLAN device ($(cat "$tmp/vl.err")): checking the tags in captures and over the veth, then a BPF sub-interface in its place"
fi

# capture check: the frames the sender makes, read back per VLAN
capture_case() {
  local name=$1 tag=$2 want=$3
  # shellcheck disable=SC2086
  "$TXS" send --dev "pcap:$tmp/$name.pcap" $tag -n 3000 -i 0 -l 1472 198.18.0.2 >/dev/null
  "$TXS" recv --dev "pcap:$tmp/$name.pcap" -J -i 0 >"$tmp/$name.cap.json"
  local got
  got=$(tail -n1 "$tmp/$name.cap.json" | jq -r '[.vlans[] | "\(.vlan)\(if .inner then ".\(.inner)" else "" end):\(.packets)"] | join(",")')
  [ "$got" = "$want:3000" ] || fail "$name capture: per-VLAN $got, want $want:3000"
  echo "ok: $name capture: 3000 full-size frames, all under VLAN $want"
}

# raw_case NAME "TAG ARGS" WANT LEN: tagged frames over the veth, counted per
# VLAN by recv --dev packet:rx0 (AF_PACKET hands the outer tag over apart)
raw_case() {
  local name=$1 tag=$2 want=$3 len=$4
  ip netns exec "$B" "$TXS" recv --dev packet:rx0 -p 5301 -i 0 -J --idle 1.5 -t 60 --ready-fd 3 \
    >"$tmp/$name.raw.json" 2>"$tmp/$name.raw.err" 3>"$tmp/$name.raw.ready" &
  local ppid=$!
  wait_ready "$tmp/$name.raw.ready" $ppid
  # shellcheck disable=SC2086
  ip netns exec "$A" timeout 60 "$TXS" send --dev packet:tx0 --dst-mac "$bmac" -B 198.18.0.1 $tag -p 5301 -n 4000 \
    -b 20kpps -l "$len" -i 0 -J 198.18.0.2 >"$tmp/$name.rs.json" 2>"$tmp/$name.rs.err" ||
    fail "$name: send: $(cat "$tmp/$name.rs.err")"
  wait "$ppid" || fail "$name: recv (packet) exited $?: $(cat "$tmp/$name.raw.err")"
  local sent pr pv
  sent=$(tail -n1 "$tmp/$name.rs.json" | jq -r .packets)
  [ "$sent" = 4000 ] || fail "$name: sent $sent (device errors: $(tail -n1 "$tmp/$name.rs.json" | jq -c '[.errors,.drops]'))"
  pr=$(tail -n1 "$tmp/$name.raw.json" | jq -r .received)
  pv=$(tail -n1 "$tmp/$name.raw.json" | jq -r '[.vlans[] | "\(.vlan)\(if .inner then ".\(.inner)" else "" end):\(.packets)"] | join(",")')
  [ "$pr" = "$sent" ] || fail "$name: packet:rx0 received $pr of $sent"
  [ "$pv" = "$want:$sent" ] || fail "$name: packet:rx0 per-VLAN $pv, want $want:$sent"
  echo "ok: $name: $sent tagged frames ($len-byte payloads) over the veth, packet:rx0 counted VLAN $pv"
}

qinq_packet_refused() {
  local rc=0
  # QinQ over MTU + 18 on packet: is the kernel's EMSGSIZE: refused up front
  ip netns exec "$A" "$TXS" send --dev packet:tx0 --dst-mac "$bmac" --qinq 200,300 -n 1 -i 0 -l 1472 198.18.0.2 \
    >"$tmp/qq" 2>&1 || rc=$?
  [ $rc = 2 ] && grep -q "MTU + 18" "$tmp/qq" || fail "--qinq -l 1472 on packet: exit $rc: $(cat "$tmp/qq")"
  echo "ok: --qinq with a 1472-byte payload on packet: refused (AF_PACKET takes MTU + 18 at most)"
}
run_case qinq_packet_refused

qinq_xdp_refused() {
  local rc=0
  # the same frame on xdp: over a veth: the veth drops it (the kick says EBUSY,
  # read as a full queue before): refused up front too
  grep -q -- "xdp:" <<<"$("$TXS" send --help 2>&1)" || skip "no xdp: device in this build"
  ip netns exec "$A" "$TXS" send --dev xdp:tx0 --dst-mac "$bmac" --qinq 200,300 -n 1 -i 0 -l 1472 198.18.0.2 \
    >"$tmp/qx" 2>&1 || rc=$?
  [ $rc = 2 ] && grep -q "veth (copy mode) forwards frames of at most MTU + 18" "$tmp/qx" ||
    fail "--qinq -l 1472 on xdp:tx0 (a veth): exit $rc: $(cat "$tmp/qx")"
  echo "ok: --qinq with a 1472-byte payload on xdp: over a veth refused (the veth forwards MTU + 18 at most)"
}
run_case qinq_xdp_refused

# recv_pair NAME DST: two receivers in B on port 5301, ready: a kernel socket
# bound to DST (upid, JSON in NAME.udp.json) and packet:rx0 (ppid,
# NAME.pkt.json); upid and ppid are the caller's locals
recv_pair() {
  local name=$1
  ip netns exec "$B" "$TXS" recv -B "$2" -p 5301 -i 0 -J --idle 1.5 -t 60 --ready-fd 3 \
    >"$tmp/$name.udp.json" 2>"$tmp/$name.udp.err" 3>"$tmp/$name.udp.ready" &
  upid=$!
  ip netns exec "$B" "$TXS" recv --dev packet:rx0 -p 5301 -i 0 -J --idle 1.5 -t 60 --ready-fd 3 \
    >"$tmp/$name.pkt.json" 2>"$tmp/$name.pkt.err" 3>"$tmp/$name.pkt.ready" &
  ppid=$!
  wait_ready "$tmp/$name.udp.ready" $upid
  wait_ready "$tmp/$name.pkt.ready" $ppid
}

# bpf_case NAME "SEND TAGS" "SUB-INTERFACE" LEN VERDICT "TAG COUNTS" "RAW": the
# BPF sub-interface (txs_vlan_sub) on rx0 with a kernel UDP socket on rx0's
# address behind it. VERDICT: the program's counter that must equal the
# datagrams sent (delivered: all reach the socket; any other: none does);
# TAG COUNTS: its per-tag counts ("outer:802.1Q:100:N,..."; N = sent); RAW:
# what recv --dev packet:rx0 (before tc) counts per VLAN ("100:N").
bpf_case() {
  local name=$1 tag=$2 sub=$3 len=$4 verdict=$5 wantt=$6 wantp=$7
  # shellcheck disable=SC2086
  ip netns exec "$B" "$VS" rx0 $sub -t 90 >"$tmp/$name.vs.json" 2>"$tmp/$name.vs.err" &
  local vpid=$! i
  for ((i = 0; i < 50; i++)); do
    grep -q '^attached' "$tmp/$name.vs.err" && break
    kill -0 "$vpid" 2>/dev/null || break
    sleep 0.1
  done
  grep -q '^attached' "$tmp/$name.vs.err" || fail "$name: txs_vlan_sub did not attach: $(cat "$tmp/$name.vs.err")"
  local upid ppid
  recv_pair "$name" 198.18.0.2
  # shellcheck disable=SC2086
  ip netns exec "$A" timeout 60 "$TXS" send --dev packet:tx0 --dst-mac "$bmac" -B 198.18.0.1 $tag -p 5301 -n 4000 \
    -b 20kpps -l "$len" -i 0 -J 198.18.0.2 >"$tmp/$name.send.json" 2>"$tmp/$name.send.err" ||
    fail "$name: send: $(cat "$tmp/$name.send.err")"
  # the packet: receiver ends 1.5 s after the last frame; a socket that must
  # get nothing would wait for -t: stopped (it reports on SIGTERM) once the
  # packet: receiver, which saw every frame, has ended
  wait "$ppid" || fail "$name: recv (packet) exited $?: $(cat "$tmp/$name.pkt.err")"
  [ "$verdict" = delivered ] || kill -TERM "$upid" 2>/dev/null || true
  wait "$upid" || fail "$name: recv (udp) exited $?: $(cat "$tmp/$name.udp.err")"
  kill -TERM "$vpid"
  wait "$vpid" || fail "$name: txs_vlan_sub exited $?: $(cat "$tmp/$name.vs.err")"
  local sent v ur pr pv tg others
  sent=$(tail -n1 "$tmp/$name.send.json" | jq -r .packets)
  [ "$sent" = 4000 ] || fail "$name: sent $sent"
  v="$tmp/$name.vs.json"
  jq -e . "$v" >/dev/null || fail "$name: txs_vlan_sub printed no JSON: $(cat "$v")"
  ur=$(tail -n1 "$tmp/$name.udp.json" | jq -r .received)
  if [ "$verdict" = delivered ]; then
    [ "$ur" = "$sent" ] || fail "$name: the socket behind the BPF sub-interface received $ur of $sent ($(jq -c . "$v"))"
    [ "$(tail -n1 "$tmp/$name.udp.json" | jq -r .lost)" = 0 ] || fail "$name: lost at the socket"
  else
    [ "$ur" = 0 ] || fail "$name: the socket received $ur datagrams that the sub-interface must not take"
  fi
  # the verdict counter: all the sent frames (untagged: stray frames of the
  # namespace, IPv6 ones, may add to it); the others none of them
  if [ "$verdict" = untagged ]; then
    [ "$(jq -r .untagged "$v")" -ge "$sent" ] || fail "$name: untagged counter $(jq -r .untagged "$v") < $sent"
  else
    [ "$(jq -r ".$verdict" "$v")" = "$sent" ] || fail "$name: $verdict counter $(jq -r ".$verdict" "$v"), want $sent ($(jq -c . "$v"))"
  fi
  others=$(jq -r --arg k "$verdict" '[to_entries[] | select(.key | IN("delivered","wrong_vlan","wrong_inner","extra_tag","pop_failed")) | select(.key != $k) | .value] | add' "$v")
  [ "$others" = 0 ] || fail "$name: other verdicts counted $others frames ($(jq -c . "$v"))"
  tg=$(jq -r '[.tags[] | "\(.tag):\(.proto):\(.vlan):\(.packets)"] | join(",")' "$v")
  [ "$tg" = "${wantt//N/$sent}" ] || fail "$name: per-tag counts $tg, want ${wantt//N/$sent}"
  pr=$(tail -n1 "$tmp/$name.pkt.json" | jq -r .received)
  pv=$(tail -n1 "$tmp/$name.pkt.json" | jq -r '[.vlans[] | "\(.vlan)\(if .inner then ".\(.inner)" else "" end):\(.packets)"] | join(",")')
  [ "$pr" = "$sent" ] || fail "$name: packet:rx0 received $pr of $sent"
  [ "$pv" = "${wantp//N/$sent}" ] || fail "$name: packet:rx0 per-VLAN $pv, want ${wantp//N/$sent}"
  echo "ok: $name: $sent datagrams of $len bytes, BPF sub-interface rx0 $sub: $verdict $(jq -r ".$verdict" "$v"), tags [$tg], socket $ur, packet:rx0 saw [$pv]"
}

if [ $vlan_devs = no ]; then
  run_case vlan_capture capture_case vlan "--vlan 100" 100
  run_case qinq_capture capture_case qinq "--qinq 200,300" 200.300
  run_case vlan_raw raw_case vlan-raw "--vlan 100" 100 1472
  run_case qinq_raw raw_case qinq-raw "--qinq 200,300" 200.300 1000
  VS=${TXS_BUILDDIR:-$(dirname "$TXS")}/txs_vlan_sub
  bpf_sub=no
  if [ ! -x "$VS" ]; then
    why="no txs_vlan_sub helper at $VS (it is built only where libbpf is found)"
  else
    rc=0
    ip netns exec "$B" "$VS" rx0 --vlan 100 --probe >/dev/null 2>"$tmp/probe.err" || rc=$?
    case $rc in
      0) bpf_sub=yes ;;
      4) why="tc BPF unusable here: $(tail -n1 "$tmp/probe.err")" ;;
      *) fail "txs_vlan_sub --probe exited $rc: $(cat "$tmp/probe.err")" ;;
    esac
  fi
  B_CASE=bpf_case
  if [ $bpf_sub = no ]; then
    no_bpf_sub() { skip "no VLAN devices in this kernel, no BPF sub-interface: $why"; }
    B_CASE=no_bpf_sub
  fi
  # VLAN sub-interfaces emulated by a tc BPF program: no VLAN devices in this kernel
  run_case vlan_bpf $B_CASE vlan-bpf "--vlan 100" "--vlan 100" 1472 delivered "outer:802.1Q:100:N" 100:N
  run_case qinq_bpf $B_CASE qinq-bpf "--qinq 200,300" "--qinq 200,300" 1468 delivered "outer:802.1ad:200:N,inner:802.1Q:300:N" 200.300:N
  run_case vlan_bpf_wrong $B_CASE vlan-bpf-wrong "--vlan 101" "--vlan 100" 1472 wrong_vlan "outer:802.1Q:101:N" 101:N
  run_case qinq_bpf_wrong_outer $B_CASE qinq-bpf-wrong-outer "--qinq 201,300" "--qinq 200,300" 1000 wrong_vlan "outer:802.1ad:201:N" 201.300:N
  run_case qinq_bpf_wrong_inner $B_CASE qinq-bpf-wrong-inner "--qinq 200,301" "--qinq 200,300" 1000 wrong_inner "outer:802.1ad:200:N,inner:802.1Q:301:N" 200.301:N
  run_case untagged_bpf $B_CASE untagged-bpf "" "--vlan 100" 1472 untagged "" ""
  exit 0
fi

ip -n "$B" link add link rx0 name rx0.200 type vlan proto 802.1ad id 200
ip -n "$B" link add link rx0.200 name rx0.200.300 type vlan id 300
ip -n "$B" addr add 198.18.100.2/24 dev rx0.100
ip -n "$B" addr add 198.18.101.2/24 dev rx0.200.300
for d in rx0.100 rx0.200 rx0.200.300; do ip -n "$B" link set "$d" up; done
ip netns exec "$B" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.rx0/100.rp_filter=0 2>/dev/null || true

# vlan_case NAME "TAG ARGS" DST SUBIF WANT LEN
vlan_case() {
  local name=$1 tag=$2 dst=$3 subif=$4 want=$5 len=$6
  local upid ppid
  recv_pair "$name" "$dst"
  local k0
  k0=$(ip netns exec "$B" cat "/sys/class/net/$subif/statistics/rx_packets")
  # shellcheck disable=SC2086
  ip netns exec "$A" timeout 60 "$TXS" send --dev packet:tx0 --dst-mac "$bmac" -B 198.18.0.1 $tag -p 5301 -n 4000 \
    -b 20kpps -l "$len" -i 0 -J "$dst" >"$tmp/$name.send.json" 2>"$tmp/$name.send.err" ||
    fail "$name: send: $(cat "$tmp/$name.send.err")"
  wait "$upid" || fail "$name: recv (udp) exited $?: $(cat "$tmp/$name.udp.err")"
  wait "$ppid" || fail "$name: recv (packet) exited $?: $(cat "$tmp/$name.pkt.err")"
  local k1 sent
  k1=$(ip netns exec "$B" cat "/sys/class/net/$subif/statistics/rx_packets")
  sent=$(tail -n1 "$tmp/$name.send.json" | jq -r .packets)
  [ "$sent" = 4000 ] || fail "$name: sent $sent"
  local ur pr pv
  ur=$(tail -n1 "$tmp/$name.udp.json" | jq -r .received)
  [ "$ur" = "$sent" ] || fail "$name: the socket on $subif received $ur of $sent"
  [ "$(tail -n1 "$tmp/$name.udp.json" | jq -r .lost)" = 0 ] || fail "$name: lost at the socket"
  [ $((k1 - k0)) -ge "$sent" ] || fail "$name: $subif rx_packets grew by $((k1 - k0)) < $sent"
  pr=$(tail -n1 "$tmp/$name.pkt.json" | jq -r .received)
  pv=$(tail -n1 "$tmp/$name.pkt.json" | jq -r '[.vlans[] | "\(.vlan)\(if .inner then ".\(.inner)" else "" end):\(.packets)"] | join(",")')
  [ "$pr" = "$sent" ] || fail "$name: packet:rx0 received $pr of $sent"
  [ "$pv" = "$want:$sent" ] || fail "$name: packet:rx0 per-VLAN $pv, want $want:$sent"
  echo "ok: $name: $sent datagrams of $len bytes -> $subif: socket $ur, $subif rx_packets +$((k1 - k0)), packet:rx0 saw VLAN $pv"
}

run_case vlan vlan_case vlan "--vlan 100" 198.18.100.2 rx0.100 100 1472
run_case qinq vlan_case qinq "--qinq 200,300" 198.18.101.2 rx0.200.300 200.300 1000
