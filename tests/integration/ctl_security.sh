#!/usr/bin/env bash
# The control channel against hostile and broken clients, on loopback
# (docs/control.md). A `txscale server` with a 1 s --ctl-timeout meets:
#   garbage, an oversize frame, a truncated frame, an unknown protocol
#   version, a client that connects and says nothing, a request to send to
#   an address it was not allowed, a second client while a session runs
#   (busy), clients interrupted by SIGINT; a server with --auth-file meets a wrong secret and no secret,
#   and the secret never crosses the wire (a relay records the bytes).
# Each ends with one clear error (to the client and in the server's log),
# and after each one the server serves the next real client, exactly.
# Needs python3 and ss; exits 77 otherwise.
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
# a failing case shows the servers' logs
FAIL_HOOKS+=('for f in "$tmp"/srv*.log; do [ -f "$f" ] && sed "s|^|  $(basename "$f"): |" "$f"; done')
need_txs
need_cmd python3 "needs python3"
need_cmd jq "needs jq (scripts/deps test)"
need_cmd ss "needs ss (iproute2)"

# bad input: exit 2 and one line naming the value, before anything starts
refused() {
  local want=$1; shift
  local out rc=0
  out=$("$TXS" "$@" 2>&1 >/dev/null) || rc=$?
  [ $rc -eq 2 ] || fail "$*: exit $rc, expected 2 ($out)"
  case "$out" in *"$want"*) ;; *) fail "$*: message '$out' does not name '$want'" ;; esac
  [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "$*: more than one line: $out"
}
bad_input() {
  refused "--max-time" server --max-time 0
  refused "--ctl-timeout" server --ctl-timeout 0
  refused "--allow-dest" server --allow-dest 198.18.0.0/33
  refused "--allow-dest" server --allow-dest example.com
  refused "--auth-file" server --auth-file /nonexistent/key
  refused "-B/--bind" server -B nowhere
  refused "198.51.100.1" server -B 198.51.100.1 --control-port 1
  refused "--control-port" recv -s --control-port 0
  refused "--remote-cpus" send -c 127.0.0.1 --server --remote-cpus x
  refused "--remote-dev" send -c 127.0.0.1 --server --remote-dev pcap:/etc/shadow
  refused "--ctl-timeout" send -c 127.0.0.1 --server --ctl-timeout 0
  echo "ok: bad input exits 2 naming the value"
}
run_case bad_input


# loopback ports nothing else uses (the harness holds them until exit)
CP=$(free_port)  # control, server 1
CP2=$(free_port) # control, server 2 (with a secret)
DP=$(free_port)  # data
DP2=$(free_port) # data of the session that holds the server busy
RP=$(free_port)  # the recording relay
OP=$(free_port)  # control, recv -s -1

txs_tmp

wait_listen() { wait_for 20 listens "$1" || fail "nothing listens on port $1"; }
# in_log FILE PATTERN: the server's log says PATTERN (it logs just after it answers: at most 5 s)
in_log() { wait_for 5 grep -q -- "$2" "$1"; }
sessions() { grep -c 'connected' "$tmp/srv.log" || true; }
# session_started N: the server logged more than N sessions (at most 20 s)
more_sessions() { [ "$(sessions)" -gt "$1" ]; }

"$TXS" server -B 127.0.0.1 --control-port $CP --ctl-timeout 1 --max-sessions 1 >"$tmp/srv.log" 2>&1 &
srv=$!

# raw MODE: speak (badly) to the server; prints what it answers
raw() {
  python3 - "$CP" "$@" <<'EOF'
import json, socket, struct, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), 5)
s.settimeout(10)
def frame(obj):
    b = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return b"TXSC" + struct.pack(">I", len(b)) + b
def read_frame():
    h = b""
    while len(h) < 8:
        c = s.recv(8 - len(h))
        if not c:
            return None
        h += c
    assert h[:4] == b"TXSC", h
    n = struct.unpack(">I", h[4:])[0]
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return json.loads(b)
hello = read_frame()
assert hello and hello["type"] in ("hello", "busy"), hello
if mode == "garbage":
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
elif mode == "oversize":
    s.sendall(b"TXSC" + struct.pack(">I", (64 << 10) + 1) + b"{}")
elif mode == "truncated":
    s.sendall(b"TXSC" + struct.pack(">I", 100) + b'{"v":1,"ty')
    s.shutdown(socket.SHUT_WR)
elif mode == "version":
    s.sendall(frame({"v": 2, "type": "setup", "test": 1}))
elif mode == "silent":
    t0 = time.time()
elif mode == "hold":  # a test that keeps the server busy, then a client that goes away
    s.sendall(frame({"v": 1, "type": "setup", "test": 1,
                     "recv": {"port": int(sys.argv[3]), "dev": "udp", "time": 2}}))
    r = read_frame()
    assert r["type"] == "ready", r
    print("held", flush=True)
    time.sleep(float(sys.argv[4]))
    sys.exit(0)
elif mode == "dest":
    s.sendall(frame({"v": 1, "type": "setup", "test": 1,
                     "send": {"port": 9, "dest": "198.18.0.99", "length": 16, "rate": 1000, "time": 1}}))
elif mode == "badfield":
    s.sendall(frame({"v": 1, "type": "setup", "test": 1, "recv": {"port": 9, "dev": "pcap:/etc/shadow"}}))
r = read_frame()
if mode == "silent":
    print("after %.1f s:" % (time.time() - t0), end=" ")
print(json.dumps(r))
EOF
}

# next N: a real client still gets exact counts
next_ok() {
  local out
  out=$(timeout 60 "$TXS" send -c 127.0.0.1 --server --control-port $CP -p $DP -n 2000 -b 20kpps -J -i 0 2>&1) ||
    fail "$1: the next client failed: $out"
  # the last receiver line is exact against the last summary's 2000 packets
  grep '^{' <<<"$out" | jq -e -s '([.[] | select(.type == "receiver")] | last) as $r
    | ([.[] | select(.type == "summary")] | last) as $s
    | $r.lost_exact == true and $r.unique + $r.lost == $s.packets and $s.packets == 2000' >/dev/null ||
    fail "$1: the next client is not exact: $out"
}

# expect MODE TEXT: the server answers an error naming TEXT, logs it, stays up
expect() {
  local mode=$1 want=$2 got
  got=$(raw "$mode" "${@:3}") || fail "$mode: the raw client failed"
  case "$got" in
    *'"type": "error"'*"$want"*) ;;
    *) fail "$mode: the server answered '$got', expected an error with '$want'" ;;
  esac
  in_log "$tmp/srv.log" "error: .*$want" || fail "$mode: the server's log does not say '$want'"
  kill -0 "$srv" || fail "$mode: the server exited"
  next_ok "$mode"
  echo "ok: $mode: '$want'; the next client is served"
}

wait_listen $CP
run_case first next_ok "first"
run_case garbage expect garbage "not a txscale control message"
run_case oversize expect oversize "over the limit"
run_case version expect version "unsupported protocol version 2"
run_case dest expect dest "destination 198.18.0.99 is not allowed"
run_case badfield expect badfield "setup.recv.dev"

truncated() {
  # truncated: the peer has closed, so the server only logs it
  raw truncated >/dev/null || true
  in_log "$tmp/srv.log" "truncated message: the peer closed after 10 of 100 bytes" "$tmp/srv.log" || fail "truncated: not in the server's log"
  next_ok truncated
  echo "ok: truncated: logged; the next client is served"
}
run_case truncated

silent() {
  local got secs
  # silent: the timeout ends the session in about --ctl-timeout
  got=$(raw silent)
  case "$got" in
    "after "*'"type": "error"'*"no message within 1.0 s"*) ;;
    *) fail "silent: got '$got'" ;;
  esac
  secs=$(echo "$got" | sed 's/after \([0-9.]*\) s:.*/\1/')
  python3 -c "import sys; sys.exit(0 if 0.9 <= $secs <= 5 else 1)" || fail "silent: the timeout came after $secs s"
  next_ok silent
  echo "ok: silent: timed out after $secs s; the next client is served"
}
run_case silent

busy() {
  local hold out rc=0
  # busy: while a silent session holds the server, a client is told so
  raw hold $DP2 2 >"$tmp/hold" &
  hold=$!
  for _ in $(seq 100); do grep -q held "$tmp/hold" && break; sleep 0.05; done
  grep -q held "$tmp/hold" || fail "busy: the holding client did not get its test started"
  out=$(timeout 20 "$TXS" send -c 127.0.0.1 --server --control-port $CP -p $DP -n 100 -i 0 2>&1) || rc=$?
  wait $hold || true
  [ $rc -eq 1 ] || fail "busy: exit $rc, expected 1 ($out)"
  case "$out" in *"the server is busy"*) ;; *) fail "busy: '$out'" ;; esac
  in_log "$tmp/srv.log" "busy (refused: " || fail "busy: not in the server's log"
  next_ok busy
  echo "ok: busy: the second client is told '$(echo "$out" | tail -n1)'; the next one is served"
}
run_case busy

sigint_forward() {
  local c n0 t0 rc=0
  # SIGINT: forward, our sender stops and the test still ends with the server's exact counts
  n0=$(sessions)
  "$TXS" send -c 127.0.0.1 --server --control-port $CP -p $DP -t 20 -b 10kpps -J -i 0 >"$tmp/int.json" 2>"$tmp/int.err" &  # bounded by -t
  c=$!
  # the session is under way (the server logged it), then a while of sending
  wait_for 20 more_sessions "$n0" || fail "SIGINT forward: the server saw no session: $(cat "$tmp/int.err")"
  sleep 1
  t0=$SECONDS
  kill -INT $c
  wait $c || rc=$?
  [ $rc -eq 0 ] || fail "SIGINT forward: exit $rc ($(cat "$tmp/int.err"))"
  [ $((SECONDS - t0)) -le 10 ] || fail "SIGINT forward: took $((SECONDS - t0)) s to end"
  python3 - "$tmp/int.json" <<'EOF2' || fail "SIGINT forward: $(cat "$tmp/int.json")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
r = [l for l in lines if l["type"] == "receiver"][-1]
s = [l for l in lines if l["type"] == "summary"][-1]
assert 0 < s["packets"] < 200000 and r["lost_exact"] and r["unique"] + r["lost"] == s["packets"], (r, s)
EOF2
echo "ok: SIGINT (forward): our sender stopped, the server's exact counts of what was sent are shown, exit 0"
}
run_case sigint_forward

sigint_reverse() {
  local c n0 left rc=0
  # SIGINT: reverse, the client leaves and the server stops sending at once
  n0=$(sessions)
  "$TXS" send -c 127.0.0.1 -R --control-port $CP -p $DP -t 20 -b 10kpps -i 0 >"$tmp/intr.out" 2>&1 &  # bounded by -t
  c=$!
  wait_for 20 more_sessions "$n0" || fail "SIGINT reverse: the server saw no session: $(cat "$tmp/intr.out")"
  sleep 1
  kill -INT $c
  wait $c || rc=$?
  [ $rc -eq 130 ] || fail "SIGINT reverse: exit $rc ($(cat "$tmp/intr.out"))"
  in_log "$tmp/srv.log" "the client left while we sent" || fail "SIGINT reverse: the server did not notice"
  left=$( (ps --ppid "$srv" -o pid= || true) | while read -r p; do ps --ppid "$p" -o pid=,args= || true; done)
  [ -z "$left" ] || fail "SIGINT reverse: the server still runs: $left"
  next_ok "SIGINT reverse"
  echo "ok: SIGINT (reverse): exit 130, the server stops its sender at once and serves the next client"
}
run_case sigint_reverse

shared_secret() {
  local secret srv2 out rc
  # the shared secret, through a relay that records every byte both ways
  secret="txscale-secret-$RANDOM$RANDOM"
  echo "$secret" >"$tmp/key"
  echo "wrong-$secret" >"$tmp/wrong"
  "$TXS" server -B 127.0.0.1 --control-port $CP2 --auth-file "$tmp/key" --ctl-timeout 1 >"$tmp/srv2.log" 2>&1 &
  srv2=$!
  python3 - $RP $CP2 "$tmp/wire" <<'EOF' &
import socket, sys, threading
lp, sp, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", lp)); ls.listen(8)
out = open(path, "ab")
lock = threading.Lock()
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            with lock:
                out.write(d); out.flush()
            b.sendall(d)
    except OSError:
        pass
    for x in (a, b):
        try: x.shutdown(socket.SHUT_RDWR)
        except OSError: pass
while True:
    c, _ = ls.accept()
    u = socket.create_connection(("127.0.0.1", sp))
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
EOF
  wait_listen $CP2
  wait_listen $RP
  sec() { timeout 30 "$TXS" send -c 127.0.0.1 --server --control-port $RP -p $DP -n 1000 -b 20kpps -i 0 "$@" 2>&1; }
  rc=0
  out=$(sec --auth-file "$tmp/wrong") || rc=$?
  [ $rc -eq 1 ] || fail "wrong secret: exit $rc ($out)"
  case "$out" in *"authentication failed: wrong shared secret"*) ;; *) fail "wrong secret: '$out'" ;; esac
  # the refusal alone: no first line of a test that never ran
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "wrong secret: more than the refusal: '$out'"
  in_log "$tmp/srv2.log" "error: authentication failed: wrong shared secret" || fail "wrong secret: not in the server's log"
  rc=0
  out=$(sec) || rc=$?
  [ $rc -eq 1 ] || fail "no secret: exit $rc ($out)"
  case "$out" in *"asks for a shared secret: give --auth-file"*) ;; *) fail "no secret: '$out'" ;; esac
  out=$(sec --auth-file "$tmp/key") || fail "right secret: $out"
  case "$out" in *"receiver 127.0.0.1: received "*" exact"*) ;; *) fail "right secret: '$out'" ;; esac
  case "$(printf '%s\n' "$out" | head -n1)" in "txscale send: txscale server 127.0.0.1, control port $RP (txscale's protocol): forward (we send) test, data port $DP") ;;
    *) fail "right secret: the first line does not name the protocol: '$out'" ;; esac
  kill -0 "$srv2" || fail "the server with a secret exited"
  [ -s "$tmp/wire" ] || fail "the relay recorded nothing"
  grep -q '"type":"auth"' "$tmp/wire" || fail "the relay saw no auth message"
  if grep -aqF "$secret" "$tmp/wire"; then fail "the secret crossed the wire"; fi
  echo "ok: shared secret: a wrong one and none are refused, the right one is served, and it never crossed the wire"
}
run_case shared_secret

recv_s_one() {
  local one out rc=0
  # recv -s -1: one session, then the server exits with its status
  "$TXS" recv -s -1 -B 127.0.0.1 --control-port $OP >"$tmp/srv3.log" 2>&1 &
  one=$!
  wait_listen $OP
  out=$(timeout 60 "$TXS" send -c 127.0.0.1 --control-port $OP -p $DP -n 1000 -b 20kpps -i 0 2>&1) || fail "-1: $out"
  case "$out" in *"receiver 127.0.0.1: received "*" exact"*) ;; *) fail "-1: '$out'" ;; esac
  for _ in $(seq 50); do kill -0 $one 2>/dev/null || break; sleep 0.1; done
  kill -0 $one 2>/dev/null && fail "-1: the server still runs after its session"
  wait $one || rc=$?
  [ $rc -eq 0 ] || fail "-1: the server exited $rc after a good session"
  echo "ok: recv -s -1 serves one session (the iperf3 form: send -c without --server) and exits 0"
}
run_case recv_s_one

server_alive() {
  kill -0 "$srv" || fail "the server exited"
}
run_case server_alive

