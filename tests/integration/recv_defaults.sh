#!/usr/bin/env bash
# The receive side: the defaults hold on one host. `recv` and
# `send --dev udp -b 100kpps -n 200k` on loopback (a namespace of our own), with
# no -A and no --rcvbuf: received == 200000, nothing lost. Before, recv
# pinned its thread to CPU 0 (where send's thread 0 also ran) with the
# system's default receive buffer and lost 22-27% (RcvbufErrors).
# Also: recv is unpinned by default (cpu -1; -A pins), its receive buffer
# is raised (input.rcvbuf >= the 32 MiB asked, SO_RCVBUFFORCE as root), and
# a socket drop is said in the text summary (--rcvbuf 4096 run).
# Needs root (namespaces); exits 77 otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
ns_test rxd

defaults_no_loss() {
  local rpid R sent rb
  ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT -i 0 -J -t 60 --idle 2 --sender-summary "$tmp/send.json" \
    --ready-fd 3 >"$tmp/recv.json" 2>"$tmp/recv.err" 3>"$tmp/recv.ready" &
  rpid=$!
  wait_ready "$tmp/recv.ready" $rpid
  ip netns exec "$NS" timeout 60 "$TXS" send --dev udp -b 100kpps -n 200k -p $PORT -i 0 --summary-file "$tmp/send.json" \
    127.0.0.1 >"$tmp/send.out" 2>&1 || fail "send: $(cat "$tmp/send.out")"
  wait "$rpid" || fail "recv exited $?: $(cat "$tmp/recv.err")"
  R=$(tail -n1 "$tmp/recv.json")
  rj() { jq -r "$1" <<<"$R"; }
  sent=$(jq -r .packets "$tmp/send.json")
  [ "$sent" = 200000 ] || fail "send sent $sent, not 200000"
  [ "$(rj .received)" = 200000 ] && [ "$(rj .lost)" = 0 ] ||
    fail "defaults lose: $(jq -c '{received, lost, socket_drops: .input.socket_drops, rcvbuf: .input.rcvbuf, cpu: .threads[0].cpu, RcvbufErrors: .kernel_drops.udp.RcvbufErrors}' <<<"$R")"
  [ "$(rj '.threads[0].cpu')" = -1 ] || fail "recv pinned by default: cpu $(rj '.threads[0].cpu')"
  rb=$(rj .input.rcvbuf)
  [ "$rb" -ge $((32 << 20)) ] || fail "receive buffer $rb bytes, below the 32 MiB asked"
  [ "$(rj .input.rcvbuf_forced)" = true ] || fail "SO_RCVBUFFORCE not used as root"
  echo "ok: defaults (no -A, no --rcvbuf), 100 kpps on one host: 200000 of 200000, recv unpinned, rcvbuf $rb bytes"
}
run_case defaults_no_loss

# -A still pins
pin_with_A() {
  ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT -i 0 -J -t 0.3 -A 0 >"$tmp/pin.json" 2>&1 || fail "recv -A 0: $(cat "$tmp/pin.json")"
  [ "$(tail -n1 "$tmp/pin.json" | jq '.threads[0].cpu')" = 0 ] || fail "recv -A 0 not pinned"
  echo "ok: -A 0 pins"
}
run_case pin_with_A

# a socket drop is said in the summary
socket_drop_said() {
  local rpid
  ip netns exec "$NS" "$TXS" recv -B 127.0.0.1 -p $PORT -i 0 -t 60 --idle 1 --rcvbuf 4096 --ready-fd 3 >"$tmp/tiny.out" 2>"$tmp/tiny.err" 3>"$tmp/tiny.ready" &
  rpid=$!
  wait_ready "$tmp/tiny.ready" $rpid
  ip netns exec "$NS" timeout 60 "$TXS" send --dev udp -n 50k -p $PORT -i 0 127.0.0.1 >"$tmp/tiny.send" 2>&1 || fail "tiny: send: $(cat "$tmp/tiny.send")"
  wait "$rpid" || fail "tiny: recv exited $?: $(cat "$tmp/tiny.err")"
  grep -qE "^DROPPED  the kernel dropped [1-9][0-9]* datagrams at our sockets" "$tmp/tiny.out" ||
    fail "tiny: no socket-drop line: $(cat "$tmp/tiny.out")"
  grep -qE "^socket   receive buffer [0-9]+ bytes" "$tmp/tiny.out" || fail "tiny: no receive buffer line"
  echo "ok: --rcvbuf 4096: $(grep '^DROPPED' "$tmp/tiny.out")"
}
run_case socket_drop_said
