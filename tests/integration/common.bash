# The integration-test harness: sourced by every tests/integration/*.sh, never
# run itself (the name does not end in .sh, so CMakeLists.txt does not register
# it). A test sets its shell options, sources this file, does its shared setup
# at top level and runs its checks as named cases:
#
#   set -euo pipefail
#   SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
#   . "$SRC/tests/integration/common.bash"
#   lab_test xyz               # need_root, need_cmds jq, need_txs, txs_tmp, lab_up
#   v4_counts() { ...; [ "$got" = 10 ] || fail "got $got"; }
#   run_case v4_counts
#   run_case v6_counts check_counts 2001:2::2 10     # a function with arguments
#   run_case --needs v4_counts v4_again ...           # skipped unless v4_counts passed
#
# Cases
#   run_case [--needs A[,B]] NAME [FUNC [ARGS...]]
#       runs FUNC ARGS (FUNC defaults to NAME) in a subshell, under the
#       script's shell options, its output (stdout and stderr) kept and printed
#       indented once it ends, then one line:
#         PASS SCRIPT/NAME
#         FAIL SCRIPT/NAME: REASON
#         SKIP SCRIPT/NAME (REASON)
#       A case passes when FUNC returns 0 and nothing in it failed. A failing
#       case does not stop the later ones; a case that depends on an earlier
#       one names it with --needs and is skipped when that one did not pass.
#       Being a subshell, a case cannot set variables for later cases: shared
#       state belongs to the top level (or to files in $tmp). Background jobs a
#       case starts, labs it makes and CLEANUP_HOOKS it adds are cleaned up
#       when it ends.
#   TXS_CASES=a,b  runs only the cases named (others are not run, not counted);
#       a case whose --needs are not among them is skipped, saying so.
#   The script's last line is "N passed, N failed, N skipped"; its exit
#   status 1 when anything failed, else 0 when at least one case passed, else
#   77 (all skipped: ctest's SKIP_RETURN_CODE).
#
# Verdicts (inside a case they end or mark that case; at top level, the script)
#   skip REASON        the case is skipped (at top level: every case not yet run)
#   fail REASON        the case fails, here (at top level: the script fails)
#   fail_later REASON  the case will fail; its remaining checks still run
#   ok MESSAGE         "ok: MESSAGE" in the case's output (what a check saw)
#   FAIL_HOOKS         commands (eval'd) whose output is added to a failing
#                      case's, e.g. FAIL_HOOKS+=('sed "s/^/server: /" "$tmp/srv.log"')
#
# Checks and resources
#   need_root [REASON]   skip unless root (default: network namespaces)
#   need_cmd CMD [REASON]  skip with REASON unless CMD is on PATH (default
#                        "needs CMD (scripts/deps test)", iproute2 for ip/ss/tc)
#   need_cmds CMD...     need_cmd each with its default reason
#   lab_test, ns_test    the preambles of a two-namespace lab test and of a
#                        one-namespace test (below, where they are defined);
#                        also there: listens, lab_server, rj/sj/rj_is,
#                        capturing, capture_end, txs_refuses
#   need_txs             fail unless $TXS is an executable
#   txs_tmp [TEMPLATE]   a fresh directory (mktemp -d [TEMPLATE]) in $tmp
#   tc_drops NS DEV      the drop counter of DEV's root qdisc in namespace NS
#   lab_name PREFIX      PREFIX + $TXS_LAB_TAG (at most 12 characters, netns-lab's
#                        bound). TXS_LAB_TAG, when not set, is made per run (a
#                        short hex tag reserved under /tmp/txs-harness/), so two
#                        runs of one test never share a namespace name
#   lab_try NAME [ARGS]  scripts/netns-lab up --name NAME ARGS, its output in
#                        $tmp/lab.log; NAME is registered for cleanup first (a
#                        half-built lab goes too); returns netns-lab's status
#   lab_up NAME [ARGS]   lab_try, and a lab refused with 77 (no root, no
#                        namespaces) skips with netns-lab's words, any other
#                        failure fails with them
#   free_port            a loopback port (20000-32767, below the ephemeral
#                        range) that nothing listens on (TCP or UDP) and that no
#                        other run of the harness holds: reserved until exit
#   wait_for SECONDS CMD...  polls CMD every 0.05 s until it succeeds; returns 1
#                        when SECONDS pass first
#   wait_ready FILE [PID]  waits (at most 20 s) for the line "ready" in FILE,
#                        where a receiver started with --ready-fd 3 3>FILE
#                        writes it once it receives; fails when PID ends first
#
# The EXIT trap runs, in this order: the commands in CLEANUP_HOOKS (a test
# adds its own, e.g. CLEANUP_HOOKS+=('ip netns del "$NS" 2>/dev/null')), a
# kill of every background job and a wait for them, scripts/netns-lab down for
# every lab registered, the removal of $tmp (kept, and said so, when KEEP_TMP
# is set), the release of ports and tags, then the summary line. Nothing in it
# can fail the test.
#
# The frame-device tests (dev_packet.sh, dev_xdp.sh, failover.sh,
# ident_wire.sh) share the ring_* helpers at the end of this file.

SRC=${SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TXS=${TXS_BIN:-${TXS:-$SRC/build/txscale}}
tmp=
TXS_LABS=()
CLEANUP_HOOKS=()
FAIL_HOOKS=()
TXS_SCRIPT=$(basename "$0" .sh)
TXS_PASSED=0 TXS_FAILED=0 TXS_SKIPPED=0
TXS_IN_CASE=
TXS_TOP_FAILS=0
declare -A TXS_CASE_STATE=()
TXS_HOLD=/tmp/txs-harness
mkdir -p "$TXS_HOLD" 2>/dev/null || true
TXS_RUN_DIR=$(mktemp -d "/tmp/txs-$TXS_SCRIPT.XXXXXX")
# python3 is Debian's own where PATH finds another first (a pyenv shim costs
# 0.35 s a start, 0.04 s here; the tests use its standard library only)
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
  mkdir -p "$TXS_RUN_DIR/bin" && ln -s /usr/bin/python3 "$TXS_RUN_DIR/bin/python3" && export PATH="$TXS_RUN_DIR/bin:$PATH"
fi

# hold NAME: take /tmp/txs-harness/NAME (atomic mkdir, our pid inside) unless
# another run has it; a holder that is gone (its pid no longer runs) loses it.
# Released at exit (every NAME holding our pid, taken in a case or not).
_txs_hold() {
  local d=$TXS_HOLD/$1 pid
  if ! mkdir "$d" 2>/dev/null; then
    pid=$(cat "$d/pid" 2>/dev/null) || pid=
    # no pid yet: its holder is writing it; a live pid: held
    if [ -z "$pid" ] || kill -0 "$pid" 2>/dev/null; then return 1; fi
    rm -rf "$d"
    mkdir "$d" 2>/dev/null || return 1
  fi
  echo $$ >"$d/pid"
}

if [ -z "${TXS_LAB_TAG:-}" ]; then
  for _ in $(seq 50); do
    TXS_LAB_TAG=$(printf '%05x' $(((RANDOM * 32768 + RANDOM + $$) % 1048576)))
    _txs_hold "tag-$TXS_LAB_TAG" && break
  done
fi
export TXS_LAB_TAG

_txs_say() { # KIND MESSAGE: record a verdict of the current case (or the top level)
  local kind=$1
  shift
  [ -n "$TXS_IN_CASE" ] && printf '%s %s\n' "$kind" "$*" >>"$TXS_RUN_DIR/$TXS_IN_CASE.why"
}

# (at top level the EXIT trap says the verdict: "SKIP SCRIPT (REASON)")
skip() {
  if [ -n "$TXS_IN_CASE" ]; then echo "SKIP: $*" >&2; _txs_say skip "$*"; exit 77; fi
  TXS_TOP_SKIP=$*
  exit 77
}
fail() {
  if [ -n "$TXS_IN_CASE" ]; then echo "FAIL: $*" >&2; _txs_say fail "$*"; exit 1; fi
  echo "FAIL: $*" >&2 # also where it is called in a command substitution, whose variables are lost
  TXS_TOP_FAIL=$*
  exit 1
}
fail_later() {
  echo "FAIL: $*" >&2
  if [ -n "$TXS_IN_CASE" ]; then
    _txs_say fail "$*"
  else
    TXS_TOP_FAILS=$((TXS_TOP_FAILS + 1))
    echo "FAIL $TXS_SCRIPT: $*"
  fi
}
ok() { echo "ok: $*"; }

need_root() { [ "$(id -u)" -eq 0 ] || skip "${1:-needs root (network namespaces)}"; }
need_cmd() { command -v "$1" >/dev/null || skip "${2:-$(_txs_need_why "$1")}"; }
_txs_need_why() { # CMD: the default reason a test needs CMD
  case $1 in
    ip | ss | tc) echo "needs $1 (iproute2)" ;;
    python3) echo "needs python3" ;;
    *) echo "needs $1 (scripts/deps test)" ;;
  esac
}
need_cmds() { local c; for c; do need_cmd "$c"; done; }
need_txs() { [ -x "$TXS" ] || fail "no txscale binary at $TXS"; }

# lab_test [--later] PREFIX [CMD...]: the preamble of a test on a lab of two
# namespaces: need_root, need_cmds jq CMD..., need_txs, LAB=$(lab_name
# PREFIX), A=$LAB-a, B=$LAB-b, txs_tmp and lab_up "$LAB" (with --later the
# test calls lab_up "$LAB" itself, after cases that need no lab)
lab_test() {
  local later=
  if [ "$1" = --later ]; then later=1; shift; fi
  LAB=$(lab_name "$1")
  A=$LAB-a B=$LAB-b
  shift
  need_root
  need_cmds jq "$@"
  need_txs
  txs_tmp
  [ -n "$later" ] || lab_up "$LAB"
}

# ns_test PREFIX [CMD...]: the preamble of a test in one namespace of its own
# (loopback only): NS=$(lab_name PREFIX), PORT=$(free_port), need_root,
# need_cmds jq CMD..., need_txs, txs_tmp, namespace NS made (removed at exit)
# with lo up
ns_test() {
  NS=$(lab_name "$1")
  PORT=$(free_port)
  shift
  need_root
  need_cmds jq "$@"
  need_txs
  txs_tmp
  CLEANUP_HOOKS+=('ip netns del "$NS" 2>/dev/null')
  ip netns del "$NS" 2>/dev/null || true
  ip netns add "$NS" || skip "cannot create namespace $NS"
  ip -n "$NS" link set lo up
}

# listens [PORT]: a TCP socket listens on PORT (default 5201): in namespace
# $B when the test has a lab (B set), else in this namespace
listens() {
  if [ -n "${B:-}" ]; then
    ip netns exec "$B" ss -ltn "sport = :${1:-5201}" | grep LISTEN >/dev/null
  else
    ss -ltn "sport = :${1:-5201}" | grep LISTEN >/dev/null
  fi
}

# JSON summaries: rj EXPR is jq -r EXPR on the last line of file $R (a
# recv's summary), rjc EXPR the same, compact; sj EXPR is jq -r EXPR on file
# $S (a send's --summary-file). rj_is WHAT EXPR WANT: rj EXPR is WANT, or the
# case fails ("WHAT: EXPR is GOT, not WANT").
rj() { tail -n1 "$R" | jq -r "$1"; }
rjc() { tail -n1 "$R" | jq -c "$1"; }
sj() { jq -r "$1" "$S"; }
rj_is() {
  local got
  got=$(rj "$2") || true
  [ "$got" = "$3" ] || fail "$1: $2 is $got, not $3"
}

# capturing LOG: waits (at most 10 s) for dumpcap's "File: ..." line in LOG
# (its stderr), which it writes once its capture sockets are open and
# filtered: a frame sent after it is captured ("Capturing on" comes before
# the sockets are open); returns 1 when it does not come
capturing() { wait_for 10 _txs_capturing "$1"; }
_txs_capturing() { grep -q "^File: " "$1" 2>/dev/null; }

# clock_mark: "MONO REAL-MONO" in ns, for clock_steady. A capture's
# timestamps are CLOCK_REALTIME, a sender paces on CLOCK_MONOTONIC: the two
# move together unless the wall clock is set under them (a guest whose time
# is stepped to its host's after a pause or a move: 5000 ppm was seen here
# for minutes, and the wire then "missed" a schedule it kept).
clock_mark() {
  python3 -c 'import time; m = time.clock_gettime_ns(time.CLOCK_MONOTONIC); r = time.clock_gettime_ns(time.CLOCK_REALTIME); print(m, r - m)'
}

# clock_steady MARK [MAX_US]: 0 when CLOCK_REALTIME moved with
# CLOCK_MONOTONIC since MARK (within MAX_US, default 200 us); else 1, with
# CLOCK_WHY saying by how much it was set, in us and in ppm of the time.
clock_steady() {
  local now
  now=$(clock_mark)
  CLOCK_WHY=$(python3 -c 'import sys
m0, d0 = map(int, sys.argv[1].split()); m1, d1 = map(int, sys.argv[2].split())
step = (d1 - d0) / 1e3; ppm = step / max((m1 - m0) / 1e3, 1) * 1e6
print("%+.0f us in %.1f s (%+.0f ppm)" % (step, (m1 - m0) / 1e9, ppm))
sys.exit(0 if abs(step) <= float(sys.argv[3]) else 1)' "$1" "$now" "${2:-200}")
}

# timed_trials NAME TRIAL WHAT [MISSES]: runs TRIAL (a capture judged
# against the sender's schedule) until it passes; MISSES trials that miss
# (default 2: a stalled guest gets once more) fail with WHAT; a trial during
# which the wall clock was set (clock_steady) does not count, and three
# such skip the case, saying by how much the clock moved
timed_trials() {
  local name=$1 trial=$2 what=$3 misses=${4:-2} mark missed=0 moved=0
  while :; do
    mark=$(clock_mark)
    if $trial; then return 0; fi
    if ! clock_steady "$mark"; then
      moved=$((moved + 1))
      echo "$name: the wall clock was set during the trial ($CLOCK_WHY): the capture cannot be judged; once more"
      [ $moved -lt 3 ] || skip "$name: the host's wall clock was set during $moved trials (last: $CLOCK_WHY): capture times cannot be compared with the sender's schedule"
      sleep 2
      continue
    fi
    missed=$((missed + 1))
    [ $missed -lt "$misses" ] || fail "$name: $what ($missed trial$([ $missed = 1 ] || echo s))"
    echo "$name: trial failed, once more (host stalls?)"
  done
}

# capture_end PID: stops dumpcap PID (SIGINT) and waits for it. dumpcap takes
# frames from the kernel in blocks, each handed over when full or 250 ms old
# (its read timeout); a block not yet handed over when it stops is lost, so
# the stop comes 0.3 s after the caller's last frame.
capture_end() {
  sleep 0.3
  kill -INT "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# txs_refuses [--one-line] WANT ARGS...: $TXS ARGS exits 2 and its stderr
# names WANT (with --one-line: in one line, and nothing more)
txs_refuses() {
  local one= want out rc=0
  if [ "$1" = --one-line ]; then one=1; shift; fi
  want=$1
  shift
  out=$("$TXS" "$@" 2>&1 >/dev/null) || rc=$?
  [ $rc -eq 2 ] || fail "$*: exit $rc, expected 2 ($out)"
  case "$out" in *"$want"*) ;; *) fail "$*: message '$out' does not name '$want'" ;; esac
  [ -z "$one" ] || [ "$(wc -l <<<"$out")" -eq 1 ] || fail "$*: more than one line: $out"
}

# lab_server [--bin BIN] [ARGS...]: BIN (default $TXS) server -J ARGS in
# namespace $B, TMPDIR $tmp/ts (its clients' TMPDIR: $tmp/tc), its JSON
# lines in $tmp/srv.json and stderr in $tmp/srv.log, its pid in srv; returns
# once it listens on 5201 (fails after 20 s). A failing case shows the
# server's log (its last SRV_LOG_LINES lines when that is set).
lab_server() {
  local bin=$TXS
  if [ "${1:-}" = --bin ]; then bin=$2; shift 2; fi
  mkdir -p "$tmp/ts" "$tmp/tc"
  if [ -z "${_TXS_SRV_HOOK:-}" ]; then
    FAIL_HOOKS+=('[ -f "${tmp:-/nonexistent}/srv.log" ] && tail -n "${SRV_LOG_LINES:-+1}" "$tmp/srv.log" | sed "s/^/  server: /"')
    _TXS_SRV_HOOK=1
  fi
  TMPDIR=$tmp/ts ip netns exec "$B" "$bin" server -J "$@" >"$tmp/srv.json" 2>"$tmp/srv.log" &
  srv=$!
  wait_for 20 listens || fail "the server does not listen"
}

txs_tmp() { tmp=$(mktemp -d "$@"); }

# tc_drops NS DEV: the root qdisc's drop counter on DEV in namespace NS
tc_drops() { tc -n "$1" -s qdisc show dev "$2" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n1; }
tc_pkts() { tc -n "$1" -s qdisc show dev "$2" | sed -n 's/.*Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' | head -n1; }

lab_name() {
  local n=$1$TXS_LAB_TAG
  [[ "$n" =~ ^[A-Za-z0-9_-]{1,12}$ ]] || fail "lab name '$n' (prefix '$1' + TXS_LAB_TAG '$TXS_LAB_TAG'): 1-12 of [A-Za-z0-9_-]"
  echo "$n"
}

lab_try() {
  local name=$1
  shift
  [ -n "$tmp" ] || txs_tmp
  TXS_LABS+=("$name")
  "$SRC/scripts/netns-lab" up --name "$name" "$@" >"$tmp/lab.log" 2>&1
}

lab_up() {
  local rc=0
  lab_try "$@" || rc=$?
  [ $rc -ne 77 ] || skip "$(cat "$tmp/lab.log")"
  [ $rc -eq 0 ] || fail "netns-lab up: $(cat "$tmp/lab.log")"
}

free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 12768))
    if ss -Hln "sport = :$p" 2>/dev/null | grep . >/dev/null; then continue; fi
    _txs_hold "port-$p" || continue
    echo "$p"
    return 0
  done
  fail "no free loopback port found"
}

wait_for() {
  local secs=$1 end
  shift
  end=$(($(date +%s%N) + secs * 1000000000))
  until "$@"; do
    [ "$(date +%s%N)" -lt $end ] || return 1
    sleep 0.05
  done
}

wait_ready() {
  local file=$1 pid=${2:-} end=$(($(date +%s) + 20))
  until grep -qx ready "$file" 2>/dev/null; do
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then fail "the receiver (pid $pid) ended before it was ready"; fi
    [ "$(date +%s)" -lt $end ] || fail "no \"ready\" in $file after 20 s"
    sleep 0.02
  done
}

# _txs_cleanup_from NHOOKS NLABS: the cleanup of hooks and labs registered
# after the first NHOOKS / NLABS, and of every background job of this shell
_txs_cleanup_from() {
  local h lab i
  for ((i = $1; i < ${#CLEANUP_HOOKS[@]}; i++)); do
    h=${CLEANUP_HOOKS[$i]}
    eval "$h" || true
  done
  jobs -p | xargs -r kill 2>/dev/null || true
  wait 2>/dev/null || true
  for ((i = $2; i < ${#TXS_LABS[@]}; i++)); do
    lab=${TXS_LABS[$i]}
    "$SRC/scripts/netns-lab" down --name "$lab" >/dev/null 2>&1 || true
  done
}

_txs_case_exit() {
  local rc=$?
  set +e
  if [ $rc -eq 0 ] && grep -q '^fail ' "$TXS_RUN_DIR/$TXS_IN_CASE.why" 2>/dev/null; then rc=1; fi
  if [ $rc -ne 0 ] && [ ! -s "$TXS_RUN_DIR/$TXS_IN_CASE.why" ]; then
    _txs_say fail "exit status $rc${_TXS_ERR:+ from: $_TXS_ERR}"
  fi
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    local h
    for h in "${FAIL_HOOKS[@]}"; do eval "$h" 2>&1; done
  fi
  _txs_cleanup_from "$_TXS_NHOOKS" "$_TXS_NLABS"
  if [ -n "$tmp" ] && [ "$tmp" != "$_TXS_TMP0" ]; then rm -rf "$tmp"; fi
  exit $rc
}

_txs_selected() { # NAME: whether TXS_CASES (when set) names NAME
  [ -z "${TXS_CASES:-}" ] && return 0
  case ",$TXS_CASES," in *",$1,"*) return 0 ;; esac
  return 1
}

run_case() {
  local needs=
  if [ "$1" = --needs ]; then
    needs=$2
    shift 2
  fi
  local name=$1
  shift
  [[ "$name" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ ]] || fail "run_case: bad case name '$name'"
  [ $# -gt 0 ] || set -- "$name"
  _txs_selected "$name" || return 0
  local d why= state
  for d in ${needs//,/ }; do
    state=${TXS_CASE_STATE[$d]:-none}
    case $state in
      pass) continue ;;
      fail) why="needs $d, which failed" ;;
      skip) why="needs $d, which was skipped" ;;
      *) why="needs $d, which did not run${TXS_CASES:+ (not in TXS_CASES)}" ;;
    esac
    break
  done
  if [ -n "$why" ]; then
    echo "SKIP $TXS_SCRIPT/$name ($why)"
    TXS_CASE_STATE[$name]=skip
    TXS_SKIPPED=$((TXS_SKIPPED + 1))
    return 0
  fi
  local log=$TXS_RUN_DIR/$name.log rc opts=$-
  rm -f "$TXS_RUN_DIR/$name.why"
  set +e
  (
    TXS_IN_CASE=$name _TXS_NHOOKS=${#CLEANUP_HOOKS[@]} _TXS_NLABS=${#TXS_LABS[@]} _TXS_TMP0=$tmp _TXS_ERR=
    trap _txs_case_exit EXIT
    trap '_TXS_ERR="line $LINENO: $BASH_COMMAND (status $?)"' ERR
    set -E
    [[ $opts == *e* ]] && set -e
    "$@"
  ) >"$log" 2>&1 </dev/null
  rc=$?
  [[ $opts == *e* ]] && set -e
  sed 's/^/    /' "$log"
  local reason
  reason=$(sed -n "1s/^[a-z]* //p" "$TXS_RUN_DIR/$name.why" 2>/dev/null) || true
  if [ $rc -eq 0 ]; then
    echo "PASS $TXS_SCRIPT/$name"
    TXS_CASE_STATE[$name]=pass
    TXS_PASSED=$((TXS_PASSED + 1))
  elif [ $rc -eq 77 ] && grep -q '^skip ' "$TXS_RUN_DIR/$name.why" 2>/dev/null; then
    echo "SKIP $TXS_SCRIPT/$name ($reason)"
    TXS_CASE_STATE[$name]=skip
    TXS_SKIPPED=$((TXS_SKIPPED + 1))
  else
    echo "FAIL $TXS_SCRIPT/$name: ${reason:-exit status $rc}"
    TXS_CASE_STATE[$name]=fail
    TXS_FAILED=$((TXS_FAILED + 1))
  fi
  return 0
}

txs_cleanup() {
  local rc=$? d
  set +e
  trap - ERR
  if [ -n "${TXS_TOP_SKIP+x}" ]; then
    echo "SKIP $TXS_SCRIPT ($TXS_TOP_SKIP)"
    TXS_SKIPPED=$((TXS_SKIPPED + 1))
  elif [ -n "${TXS_TOP_FAIL+x}" ]; then
    echo "FAIL $TXS_SCRIPT: $TXS_TOP_FAIL"
    TXS_FAILED=$((TXS_FAILED + 1))
  elif [ $rc -ne 0 ]; then
    echo "FAIL $TXS_SCRIPT: exit status $rc${_TXS_TOP_ERR:+ from: $_TXS_TOP_ERR}"
    TXS_FAILED=$((TXS_FAILED + 1))
  fi
  TXS_FAILED=$((TXS_FAILED + TXS_TOP_FAILS))
  _txs_cleanup_from 0 0
  if [ -n "$tmp" ]; then
    if [ -n "${KEEP_TMP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
  fi
  if [ -n "${KEEP_TMP:-}" ]; then echo "kept $TXS_RUN_DIR (case logs)" >&2; else rm -rf "$TXS_RUN_DIR"; fi
  for d in "$TXS_HOLD"/*/pid; do
    [ "$(cat "$d" 2>/dev/null)" = $$ ] && rm -rf "${d%/pid}"
  done
  if [ $((TXS_PASSED + TXS_FAILED + TXS_SKIPPED)) -eq 0 ]; then
    echo "FAIL $TXS_SCRIPT: no case ran${TXS_CASES:+ (none of TXS_CASES=$TXS_CASES here)}"
    TXS_FAILED=1
  fi
  echo "$TXS_PASSED passed, $TXS_FAILED failed, $TXS_SKIPPED skipped"
  if [ $TXS_FAILED -gt 0 ]; then exit 1; fi
  if [ $TXS_PASSED -gt 0 ]; then exit 0; fi
  exit 77
}
trap txs_cleanup EXIT
set -E
trap '_TXS_TOP_ERR="line $LINENO: $BASH_COMMAND (status $?)"' ERR

# ---- frame-device tests: a lab of veth pairs, AF_PACKET / AF_XDP senders ----
# ring_setup PREFIX [LINKS [CMD...]]: lab PREFIX+tag with LINKS links (default
# 1), A and B its namespaces, MAC_TXi / MAC_RXi the addresses of link i, WORK a
# scratch directory ($tmp). Skips without root, the CLI, tshark/dumpcap, each
# CMD (need_cmds) or namespaces.
ring_setup() {
  need_root "needs root (network namespaces, AF_PACKET)"
  [ -x "$TXS" ] || skip "no txscale CLI at $TXS"
  command -v tshark >/dev/null && command -v dumpcap >/dev/null || skip "tshark/dumpcap not installed"
  need_cmds "${@:3}"
  LAB=$(lab_name "$1")
  txs_tmp
  WORK=$tmp
  lab_try "$LAB" --links "${2:-1}" || skip "cannot create namespaces: $(cat "$tmp/lab.log")"
  A=$LAB-a B=$LAB-b
  # no router solicitations from the sender: the peer's RX counters then see our packets only
  ip netns exec "$A" sysctl -qw net.ipv6.conf.all.router_solicitations=0 \
    net.ipv6.conf.default.router_solicitations=0 >/dev/null 2>&1 || true
  for ((i = 0; i < ${2:-1}; i++)); do
    ip netns exec "$A" sysctl -qw "net.ipv6.conf.tx$i.router_solicitations=0" >/dev/null 2>&1 || true
    eval "MAC_TX$i=\$(ip netns exec $A cat /sys/class/net/tx$i/address)"
    eval "MAC_RX$i=\$(ip netns exec $B cat /sys/class/net/rx$i/address)"
  done
}

# ring_cases DEV OPT[,OPT]: the cases every frame device passes, as
# v4_counts, v6_counts, OPT_counts (DEV,OPT: 5000 datagrams) for each OPT,
# ring64_counts, v4_1472_counts, v4_empty_counts (check_delivery), v4_wire and
# v6_wire (check_wire, addresses from the interface)
ring_cases() {
  local dev=$1 o
  run_case v4_counts check_delivery "$dev" 198.18.0.2 20000
  run_case v6_counts check_delivery "$dev" 2001:2::2 20000
  for o in ${2//,/ }; do run_case "${o}_counts" check_delivery "$dev,$o" 198.18.0.2 5000; done
  run_case ring64_counts check_delivery "$dev,ring=64" 198.18.0.2 20000
  run_case v4_1472_counts check_delivery "$dev" 198.18.0.2 20000 -l 1472
  run_case v4_empty_counts check_delivery "$dev" 198.18.0.2 2000 -l 0
  run_case v4_wire check_wire "$dev" 198.18.0.2 64 198.18.0.1 auto
  run_case v6_wire check_wire "$dev" 2001:2::2 64 2001:2::1 auto
}

# ring_expect_err WANT-RC PATTERN ARGS...: txscale send -i 0 -n 10 ARGS in the
# sender namespace exits WANT-RC and says PATTERN
ring_expect_err() {
  local want=$1 pat=$2 rc=0
  shift 2
  ip netns exec "$A" "$TXS" send -i 0 -n 10 "$@" >"$WORK/err.log" 2>&1 || rc=$?
  if [ "$rc" = "$want" ] && grep -q -- "$pat" "$WORK/err.log"; then ok "error: $(head -1 "$WORK/err.log")"
  else fail "expected exit $want and '$pat', got $rc: $(cat "$WORK/err.log")"; fi
}

# settle: wait (at most 10 s) until the link start-up chatter (IPv6 MLD
# reports) is over: the peer's RX counter unchanged for a second.
settle() {
  local prev cur
  prev=$(rx_packets)
  for _ in $(seq 10); do
    sleep 1
    cur=$(rx_packets)
    [ "$cur" = "$prev" ] && return 0
    prev=$cur
  done
}

_ring_arrived() { [ "$(rx_packets)" -ge "$2" ] && [ "$(snmp "$1")" -ge "$3" ]; }

rx_packets() { ip netns exec "$B" cat "/sys/class/net/${1:-rx0}/statistics/rx_packets"; }

# snmp NS FIELD: a counter of the peer's UDP layer (IPv4 "Udp" line or IPv6 snmp6)
snmp() {
  case $1 in
    Udp6*) ip netns exec "$B" awk -v f="$1" '$1 == f { print $2 }' /proc/net/snmp6 ;;
    *) ip netns exec "$B" awk -v f="$1" '$1 == "Udp:" { if (!h) { for (i = 2; i <= NF; i++) col[$i] = i; h = 1 } else print $col[f] }' /proc/net/snmp ;;
  esac
}

# json_field FILE KEY: first numeric value of "KEY": in FILE
json_field() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2; }

# ring_send ARGS...: txscale send in the sender namespace with a summary file
ring_send() { ip netns exec "$A" "$TXS" send -i 0 --summary-file "$WORK/sum.json" "$@" >"$WORK/send.log" 2>&1; }

# check_delivery DEV DST N [extra send args]: every packet we count as sent
# reaches the peer (veth RX counter) and its UDP layer with good checksums
# (no socket bound: each valid datagram counts once as NoPorts).
check_delivery() {
  local dev=$1 dst=$2 n=$3; shift 3
  local v6=0 np=NoPorts ce=InCsumErrors ie=InErrors
  case $dst in *:*) v6=1 np=Udp6NoPorts ce=Udp6InCsumErrors ie=Udp6InErrors ;; esac
  local rx0 np0 ce0 ie0 rx1 np1 ce1 ie1 sent
  rx0=$(rx_packets) np0=$(snmp $np) ce0=$(snmp $ce) ie0=$(snmp $ie)
  if ! ring_send --dev "$dev" -n "$n" -b 200kpps --seed 11 "$@" "$dst"; then
    fail_later "$dev -> $dst: send failed: $(tail -2 "$WORK/send.log")"
    return
  fi
  sent=$(json_field "$WORK/sum.json" packets)
  # delivery through the veth is asynchronous (the peer's backlog): wait for
  # the counters to reach what was sent (at most 5 s), then compare
  wait_for 5 _ring_arrived "$np" $((rx0 + sent)) $((np0 + sent)) || true
  rx1=$(rx_packets) np1=$(snmp $np) ce1=$(snmp $ce) ie1=$(snmp $ie)
  [ "$sent" = "$n" ] || fail_later "$dev -> $dst: sent $sent of $n"
  [ $((rx1 - rx0)) = "$sent" ] || fail_later "$dev -> $dst: peer RX counter +$((rx1 - rx0)), we sent $sent"
  [ $((np1 - np0)) = "$sent" ] || fail_later "$dev -> $dst: peer UDP layer took $((np1 - np0)) valid datagrams of $sent"
  [ $((ce1 - ce0)) = 0 ] && [ $((ie1 - ie0)) = 0 ] || fail_later "$dev -> $dst: peer UDP checksum/other errors +$((ce1 - ce0))/+$((ie1 - ie0))"
  ok "$dev -> $dst: $sent sent = $((rx1 - rx0)) received = $((np1 - np0)) valid at UDP (v6=$v6)"
}

# capture_start IFACE COUNT FILE: dumpcap in the peer, returns when it listens
capture_start() {
  ip netns exec "$B" timeout 20 dumpcap -q -i "$1" -c "$2" -P -w "$3" -f udp >"$WORK/dumpcap.log" 2>&1 &
  CAP_PID=$!
  capturing "$WORK/dumpcap.log" && return 0
  fail "dumpcap did not start: $(cat "$WORK/dumpcap.log")"
}

# pcap_frames FILE: one line of hex per frame of a classic little-endian pcap
# (microsecond or nanosecond): 24-byte file header, 16-byte record headers.
pcap_frames() {
  od -An -tx1 -v "$1" | tr -s ' \n' '\n' | grep -v '^$' | awk '
    function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    { b[n++] = $1 }
    END {
      p = 24
      while (p + 16 <= n) {
        len = hex(b[p + 11] b[p + 10] b[p + 9] b[p + 8]); p += 16; s = ""
        for (i = 0; i < len && p + i < n; i++) s = s b[p + i]
        print s; p += len
      }
    }'
}

# check_wire DEV DST N SRC [auto]: the frames on the wire are the generator's:
# our MACs and addresses, ports 40000/5201, good IP and UDP checksums,
# compact payload header (magic 0x7853, flow 0) with sequence 0..N-1,
# IPv4 IDs consecutive but for the allocator's random delta after a pause
# (docs/ident.md: uniform below the clock ticks the bucket sat idle, 0 when
# it was used every tick; a sender stalled two ticks or more on a loaded
# host makes one: a step of 1 + delta, delta below the ticks the run has
# lasted, never a repeat or a step back); and byte-identical
# (timestamp and UDP checksum masked) to the pcap: device's output for the
# same seed when it exists.
check_wire() {
  local dev=$1 dst=$2 n=$3 src=$4 ip=ip
  case $dst in *:*) ip=ipv6 ;; esac
  local pc=$WORK/wire.pcap
  rm -f "$pc"
  capture_start rx0 "$n" "$pc" || return
  # MACs from the interface and the neighbour table, source from -B or (auto) the interface
  local bind=(-B "$src")
  [ "${5:-}" = auto ] && bind=()
  ring_send --dev "$dev" -n "$n" -b 2000pps --seed 7 "${bind[@]}" "$dst" ||
    { fail_later "$dev: send failed: $(tail -2 "$WORK/send.log")"; kill "$CAP_PID" 2>/dev/null; return; }
  wait "$CAP_PID" || true
  local fields=(-e eth.src -e eth.dst -e $ip.src -e $ip.dst -e udp.srcport -e udp.dstport -e udp.checksum.status -e data.data)
  [ $ip = ip ] && fields+=(-e ip.checksum.status -e ip.id -e frame.time_epoch)
  # the ID allocator's clock tick (CLOCK_MONOTONIC_COARSE's resolution, a jiffy)
  local tick
  tick=$(python3 -c 'import time; print(time.clock_getres(6))' 2>/dev/null || echo 0.004)
  tshark -r "$pc" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields -E separator=' ' "${fields[@]}" \
    2>/dev/null >"$WORK/wire.txt"
  local got
  got=$(wc -l <"$WORK/wire.txt")
  [ "$got" = "$n" ] || { fail_later "$dev: captured $got of $n frames"; return; }
  if ! awk -v smac="$MAC_TX0" -v dmac="$MAC_RX0" -v src="$src" -v dst="$dst" -v tick="$tick" -v v4=$([ $ip = ip ] && echo 1 || echo 0) '
    function bad(m) { print "frame " NR ": " m; e = 1; exit 1 }
    function num(s) { return s ~ /^0x/ ? hexv(substr(s, 3)) : s + 0 }
    function hexv(s,   i, v) { v = 0; s = tolower(s); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    {
      if ($1 != smac || $2 != dmac) bad("MACs " $1 " " $2)
      if ($3 != src || $4 != dst) bad("addresses " $3 " " $4)
      if ($5 != 40000 || $6 != 5201) bad("ports " $5 " " $6)
      if ($7 != 1) bad("UDP checksum status " $7)
      if (substr($8, 1, 8) != "78530000") bad("payload header " substr($8, 1, 8))
      seq = sprintf("%08x", NR - 1)
      if (substr($8, 9, 8) != seq) bad("sequence " substr($8, 9, 8) " expected " seq)
      if (v4) {
        if ($9 != 1) bad("IPv4 header checksum status " $9)
        id = num($10)
        if (NR == 1) t0 = $11
        if (NR > 1) {
          step = (id - prev + 65536) % 65536
          # a delta d needs more than d ticks of idle bucket, and the bucket
          # cannot have sat idle longer than the run (plus the tick the first
          # frame fell in)
          if (step < 1 || step - 1 >= ($11 - t0) / tick + 1)
            bad("IPv4 ID " id " after " prev " (" ($11 - t0) * 1000 " ms into the run)")
        }
        prev = id
      }
    }' "$WORK/wire.txt"; then
    fail_later "$dev -> $dst: wire frames differ from the generator's"
    return
  fi
  ok "$dev -> $dst: $n frames on the wire carry our headers, checksums and sequence 0..$((n - 1))"
  # byte comparison with the pcap: device, when this build has one
  if grep -q "pcap:FILE" <<<"$("$TXS" send --help 2>&1)"; then
    local gp=$WORK/gen.pcap
    if ! ip netns exec "$A" "$TXS" send -i 0 --dev "pcap:$gp" -n "$n" --seed 7 --src-mac "$MAC_TX0" \
      --dst-mac "$MAC_RX0" -B "$src" "$dst" >"$WORK/pcap.log" 2>&1; then
      fail_later "pcap: run failed: $(tail -1 "$WORK/pcap.log")"
      return
    fi
    # frame hex per packet, with the UDP checksum and the timestamp masked;
    # IPv4 also the ID and header checksum: the lease allocator's random delta
    # depends on the clock tick, so IDs are not a function of the seed alone
    local l4=34
    [ $ip = ipv6 ] && l4=54
    for f in "$pc" "$gp"; do
      pcap_frames "$f" |
        awk -v c=$(((l4 + 6) * 2)) -v t=$(((l4 + 16) * 2)) -v v4=$([ $ip = ip ] && echo 1 || echo 0) '{
          s = substr($0, 1, c) "...." substr($0, c + 5, t - c - 4) "................" substr($0, t + 17)
          if (v4) s = substr(s, 1, 36) "...." substr(s, 41, 8) "...." substr(s, 53)
          print s }' >"$f.hex"
    done
    if cmp -s "$pc.hex" "$gp.hex"; then
      ok "$dev -> $dst: wire bytes equal the pcap: device's for the same seed"
    else
      fail_later "$dev -> $dst: wire bytes differ from the pcap: device's: $(diff "$pc.hex" "$gp.hex" | head -3)"
    fi
  fi
}

