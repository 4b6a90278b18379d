#!/usr/bin/env bash
# recv --rx-timestamps hardware on a veth (netns lab "rxh"): veth has no
# hardware receive timestamps (its driver offers software stamps only, and
# SIOCSHWTSTAMP answers EOPNOTSUPP), so the mode is refused with exit 2
# before anything is received, in one line naming the interface, whether it
# is named (hardware:rx0) or found from -B (IPv4 and IPv6 addresses of rx0).
# The same link then carries traffic to a kernel-stamped receiver on the same
# port (the refusal left nothing bound and the lab works). No test here can
# show a real hardware stamp: that needs a NIC with a PTP clock.
# Needs root (namespaces); exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
PORT=5201
lab_test rxh

# refuse WHAT PATTERN RECV-ARGS...: exit 2, one line matching PATTERN, nothing received
refuse() {
  local what=$1 pat=$2
  shift 2
  local rc=0
  ip netns exec "$B" "$TXS" recv -p "$PORT" -t 2 -i 0 "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc ($(cat "$tmp/err"))"
  [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$what: not one line: $(cat "$tmp/err")"
  grep -q -- "$pat" "$tmp/err" || fail "$what: '$(cat "$tmp/err")' does not say '$pat'"
  [ ! -s "$tmp/out" ] || fail "$what: it started receiving: $(cat "$tmp/out")"
  echo "ok: $what: $(cat "$tmp/err")"
}
nohw="interface rx0 has no hardware receive timestamps (Operation not supported"
run_case refuse_veth_named refuse "veth named" "--rx-timestamps hardware:rx0: $nohw" -B 198.18.0.2 --rx-timestamps hardware:rx0
run_case refuse_veth_from_B_v4 refuse "veth from -B IPv4" "--rx-timestamps hardware: $nohw" -B 198.18.0.2 --rx-timestamps hardware
run_case refuse_veth_from_B_v6 refuse "veth from -B IPv6" "--rx-timestamps hardware: $nohw" -B 2001:2:0:0::2 --rx-timestamps hardware
run_case refuse_P2 refuse "-P 2" "--rx-timestamps hardware: $nohw" -B 198.18.0.2 -P 2 --rx-timestamps hardware
# the peer's interface is not in B's namespace
run_case refuse_other_namespace refuse "interface of another namespace" "no interface 'tx0'" -B 198.18.0.2 --rx-timestamps hardware:tx0

control() {
  local rpid R
  # control: the same link and port, kernel stamps, every datagram timed by them
  ip netns exec "$B" "$TXS" recv -B 198.18.0.2 -p "$PORT" -J -i 0 --idle 1 -t 30 --ready-fd 3 >"$tmp/k.json" 2>"$tmp/k.err" 3>"$tmp/k.ready" &
  rpid=$!
  wait_ready "$tmp/k.ready" $rpid
  ip netns exec "$A" timeout 30 "$TXS" send --dev udp -B 198.18.0.1 -p "$PORT" -i 0 -n 2000 -b 20kpps -l 32 198.18.0.2 \
    >"$tmp/send.out" 2>&1 || fail "send: $(cat "$tmp/send.out")"
  wait "$rpid" || fail "kernel recv exited $?: $(cat "$tmp/k.err")"
  R=$(tail -n1 "$tmp/k.json")
  j() { printf '%s\n' "$R" | jq -r "$1"; }
  [ "$(j .received)" = 2000 ] || fail "control: received $(j .received) of 2000"
  [ "$(j .input.ts_kernel)" = 2000 ] || fail "control: $(j .input.ts_kernel) kernel stamps of 2000"
  [ "$(j .input.ts_hardware)" = 0 ] || fail "control: $(j .input.ts_hardware) hardware stamps on a veth"
  echo "ok: control: 2000 datagrams over rx0, all timed by the kernel's software stamp"
}
run_case control
