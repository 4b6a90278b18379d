#!/usr/bin/env bash
# recv --rx-timestamps on the udp input, over loopback:
#   kernel (the default): every datagram is timed by the kernel's software
#     receive timestamp (input.ts_kernel == received, ts_user == 0), and the
#     report says so
#   user: every datagram is timed by our clock read per recvmmsg batch
#   the kernel's stamp is taken before the datagram waits in the socket and
#     for our thread to wake: its median latency is below the user mode's
#   with send --timestamps packet no datagram is stamped after its arrival
#     (skew_future 0) and all are in the histogram
#   a bad mode is refused with exit 2
#   hardware: loopback has no hardware receive timestamps: refused with exit 2
#     before receiving, one line naming lo (named or found from -B); a bad
#     or unknown interface is refused naming it; hardware needs an interface
#     (veth: recv_rxts_hw.sh)
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_cmd jq "needs jq (scripts/deps test)"
need_txs
PORT=$(free_port)
txs_tmp

# rxts_run NAME RECV-MODE SEND-ARGS...
rxts_run() {
  local name=$1 mode=$2
  shift 2
  "$TXS" recv -B 127.0.0.1 -p "$PORT" --rx-timestamps "$mode" -J -i 0 --idle 1 -t 30 --ready-fd 3 >"$tmp/$name.json" \
    2>"$tmp/$name.err" 3>"$tmp/$name.ready" &
  local rpid=$!
  wait_ready "$tmp/$name.ready" $rpid
  "$TXS" send --dev udp -B 127.0.0.1 127.0.0.1 -p "$PORT" -i 0 -l 32 "$@" >"$tmp/$name.send" 2>&1 ||
    fail "$name: send: $(cat "$tmp/$name.send")"
  wait "$rpid" || fail "$name: recv exited $?: $(cat "$tmp/$name.err")"
  R=$(tail -n1 "$tmp/$name.json")
}
j() { printf '%s\n' "$R" | jq -r "$1"; }

kernel() {
  rxts_run kernel kernel -b 20kpps -n 10000
  [ "$(j .received)" = 10000 ] || fail "kernel: received $(j .received)"
  [ "$(j .input.rx_timestamps)" = kernel ] || fail "kernel: the report says $(j .input.rx_timestamps)"
  [ "$(j .input.ts_kernel)" = 10000 ] || fail "kernel: $(j .input.ts_kernel) datagrams with a kernel stamp"
  [ "$(j .input.ts_user)" = 0 ] || fail "kernel: $(j .input.ts_user) datagrams fell back to our clock"
  [ "$(j .input.ts_hardware)" = 0 ] || fail "kernel: $(j .input.ts_hardware) hardware stamps"
  j .latency_ns.p50 >"$tmp/k50"
}
run_case kernel

user() {
  local k50 u50
  k50=$(cat "$tmp/k50")
  rxts_run user user -b 20kpps -n 10000
  [ "$(j .input.rx_timestamps)" = user ] || fail "user: the report says $(j .input.rx_timestamps)"
  [ "$(j .input.ts_user)" = 10000 ] || fail "user: $(j .input.ts_user) datagrams timed by our clock"
  [ "$(j .input.ts_kernel)" = 0 ] || fail "user: $(j .input.ts_kernel) kernel stamps"
  u50=$(j .latency_ns.p50)
  echo "median latency: kernel stamps $k50 ns, user clock $u50 ns"
  [ "$k50" -lt "$u50" ] || fail "the kernel's stamp ($k50 ns) is not earlier than our read ($u50 ns)"
}
run_case --needs kernel user

packet() {
  rxts_run packet kernel -b 20kpps -n 10000 --timestamps packet
  [ "$(j .latency_ns.skew_future)" = 0 ] || fail "packet: $(j .latency_ns.skew_future) datagrams stamped after they arrived"
  [ "$(j .latency_ns.count)" = 10000 ] || fail "packet: $(j .latency_ns.count) latency samples"
  echo "per-packet send stamps, kernel arrival: p50 $(j .latency_ns.p50) ns, p99 $(j .latency_ns.p99) ns"
}
run_case packet

# refuse MODE ARGS... PATTERN: exit 2, nothing received, one line matching PATTERN
refuse() {
  local what=$1 pat=$2
  shift 2
  local rc=0
  "$TXS" recv -p "$PORT" -t 1 -i 0 "$@" >"$tmp/ref.out" 2>"$tmp/ref.err" || rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc ($(cat "$tmp/ref.err"))"
  [ "$(wc -l <"$tmp/ref.err")" = 1 ] || fail "$what: not one line: $(cat "$tmp/ref.err")"
  grep -q -- "$pat" "$tmp/ref.err" || fail "$what: '$(cat "$tmp/ref.err")' does not say '$pat'"
  [ ! -s "$tmp/ref.out" ] || fail "$what: it started receiving: $(cat "$tmp/ref.out")"
  echo "$what: $(cat "$tmp/ref.err")"
}
run_case refuse_bad_mode refuse "bad mode" "bad value for --rx-timestamps: 'hw'" --rx-timestamps hw
run_case refuse_unknown_interface refuse "unknown interface" "'hardware:nosuchif': no interface 'nosuchif'" --rx-timestamps hardware:nosuchif
run_case refuse_empty_interface refuse "empty interface" "'hardware:'" --rx-timestamps hardware:
run_case refuse_no_interface refuse "no interface" "--rx-timestamps hardware: which interface" --rx-timestamps hardware
run_case refuse_lo_named refuse "lo named" "--rx-timestamps hardware:lo: interface lo has no hardware receive timestamps (Operation not supported" \
  --rx-timestamps hardware:lo
run_case refuse_lo_from_B refuse "lo from -B" "--rx-timestamps hardware: interface lo has no hardware receive timestamps (Operation not supported" \
  -B 127.0.0.1 --rx-timestamps hardware
run_case refuse_not_udp refuse "not udp" "applies to --dev udp only" --dev pcap:/dev/null --rx-timestamps hardware:lo
