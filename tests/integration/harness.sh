#!/usr/bin/env bash
# The harness itself (common.bash): scripts made here, run as a test would
# be, give the lines, counts and exit statuses docs/testing.md promises:
# one verdict line per case, the summary line, 0 / 1 / 77; TXS_CASES and
# --needs; what a case starts ends with it; a per-run lab tag and ports that
# two runs at once do not share. No root needed.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
txs_tmp

# mk NAME BODY: a test script $tmp/NAME.sh sourcing the harness, then BODY
mk() {
  printf '%s\n' 'set -euo pipefail' "SRC=$SRC" '. "$SRC/tests/integration/common.bash"' "$2" >"$tmp/$1.sh"
}
# runs NAME [ENV...]: runs it (env ENV); OUT = its verdict and summary lines, RC its status
runs() {
  local name=$1
  shift
  RC=0
  env "$@" bash "$tmp/$name.sh" >"$tmp/$name.out" 2>&1 || RC=$?
  OUT=$(grep -v '^    ' "$tmp/$name.out" || true)
}
# want RC LINES: the last run's status and lines
want() {
  [ "$RC" = "$1" ] || fail "exit status $RC, want $1: $(cat "$tmp"/*.out | tail -20)"
  [ "$OUT" = "$2" ] || fail "lines:"$'\n'"$OUT"$'\n'"want:"$'\n'"$2"
}

verdicts() {
  mk v '
a() { ok "fine"; }
b() { fail "b is broken"; }
c() { false; echo never; }
d() { fail_later "first"; fail_later "second"; echo "went on"; }
e() { skip "not here"; }
f() { echo "$1-$2"; }
run_case a
run_case b
run_case c
run_case d
run_case e
run_case f f x y'
  runs v TXS_CASES=
  want 1 "PASS v/a
FAIL v/b: b is broken
FAIL v/c: exit status 1 from: line 7: false (status 1)
FAIL v/d: first
SKIP v/e (not here)
PASS v/f
2 passed, 3 failed, 1 skipped"
  grep -qx '    ok: fine' "$tmp/v.out" || fail "a case's output is not shown indented"
  grep -qx '    went on' "$tmp/v.out" || fail "fail_later stopped its case"
  grep -qx '    x-y' "$tmp/v.out" || fail "run_case NAME FUNC ARGS: no arguments"
  ! grep -q never "$tmp/v.out" || fail "a failed command did not end its case"
}
run_case verdicts

statuses() {
  mk s0 'a() { :; }; b() { skip "no"; }; run_case a; run_case b'
  runs s0 TXS_CASES=
  want 0 "PASS s0/a
SKIP s0/b (no)
1 passed, 0 failed, 1 skipped"
  mk s77 'a() { skip "one"; }; b() { skip "two"; }; run_case a; run_case b'
  runs s77 TXS_CASES=
  want 77 "SKIP s77/a (one)
SKIP s77/b (two)
0 passed, 0 failed, 2 skipped"
  mk top_skip 'skip "no lab here"; a() { :; }; run_case a'
  runs top_skip TXS_CASES=
  want 77 "SKIP top_skip (no lab here)
0 passed, 0 failed, 1 skipped"
  mk top_fail 'a() { :; }; run_case a; fail "setup broke"'
  runs top_fail TXS_CASES=
  want 1 "PASS top_fail/a
FAIL: setup broke
FAIL top_fail: setup broke
1 passed, 1 failed, 0 skipped"
  mk top_err 'false'
  runs top_err TXS_CASES=
  want 1 "FAIL top_err: exit status 1 from: line 4: false (status 1)
0 passed, 1 failed, 0 skipped"
  mk none ':'
  runs none TXS_CASES=
  want 1 "FAIL none: no case ran
0 passed, 1 failed, 0 skipped"
}
run_case statuses

selection() {
  mk sel '
a() { :; }; b() { fail "b"; }; c() { :; }
run_case a
run_case b
run_case --needs a c
run_case --needs a,b d c
run_case --needs c e c'
  runs sel TXS_CASES=
  want 1 "PASS sel/a
FAIL sel/b: b
PASS sel/c
SKIP sel/d (needs b, which failed)
PASS sel/e
3 passed, 1 failed, 1 skipped"
  runs sel TXS_CASES=c,e
  want 77 "SKIP sel/c (needs a, which did not run (not in TXS_CASES))
SKIP sel/e (needs c, which was skipped)
0 passed, 0 failed, 2 skipped"
  runs sel TXS_CASES=a,c
  want 0 "PASS sel/a
PASS sel/c
2 passed, 0 failed, 0 skipped"
  runs sel TXS_CASES=nosuch
  want 1 "FAIL sel: no case ran (none of TXS_CASES=nosuch here)
0 passed, 1 failed, 0 skipped"
}
run_case selection

# what a case starts (a job, a cleanup hook, a scratch directory) ends with
# it; variables it sets do not reach the next case
case_scope() {
  mk scope '
txs_tmp
a() {
  sleep 60 & echo $! >"$tmp/pid"
  CLEANUP_HOOKS+=("touch $tmp/hooked")
  X=1
}
b() {
  kill -0 "$(cat "$tmp/pid")" 2>/dev/null && fail "the job of a lives on"
  [ -e "$tmp/hooked" ] || fail "the hook of a did not run"
  [ -z "${X:-}" ] || fail "X reached b"
  echo "$tmp" >"$TXS_OUT"
}
run_case a
run_case b'
  runs scope TXS_CASES= TXS_OUT="$tmp/scope.tmp"
  want 0 "PASS scope/a
PASS scope/b
2 passed, 0 failed, 0 skipped"
  [ ! -e "$(cat "$tmp/scope.tmp")" ] || fail "the test's \$tmp outlived it"
}
run_case case_scope

# two runs at once: their own lab tags and ports, released at exit
per_run() {
  mk par '
a() { echo "tag $TXS_LAB_TAG port $(free_port) port $(free_port)" >"$TXS_OUT"; sleep 1; }
run_case a'
  local r1 r2 t1 t2
  env -u TXS_LAB_TAG TXS_CASES= TXS_OUT="$tmp/r1" bash "$tmp/par.sh" >/dev/null 2>&1 &
  r1=$!
  env -u TXS_LAB_TAG TXS_CASES= TXS_OUT="$tmp/r2" bash "$tmp/par.sh" >/dev/null 2>&1 &
  r2=$!
  wait $r1 || fail "run 1 failed"
  wait $r2 || fail "run 2 failed"
  read -r _ t1 _ p1 _ q1 <"$tmp/r1"
  read -r _ t2 _ p2 _ q2 <"$tmp/r2"
  echo "run 1: tag $t1, ports $p1 $q1; run 2: tag $t2, ports $p2 $q2"
  [[ "$t1" =~ ^[0-9a-f]{5}$ ]] && [[ "$t2" =~ ^[0-9a-f]{5}$ ]] || fail "tags '$t1' '$t2'"
  [ "$t1" != "$t2" ] || fail "two runs got the same lab tag $t1"
  [ "$(printf '%s\n' "$p1" "$q1" "$p2" "$q2" | sort -u | wc -l)" = 4 ] || fail "ports shared: $p1 $q1 $p2 $q2"
  for x in "tag-$t1" "tag-$t2" "port-$p1" "port-$q1" "port-$p2" "port-$q2"; do
    [ ! -e "/tmp/txs-harness/$x" ] || fail "$x still held after its run ended"
  done
  mk tagged 'a() { [ "$(lab_name ab)" = abxyz ] || fail "lab_name: $(lab_name ab)"; }; run_case a'
  runs tagged TXS_CASES= TXS_LAB_TAG=xyz
  want 0 "PASS tagged/a
1 passed, 0 failed, 0 skipped"
  mk long 'a() { lab_name abcdefgh >/dev/null; }; run_case a'
  runs long TXS_CASES= TXS_LAB_TAG=123456
  [ "$RC" = 1 ] && grep -q "lab name 'abcdefgh123456'" "$tmp/long.out" || fail "a name over 12 characters: $(cat "$tmp/long.out")"
}
run_case per_run
