# The preamble the integration tests share: sourced, never run (the name does
# not end in .sh, so CMakeLists.txt does not register it as a test). A test
# sets its shell options and SRC as before, then sources this file:
#
#   set -euo pipefail
#   SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
#   . "$SRC/tests/integration/common.bash"
#   need_root
#   need_cmd jq "needs jq (scripts/deps test)"
#   need_txs
#   txs_tmp
#   lab_up "$LAB"
#
# The checks run where the test calls them, so each test keeps its own order
# of checks, its own skip reasons and exit codes: 77 skip, 1 fail.
#
#   skip REASON          "SKIP: REASON" on stderr, exit 77 (ctest's SKIP_RETURN_CODE)
#   fail REASON          "FAIL: REASON" on stderr, exit 1; a test that wants more
#                        (a server's log, say) defines its own fail after sourcing
#   need_root [REASON]   skip unless root (default: network namespaces)
#   need_cmd CMD REASON  skip with REASON unless CMD is on PATH
#   need_txs             fail unless $TXS is an executable
#   txs_tmp [TEMPLATE]   a fresh directory (mktemp -d [TEMPLATE]) in $tmp
#   tc_drops NS DEV      the drop counter of DEV's root qdisc in namespace NS
#   lab_try NAME [ARGS]  scripts/netns-lab up --name NAME ARGS, its output in
#                        $tmp/lab.log; NAME is registered for cleanup first (a
#                        half-built lab goes too); returns netns-lab's status
#   lab_up NAME [ARGS]   lab_try, and a lab refused with 77 (no root, no
#                        namespaces) skips with netns-lab's words, any other
#                        failure fails with them
#
# The EXIT trap (set here) runs, in this order: the commands in the array
# CLEANUP_HOOKS (a test adds its own, e.g. CLEANUP_HOOKS+=('ip netns del
# "$NS" 2>/dev/null')), a kill of every background job and a wait for them,
# scripts/netns-lab down for every lab registered, and the removal of $tmp,
# which is kept (and where it is said on stderr) when KEEP_TMP is set.
# Nothing in it can fail the test: the test's exit status stands.

SRC=${SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
tmp=
TXS_LABS=()
CLEANUP_HOOKS=()

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

need_root() { [ "$(id -u)" -eq 0 ] || skip "${1:-needs root (network namespaces)}"; }
need_cmd() { command -v "$1" >/dev/null || skip "${2:-needs $1}"; }
need_txs() { [ -x "$TXS" ] || fail "no txscale binary at $TXS"; }

txs_tmp() { tmp=$(mktemp -d "$@"); }

# tc_drops NS DEV: the root qdisc's drop counter on DEV in namespace NS
tc_drops() { tc -n "$1" -s qdisc show dev "$2" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n1; }

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

txs_cleanup() {
  local h lab
  for h in "${CLEANUP_HOOKS[@]}"; do eval "$h" || true; done
  jobs -p | xargs -r kill 2>/dev/null || true
  wait 2>/dev/null || true
  for lab in "${TXS_LABS[@]}"; do "$SRC/scripts/netns-lab" down --name "$lab" >/dev/null 2>&1 || true; done
  if [ -n "$tmp" ]; then
    if [ -n "${KEEP_TMP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
  fi
}
trap txs_cleanup EXIT
