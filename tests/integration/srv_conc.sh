#!/usr/bin/env bash
# Concurrent sessions in `txscale server` (netns lab "conc"): the server in
# LAB-b (198.18.0.2 / 2001:2::2) with --max-sessions 4
# --max-sessions-per-client 2 --max-rate 50kpps; clients in LAB-a, which is two
# client addresses (198.18.0.1 and 2001:2::1).
#   1. four at once: `txscale send -c` and a stock `iperf3 -c -u` from each
#      address; each exact (txscale: received + lost = sent, exact, lost 0;
#      iperf3: the server's count against what the client says it sent);
#      while the four run, a fifth txscale client is told the server is busy
#      naming --max-sessions 4, and a fifth iperf3 client prints "the server
#      is busy running a test"; the txscale one is told at once why it
#      waits (a wait message, logged by the server), the iperf3 one is not
#   1b. two iperf3 -P 16 tests from one address at once (their stream
#      handshakes arrive on one port number): each exact, with its own 16
#      streams
#   2. the per-client limit: two sessions from 198.18.0.1 run, a third from
#      there is refused naming --max-sessions-per-client 2, and one from
#      2001:2::1 is served meanwhile, ending before a silent connection
#      from there (opened before it) times out; the two sessions from
#      198.18.0.1 run on disjoint CPU sets (two CPUs or more)
#   3. --max-rate: a txscale -R asking 100k packets/s and an iperf3 -R
#      asking more than 50k datagrams/s are refused; the server's log names
#      the limit
#   4. two txscale clients asking the same data port at once: the second is
#      refused (the port is in use), the first stays exact
#   5. 100 short sessions, four at a time (the next as soon as one ends), of which every tenth client is
#      killed (SIGKILL) mid-test: afterwards the server's open files and
#      child processes are back at their idle values, its VmRSS within
#      idle + 25 %
# Needs root, jq, iperf3; exits 77 with the reason otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"

SRV_LOG_LINES=40 # a failing case shows the end of the server's log

lab_test conc iperf3
lab_server --max-sessions 4 --max-sessions-per-client 2 --max-rate 50kpps --ctl-timeout 3 --max-time 30
grep -q "sessions at once: at most 4 (2 per client)" "$tmp/srv.log" || fail "the server's first line does not say its limits"

# estab [PEER]: the server's established control connections (from PEER)
estab() { ip netns exec "$B" ss -Htn state established "( sport = :5201${1:+ and dst $1} )" | wc -l; }
estab_ge() { [ "$(estab "${2:-}")" -ge "$1" ]; }
wait_estab() { # N [PEER]: until N control connections (from PEER) are up (5 s)
  wait_for 5 estab_ge "$@" || fail "$1 control connections${2:+ from $2} expected, $(estab "${2:-}") up"
}
# until the server runs no session (its session processes gone, 20 s): a
# client that exited leaves its session finishing (receiver idle time,
# summaries) for a moment, and the next case counts on every slot
srv_idle() {
  for _ in $(seq 400); do [ -z "$(ps -o pid= --ppid "$srv")" ] && return 0; sleep 0.05; done
  fail "the server still runs $(ps -o pid= --ppid "$srv" | wc -l) sessions 20 s after the last case"
}
txc() { # NAME [send options...]: a txscale client in the background, JSON into NAME.json
  local name=$1; shift
  TMPDIR=$tmp/tc timeout 60 ip netns exec "$A" "$TXS" send -J -i 0 "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
}
ip3c() { # NAME [iperf3 options...]
  local name=$1; shift
  timeout 60 ip netns exec "$A" iperf3 -J "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
}
txs_exact() { # NAME PACKETS: the client's receiver line is exact with no loss
  local r
  r=$(jq -c 'select(.type == "receiver")' "$tmp/$1.json" | tail -n1)
  echo "$r" | jq -e --argjson s "$2" '.lost_exact and .expected == $s and .unique + .lost == $s and .unique == $s' >/dev/null ||
    fail "$1: not exact against $2 sent: $r $(cat "$tmp/$1.err")"
}
ip3_exact() { # NAME: the server's iperf3 summary for this client is exact against what it sent
  local sent own
  sent=$(jq .end.sum_sent.packets "$tmp/$1.json")
  own=$(jq -c --argjson s "$sent" 'select(.type == "summary" and .kind == "recv" and .device == "iperf3" and .expected == $s)' "$tmp/srv.json" | tail -n1)
  echo "$own" | jq -e --argjson s "$sent" '.lost_exact and .unique + .lost == $s and .lost == .kernel_drops.sockets' >/dev/null ||
    fail "$1: the client sent $sent, the server says: $own"
  echo "$sent $(echo "$own" | jq .unique)"
}

# ---- 1. four at once, a fifth refused -------------------------------------------------------------
four() {
srv_idle
txc t4 -c 198.18.0.2 -p 6001 -n 50k -b 10kpps & p1=$!
txc t6 -c 2001:2::2 -p 6002 -n 50k -b 10kpps & p2=$!
ip3c i4 -c 198.18.0.2 -u -l 100 -b 1M -t 5 & p3=$!
ip3c i6 -c 2001:2::2 -u -l 200 -b 2M -t 5 & p4=$!
wait_estab 4
# the fifth clients come while the four run (their control connections are
# up now); the server's refusal says how many ran when it came (checked
# below), which no later count from here can (on a loaded box the iperf3
# tests of 5 s may end before both fifth clients are done)
set +e
out5=$(TMPDIR=$tmp/tc timeout 20 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -p 6003 -n 100 -i 0 2>&1); rc5=$?
out6=$(timeout 20 ip netns exec "$A" iperf3 -c 2001:2::2 -u -t 1 2>&1); rc6=$?
set -e
for p in $p1 $p2 $p3 $p4; do wait $p || fail "four: a client failed: $(tail -n 3 "$tmp"/*.err)"; done
[ $rc5 -eq 1 ] || fail "busy: the fifth txscale client exited $rc5: $out5"
case "$out5" in *"the server is busy: 4 sessions run, this server's most (--max-sessions 4)"*) ;; *) fail "busy: '$out5'" ;; esac
# ... after it was told at once why it waited (the opener names a txscale client; an iperf3 one is not told)
grep -q "198.18.0.1: told to wait (4 sessions run (--max-sessions 4), 0 of them ending: waiting up to 0.3 s for one to end)" "$tmp/srv.log" ||
  fail "busy: the fifth txscale client was not told why it waited: $(grep -c 'told to wait' "$tmp/srv.log") wait lines"
[ "$(grep -c 'told to wait' "$tmp/srv.log")" -eq 1 ] || fail "busy: the iperf3 client was told to wait too"
[ $rc6 -ne 0 ] || fail "busy: the fifth iperf3 client exited 0"
case "$out6" in *"the server is busy running a test"*) ;; *) fail "busy: iperf3 says '$out6'" ;; esac
txs_exact t4 50000
txs_exact t6 50000
r3=$(ip3_exact i4)
r4=$(ip3_exact i6)
echo "ok: four at once: txscale v4 and v6 50000 of 50000 each (exact), iperf3 v4 sent/received $r3, v6 $r4 (exact); the fifth told: '${out5##*: }' / iperf3: '$(echo "$out6" | tail -n1)'"

}

# ---- 1a. a server stalled past a second: never taken for an iperf3 one ------------------------------
# The server process is stopped (SIGSTOP) for 1.5 s while a txscale client
# connects (the kernel completes the handshake into the backlog); before the
# opener, a client took a server silent for 1 s for iperf3 and ran iperf3's
# protocol with it. Now it waits and runs txscale's.
stalled() {
srv_idle
kill -STOP "$srv"
TMPDIR=$tmp/tc timeout 30 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -n 2000 -b 10kpps -i 0 >"$tmp/st.out" 2>&1 & p1=$!
sleep 1.5
kill -CONT "$srv"
wait $p1 || fail "stalled: the client failed: $(cat "$tmp/st.out")"
grep -q "txscale server 198.18.0.2, control port 5201 (txscale's protocol)" "$tmp/st.out" ||
  fail "stalled: the first line does not name txscale's protocol: $(head -n 2 "$tmp/st.out")"
grep -q "received 2000, lost 0 (0%) exact" "$tmp/st.out" || fail "stalled: not exact: $(cat "$tmp/st.out")"
echo "ok: a server stopped for 1.5 s while the client connected: the client waited and ran txscale's protocol, 2000 of 2000 exact"
}

# ---- 1b. two iperf3 tests from one address at once: their streams' handshakes share the port ----------
same_address() {
srv_idle
ip3c j1 -c 198.18.0.2 -u -l 100 -b 200k -t 1 -P 16 & p1=$!
ip3c j2 -c 198.18.0.2 -u -l 120 -b 150k -t 1 -P 16 & p2=$!
wait $p1 || fail "same address: iperf3 j1 failed: $(cat "$tmp/j1.err") $(jq -r .error "$tmp/j1.json")"
wait $p2 || fail "same address: iperf3 j2 failed: $(cat "$tmp/j2.err") $(jq -r .error "$tmp/j2.json")"
for j in j1 j2; do
  [ "$(jq -r '.end.sum_sent.packets // "none"' "$tmp/$j.json")" != none ] || fail "same address: iperf3 $j: $(jq -r .error "$tmp/$j.json")"
  ip3_exact $j >/dev/null
  sent=$(jq .end.sum_sent.packets "$tmp/$j.json")
  jq -c --argjson s "$sent" 'select(.type == "summary" and .kind == "recv" and .device == "iperf3" and .expected == $s)' "$tmp/srv.json" |
    tail -n1 | jq -e '(.flows | length) == 16 and .handshakes_refused == 0' >/dev/null || fail "same address: $j: not 16 streams of its own"
done
[ "$(jq .end.sum_sent.bytes "$tmp/j1.json")" -eq $((100 * $(jq .end.sum_sent.packets "$tmp/j1.json"))) ] || fail "same address: j1's bytes"
echo "ok: two iperf3 -P 16 tests from 198.18.0.1 at once: each exact with its own 16 streams ($(ip3_exact j1), $(ip3_exact j2))"

}

# ---- 2. the per-client limit ----------------------------------------------------------------------
per_client() {
srv_idle
txc h1 -c 198.18.0.2 -p 6011 -n 30k -b 10kpps & q1=$!
txc h2 -c 198.18.0.2 -p 6012 -n 30k -b 10kpps & q2=$!
wait_estab 2
# CPUs shared out: with two sessions running and two CPUs or more, each
# session's process (and what it starts) may run on CPUs the other may not
cpus_note="one CPU: not checked"
if [ "$(nproc)" -ge 2 ]; then
  sleep 0.3
  mapfile -t sp < <(ps -o pid= --ppid "$srv")
  [ "${#sp[@]}" -eq 2 ] || fail "cpus: ${#sp[@]} session processes, expected 2"
  c1=$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/${sp[0]// /}/status")
  c2=$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/${sp[1]// /}/status")
  python3 - "$c1" "$c2" <<'PY' || fail "cpus: the two sessions share CPUs: $c1 and $c2"
import sys
def cpus(s):
    out = set()
    for part in s.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out
sys.exit(0 if not (cpus(sys.argv[1]) & cpus(sys.argv[2])) else 1)
PY
  for p in "${sp[@]}"; do # the session's receiver inherits its share
    for g in $(ps -o pid= --ppid "${p// /}"); do
      [ "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$g/status")" = "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/${p// /}/status")" ] ||
        fail "cpus: session ${p// /}'s child $g runs outside its share"
    done
  done
  cpus_note="session CPUs $c1 and $c2"
fi
set +e
out3=$(TMPDIR=$tmp/tc timeout 20 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -p 6013 -n 100 -i 0 2>&1); rc3=$?
set -e
# a silent client (connects, says nothing) from 2001:2::1 does not hold up the next one from there
ip netns exec "$A" python3 -c 'import socket, time
s = socket.create_connection(("2001:2::2", 5201)); time.sleep(5)' & q3=$!
wait_estab 1 "[2001:2::1]"
n0=$(wc -l <"$tmp/srv.log")
txc v6 -c 2001:2::2 -p 6014 -n 2k -b 10kpps || fail "per-client: the v6 client was not served: $(cat "$tmp/v6.err")"
tail -n +"$n0" "$tmp/srv.log" | grep -m1 -E '\(2001:2::1\): (done after 1 test|error)' | grep 'done after' >/dev/null ||
  fail "silent: the v6 client's session ended after the silent one's: $(tail -n +"$n0" "$tmp/srv.log" | grep 2001:2::1)"
kill $q3 2>/dev/null || true
wait $q3 2>/dev/null || true
wait $q1 || fail "per-client: h1 failed: $(cat "$tmp/h1.err")"
wait $q2 || fail "per-client: h2 failed: $(cat "$tmp/h2.err")"
[ $rc3 -eq 1 ] || fail "per-client: the third client exited $rc3: $out3"
case "$out3" in *"2 sessions from 198.18.0.1 run, the most per client (--max-sessions-per-client 2)"*) ;; *) fail "per-client: '$out3'" ;; esac
txs_exact h1 30000
txs_exact h2 30000
txs_exact v6 2000
echo "ok: per client: a third from 198.18.0.1 told '${out3##*: }' while 2001:2::1 was served (2000 of 2000); $cpus_note"

}

# ---- 3. --max-rate ---------------------------------------------------------------------------------
max_rate() {
srv_idle
set +e
outr=$(TMPDIR=$tmp/tc timeout 20 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -p 6021 -R -n 1000 -b 100kpps -i 0 2>&1); rcr=$?
outi=$(timeout 20 ip netns exec "$A" iperf3 -c 198.18.0.2 -u -R -l 100 -b 80M -t 1 2>&1); rci=$?
set -e
[ $rcr -ne 0 ] || fail "max-rate: -R -b 100kpps was served"
case "$outr" in *"100000 datagrams/s asked; this server sends at most 50000 datagrams/s (--max-rate)"*) ;; *) fail "max-rate: '$outr'" ;; esac
# the refusal alone: no first line, no banner or interval of our receiver for a test that never ran
[ "$(printf '%s\n' "$outr" | wc -l)" -eq 1 ] || fail "max-rate: more than the refusal: '$outr'"
# a test that never ran has no receiver report (it would read as 0 received, 0 lost)
case "$outr" in *"recv: udp,"*|*"received 0"*|*"sender's summary did not come"*) fail "max-rate: an empty report of the refused test: '$outr'" ;; esac
[ $rci -ne 0 ] || fail "max-rate: iperf3 -R -b 80M was served"
# what stock iperf3 -s --server-bitrate-limit tells the client (IETOTALRATE), not "not implemented"
case "$outi" in *"total required bandwidth is larger than server limit"*) ;; *) fail "max-rate: iperf3 was told '$outi'" ;; esac
# the session's process writes its log line as it refuses: the client may be gone first (a loaded host)
wait_for 5 grep -q "100000 datagrams/s asked (-b 80000000 over 1 stream); this server sends at most 50000 datagrams/s (--max-rate)" "$tmp/srv.log" ||
  fail "max-rate: the server's log does not name the limit for iperf3"
txc rok -c 198.18.0.2 -p 6022 -R -n 2k -b 20kpps || fail "max-rate: -R -b 20kpps was refused: $(cat "$tmp/rok.err")"
echo "ok: max-rate: -R -b 100k refused ('${outr##*: }'), iperf3 -R -b 80M refused ($(echo "$outi" | tail -n1)), -R -b 20k served"

}

# ---- 4. one data port per session ------------------------------------------------------------------
data_port() {
srv_idle
txc d1 -c 198.18.0.2 -p 6031 -n 30k -b 10kpps & d1=$!
wait_estab 1
sleep 0.5
set +e
outd=$(TMPDIR=$tmp/tc timeout 20 ip netns exec "$A" "$TXS" send -c 198.18.0.2 -p 6031 -n 100 -i 0 2>&1); rcd=$?
set -e
wait $d1 || fail "port: the first client failed: $(cat "$tmp/d1.err")"
[ $rcd -ne 0 ] || fail "port: a second session on data port 6031 was served"
case "$outd" in *"port 6031"*"in use"*) ;; *) fail "port: '$outd'" ;; esac
txs_exact d1 30000
echo "ok: data port: a second session asking port 6031 is refused ('${outd##*: }'), the first exact"

}

# ---- 5. 100 sessions, some killed: back to idle -----------------------------------------------------
hundred() {
kids() { ps -o pid= --ppid "$srv" | wc -l; }
nfd() { ls "/proc/$srv/fd" | wc -l; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$srv/status"; }
[ "$(cat /proc/$srv/comm)" = txscale ] || fail "the server's pid $srv is not txscale's ($(cat /proc/$srv/comm))"
for _ in $(seq 100); do [ "$(kids)" -eq 0 ] && break; sleep 0.05; done
kids0=$(kids) fd0=$(nfd) rss0=$(rss)
[ "$kids0" -eq 0 ] || fail "idle: the server has $kids0 children before the run"
one() { # K: session K, retried while the server is still busy with the last batch
  local k=$1 dst=198.18.0.2 try out
  [ $((k % 2)) -eq 0 ] || dst=2001:2::2
  if [ $((k % 10)) -eq 3 ]; then # killed mid-test
    if [ $((k % 20)) -eq 3 ]; then
      TMPDIR=$tmp/tc ip netns exec "$A" "$TXS" send -c $dst -p $((7000 + k)) -n 100k -b 10kpps -i 0 >/dev/null 2>&1 &
    else
      ip netns exec "$A" iperf3 -c $dst -u -l 100 -b 1M -t 10 >/dev/null 2>&1 &
    fi
    local p=$!
    sleep 0.6
    kill -9 $p 2>/dev/null || true
    wait $p 2>/dev/null || true
    return 0
  fi
  for try in 1 2 3 4 5 6 7 8 9 10; do
    if [ $((k % 4)) -eq 1 ]; then
      out=$(timeout 20 ip netns exec "$A" iperf3 -c $dst -u -l 100 -b 1M -n 20k 2>&1) && return 0
      case "$out" in *busy*) sleep 0.2; continue ;; esac
    else
      out=$(TMPDIR=$tmp/tc timeout 20 ip netns exec "$A" "$TXS" send -c $dst -p $((7000 + k)) -n 200 -b 20kpps -i 0 2>&1) && return 0
      case "$out" in *busy*) sleep 0.2; continue ;; esac
    fi
    echo "session $k: $out" >>"$tmp/many.err"
    return 1
  done
  echo "session $k: busy 10 times: $out" >>"$tmp/many.err"
  return 1
}
t0=$(date +%s)
# four at a time: the next starts as soon as one of the four has ended
running=0
for k in $(seq 0 99); do
  if [ $running -eq 4 ]; then
    wait -n || fail "many: $(cat "$tmp/many.err")"
    running=$((running - 1))
  fi
  one "$k" &
  running=$((running + 1))
done
for _ in $(seq $running); do wait -n || fail "many: $(cat "$tmp/many.err")"; done
# the killed clients' sessions end at their control timeout (3 s) or sooner
for _ in $(seq 200); do
  [ "$(kids)" -eq "$kids0" ] && [ "$(nfd)" -eq "$fd0" ] && break
  sleep 0.05
done
kids1=$(kids) fd1=$(nfd) rss1=$(rss)
[ "$kids1" -eq "$kids0" ] || fail "many: $kids1 children left (idle: $kids0): $(ps -o pid,args --ppid "$srv")"
[ "$fd1" -eq "$fd0" ] || fail "many: $fd1 open files (idle: $fd0): $(ls -l /proc/$srv/fd)"
[ "$rss1" -le $((rss0 + rss0 / 4)) ] || fail "many: VmRSS $rss1 kB (idle: $rss0 kB)"
served=$(grep -c "session [0-9]* (.*): \(done after\|ended by\)\|iperf3 .* client: -l" "$tmp/srv.log" || true)
[ -z "$(ls -A "$tmp/ts")" ] || fail "many: temporary files left: $(ls "$tmp/ts")"
kill -0 $srv || fail "the server died"
echo "ok: 100 sessions ($served ended well, 10 clients killed) in $(( $(date +%s) - t0 )) s: children $kids1 (idle $kids0), open files $fd1 (idle $fd0), VmRSS $rss1 kB (idle $rss0 kB), no temporary file left"
}

run_case four
run_case stalled
run_case same_address
run_case per_client
run_case max_rate
run_case data_port
run_case hundred
kill $srv
wait $srv 2>/dev/null || true
