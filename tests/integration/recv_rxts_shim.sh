#!/usr/bin/env bash
# recv --rx-timestamps hardware against a make-believe NIC on loopback
# (build/txs_hwts_shim.so, LD_PRELOAD: tests/integration/hwts_shim.c fakes
# the ethtool/SIOC[GS]HWTSTAMP answers of "lo" and puts a "hardware" stamp,
# the software stamp plus an offset, into each datagram while the filter is
# on). No host here has a NIC that stamps packets, so this is the only run of
# the code that switches stamping on and off and takes the stamps; it shows
# our side of the contract, not that any driver keeps it.
#   1. filter off before: switched on (SIOCSHWTSTAMP ALL, keeping tx_type)
#      and restored at exit; every datagram timed by the hardware stamp
#      (ts_hardware == received), which the latencies show (stamps 300 us
#      after the software ones: every latency above 300 us)
#   2. filter on already: left alone (no SIOCSHWTSTAMP at all)
#   3. a PHC 37 s ahead (TAI, no phc2sys): no stamp used, datagrams timed by
#      the software stamps, one warning line naming the cause, latencies sane
#   4. half the datagrams stamped: the other half fall back to software
#   5. refusals: no CAP_NET_ADMIN (exit 1, one line), PTP-only receive
#      filters, a driver answering another filter (restored), no ethtool
#      answer and SIOCSHWTSTAMP ERANGE (exit 2, one line naming lo)
#   6. no SIOCGHWTSTAMP: switched on, and left on at exit (said in JSON)
#   7. a later refusal (the port in use): the filter is restored all the same
# Runs without root on loopback; exits 77 without the shim or with a
# sanitizer build (the runtime must come first in the preload list).
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
BUILD=${TXS_BUILDDIR:-$(dirname "$TXS")}
SHIM=$BUILD/txs_hwts_shim.so
need_cmd jq "needs jq (scripts/deps test)"
need_txs
[ -f "$SHIM" ] || skip "no $SHIM (built with the tests)"
if ldd "$TXS" 2>/dev/null | grep -Eq 'lib(a|t|ub)san'; then skip "sanitizer build: LD_PRELOAD shim not used"; fi
PORT=$(free_port)
txs_tmp

# shim_run NAME: recv with the shim (env TXS_SHIM_* as set by the caller) and JSON,
# then a sender over loopback; R = the summary line, E = recv's stderr
shim_run() {
  local name=$1
  shift
  rm -f "$tmp/$name.log"
  env LD_PRELOAD="$SHIM" TXS_SHIM_IF=lo TXS_SHIM_LOG="$tmp/$name.log" "$@" \
    "$TXS" recv -B 127.0.0.1 -p "$PORT" --rx-timestamps hardware -J -i 0 --idle 1 -t 30 --ready-fd 3 \
    >"$tmp/$name.json" 2>"$tmp/$name.err" 3>"$tmp/$name.ready" &
  local rpid=$!
  wait_ready "$tmp/$name.ready" $rpid
  # --no-df: one datagram per message (IPv4 GSO is the udp device's default):
  # the shim stamps messages, and the checks count datagrams
  "$TXS" send --dev udp --no-df -B 127.0.0.1 127.0.0.1 -p "$PORT" -i 0 -l 32 -n 4000 -b 20kpps >"$tmp/$name.send" 2>&1 ||
    fail "$name: send: $(cat "$tmp/$name.send")"
  wait "$rpid" || fail "$name: recv exited $?: $(cat "$tmp/$name.err")"
  R=$(tail -n1 "$tmp/$name.json")
  E=$(cat "$tmp/$name.err")
  L=$(cat "$tmp/$name.log")
}
j() { printf '%s\n' "$R" | jq -r "$1"; }

# 1. switched on, used, restored
on() {
  local expect
  shim_run on TXS_SHIM_HW_OFFSET_NS=300000 TXS_SHIM_INIT_TX=1
  [ "$(j .received)" = 4000 ] || fail "on: received $(j .received)"
  [ "$(j .input.rx_timestamps)" = hardware ] || fail "on: mode $(j .input.rx_timestamps)"
  [ "$(j .input.ts_hardware)" = 4000 ] || fail "on: $(j .input.ts_hardware) hardware stamps of 4000"
  [ "$(j .input.ts_kernel)" = 0 ] && [ "$(j .input.ts_user)" = 0 ] || fail "on: kernel $(j .input.ts_kernel) user $(j .input.ts_user)"
  [ "$(j .input.ts_hw_skewed)" = 0 ] || fail "on: $(j .input.ts_hw_skewed) skewed"
  [ "$(j .input.hw_interface)" = lo ] || fail "on: interface $(j .input.hw_interface)"
  [ "$(j .input.phc_index)" = 3 ] || fail "on: phc $(j .input.phc_index)"
  [ "$(j .input.hw_filter_set)" = true ] || fail "on: hw_filter_set $(j .input.hw_filter_set)"
  # the hardware stamps are 300 us after the software ones: every latency over 300 us
  [ "$(j .latency_ns.count)" = 4000 ] || fail "on: $(j .latency_ns.count) latency samples"
  [ "$(j .latency_ns.min)" -ge 300000 ] || fail "on: latency min $(j .latency_ns.min) ns: not the hardware stamps"
  [ -z "$E" ] || fail "on: stderr: $E"
  expect=$'ethtool_ts_info\nget rx_filter=0 tx_type=1\nset rx_filter=1 tx_type=1\nset rx_filter=0 tx_type=1'
  [ "$L" = "$expect" ] || fail "on: ioctl sequence:"$'\n'"$L"$'\n'"expected:"$'\n'"$expect"
  echo "ok: switched on, 4000 hardware stamps used (latency min $(j .latency_ns.min) ns), restored at exit"

  # 2. on already: nothing set
}
run_case on

already() {
  shim_run already TXS_SHIM_INIT_FILTER=1 TXS_SHIM_HW_OFFSET_NS=-1000
  [ "$(j .input.ts_hardware)" = 4000 ] || fail "already: $(j .input.ts_hardware) hardware stamps"
  [ "$(j .input.hw_filter_set)" = false ] || fail "already: hw_filter_set $(j .input.hw_filter_set)"
  if grep -q '^set' <<<"$L"; then fail "already: the filter was set: $L"; fi
  echo "ok: filter already on: left alone"

  # 3. a PHC 37 s ahead: not used, a warning, sane latencies
}
run_case already

tai() {
  shim_run tai TXS_SHIM_HW_OFFSET_NS=37000000000
  [ "$(j .input.ts_hardware)" = 0 ] || fail "tai: $(j .input.ts_hardware) hardware stamps used"
  [ "$(j .input.ts_hw_skewed)" = 4000 ] || fail "tai: $(j .input.ts_hw_skewed) skewed"
  [ "$(j .input.ts_kernel)" = 4000 ] || fail "tai: $(j .input.ts_kernel) software stamps"
  [ "$(j .input.hw_offset_ns)" -ge 37000000000 ] && [ "$(j .input.hw_offset_ns)" -lt 37001000000 ] ||
    fail "tai: offset $(j .input.hw_offset_ns)"
  [ "$(j .latency_ns.count)" = 4000 ] && [ "$(j .latency_ns.max)" -lt 1000000000 ] ||
    fail "tai: latencies $(j .latency_ns.count) max $(j .latency_ns.max)"
  [ "$(wc -l <<<"$E")" = 1 ] || fail "tai: stderr not one line: $E"
  grep -q "warning: 4000 of 4000 hardware receive timestamps were off our clock (by +37.0" <<<"$E" ||
    fail "tai: warning: $E"
  grep -q "not synchronised to CLOCK_REALTIME" <<<"$E" || fail "tai: warning names no cause: $E"
  echo "ok: PHC 37 s ahead: $E"

  # 4. every other datagram stamped
}
run_case tai

half() {
  shim_run half TXS_SHIM_EVERY=2
  [ "$(j .input.ts_hardware)" = 2000 ] && [ "$(j .input.ts_kernel)" = 2000 ] ||
    fail "half: hardware $(j .input.ts_hardware) kernel $(j .input.ts_kernel)"
  [ -z "$E" ] || fail "half: stderr: $E"
  echo "ok: half stamped: 2000 hardware, 2000 software"
}
run_case half

# 5. refusals, before anything is received
# refuse NAME STATUS PATTERN ENV...
refuse() {
  local name=$1 want=$2 pat=$3
  shift 3
  rm -f "$tmp/$name.log"
  local rc=0
  env LD_PRELOAD="$SHIM" TXS_SHIM_IF=lo TXS_SHIM_LOG="$tmp/$name.log" "$@" \
    "$TXS" recv -B 127.0.0.1 -p "$PORT" --rx-timestamps hardware -t 1 -i 0 >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  [ $rc = "$want" ] || fail "$name: exit $rc, not $want ($(cat "$tmp/$name.err"))"
  [ "$(wc -l <"$tmp/$name.err")" = 1 ] || fail "$name: not one line: $(cat "$tmp/$name.err")"
  grep -q -- "$pat" "$tmp/$name.err" || fail "$name: '$(cat "$tmp/$name.err")' does not say '$pat'"
  [ ! -s "$tmp/$name.out" ] || fail "$name: it started receiving"
  L=$(cat "$tmp/$name.log" 2>/dev/null || true)
  echo "ok: $name: $(cat "$tmp/$name.err")"
}
run_case refuse_eperm refuse eperm 1 "--rx-timestamps hardware: switching them on at interface lo needs CAP_NET_ADMIN" TXS_SHIM_EPERM=1
run_case refuse_ptponly refuse ptponly 2 "interface lo has no hardware receive timestamps (Operation not supported: its receive filters (0x11) stamp PTP" \
  TXS_SHIM_RX_FILTERS=0x11
run_case refuse_erange refuse erange 2 "interface lo has no hardware receive timestamps (Numerical result out of range)" \
  TXS_SHIM_NO_ETHTOOL=1 TXS_SHIM_SET_ERR=34
refuse_answer() {
  refuse answer 2 "the driver set receive filter 12" TXS_SHIM_SET_ANSWER=12
  [ "$(tail -n1 <<<"$L")" = "set rx_filter=0 tx_type=0" ] || fail "answer: not restored: $L"
  echo "ok: answer: restored after the refusal"

  # 6. no SIOCGHWTSTAMP: switched on and left on
}
run_case refuse_answer

noget() {
  shim_run noget TXS_SHIM_NO_GET=1
  [ "$(j .input.ts_hardware)" = 4000 ] || fail "noget: $(j .input.ts_hardware) hardware stamps"
  [ "$(j .input.hw_filter_left_on)" = true ] || fail "noget: hw_filter_left_on $(j .input.hw_filter_left_on)"
  [ "$(grep -c '^set' <<<"$L")" = 1 ] || fail "noget: the filter was set back blindly: $L"
  echo "ok: no SIOCGHWTSTAMP: left on"
}
run_case noget

inuse() {
  local hold rc=0
  # 7. the port is taken after the filter was switched on: put back on the way out
  "$TXS" recv -B 127.0.0.1 -p "$PORT" -i 0 -t 20 --ready-fd 3 >/dev/null 2>&1 3>"$tmp/hold.ready" &
  hold=$!
  wait_ready "$tmp/hold.ready" $hold
  rm -f "$tmp/inuse.log"
  env LD_PRELOAD="$SHIM" TXS_SHIM_IF=lo TXS_SHIM_LOG="$tmp/inuse.log" \
    "$TXS" recv -B 127.0.0.1 -p "$PORT" --rx-timestamps hardware -t 1 -i 0 >/dev/null 2>"$tmp/inuse.err" || rc=$?
  kill "$hold" 2>/dev/null || true
  wait "$hold" 2>/dev/null || true
  [ $rc = 1 ] && grep -q "in use" "$tmp/inuse.err" || fail "inuse: exit $rc: $(cat "$tmp/inuse.err")"
  L=$(cat "$tmp/inuse.log")
  [ "$(grep '^set' <<<"$L" | tr '\n' ' ')" = "set rx_filter=1 tx_type=0 set rx_filter=0 tx_type=0 " ] ||
    fail "inuse: filter not put back: $L"
  echo "ok: port in use: refused, filter put back"
}
run_case inuse
