#!/usr/bin/env bash
# Docs that run: every shell example of README.md and docs/*.md (fenced sh,
# bash, shell or console blocks) is run, in a namespace of its own and, where
# it needs two hosts, a netns-lab of its own, and what the text says it prints
# is checked (<!-- expect: REGEX -->); or it is skipped with the reason the
# text gives (<!-- skip: REASON -->). A block marked neither, or a fence
# without a language, fails the test: a new example chooses. The convention:
# docs/testing.md, "Docs that run". One case per block, named FILE:LINE.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_root
need_cmds jq curl ss timeout python3
need_txs
# shellcheck disable=SC2119 # txs_tmp takes mktemp's arguments, none here
txs_tmp
TXS=$(readlink -f "$TXS")

# what a block sees: build/txscale and txscale (PATH) are the binary under
# test, scripts/ is the source tree's; each file's blocks share a directory
# (a later block reads what an earlier one wrote, as a reader's shell would)
mkdir -p "$tmp/bin" "$tmp/plan" "$tmp/files"
ln -s "$TXS" "$tmp/bin/txscale"
python3 "$SRC/tests/integration/docs_examples.py" extract "$SRC" "$tmp/plan" "$TXS_LAB_TAG" "$tmp/files" ||
  fail "docs_examples.py extract failed"

convention() {
  if [ -s "$tmp/plan/errors.txt" ]; then
    cat "$tmp/plan/errors.txt"
    fail "$(wc -l <"$tmp/plan/errors.txt") place(s) break the convention (docs/testing.md, \"Docs that run\")"
  fi
  ok "$(grep -c . "$tmp/plan/plan.tsv") example blocks, each marked run or skip; every fence names its language"
}
run_case convention

# the prologue and epilogue of every block: the shell options a careful
# reader's script would have (a failing command fails the block), and at the
# end a wait of at most WAIT s for what it left in the background (a recv
# that ends by its --idle), whose exit status counts unless it was stopped
# (SIGINT/SIGTERM: a server the block kills); what is still running then is
# stopped, said so, and does not fail the block
cat >"$tmp/prologue.bash" <<'EOF'
set -e -o pipefail
_dx_end() {
  local rc=$? p st end=$((SECONDS + _DX_WAIT))
  set +e
  for p in $(jobs -p); do
    while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
    if kill -0 "$p" 2>/dev/null; then
      echo "docs_examples: stopping '$(ps -o args= -p "$p" | cut -c1-100)', still running ${_DX_WAIT} s after the block"
      kill -INT "$p" 2>/dev/null
      for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$p" 2>/dev/null
      wait "$p" 2>/dev/null
    else
      wait "$p"
      st=$?
      case $st in
        0 | 130 | 143) ;;
        127) ;; # reaped and reported by the shell already (a job the block waited for or killed)
        *) echo "docs_examples: a background command (pid $p) exited $st"; [ $rc -ne 0 ] || rc=1 ;;
      esac
    fi
  done
  exit $rc
}
trap _dx_end EXIT
# _dx_listens NS: wait (at most 10 s) until something listens in NS (the
# server of a '# host B' part); _dx_stop NS: SIGINT to every process in NS
# (our lab's), and a wait (at most 5 s) until they are gone
_dx_listens() {
  local i
  for i in $(seq 100); do
    if ss -N "$1" -Hltu | grep -q .; then return 0; fi
    sleep 0.1
  done
  echo "docs_examples: nothing listens in $1 after 10 s"
  return 1
}
_dx_stop() {
  local i
  # a process may end between the listing and the kill: not an error
  ip netns pids "$1" | xargs -r kill -INT 2>/dev/null || true
  for i in $(seq 50); do
    [ -n "$(ip netns pids "$1")" ] || return 0
    sleep 0.1
  done
}
EOF

# run_block ID WHERE [timeout=S] [wait=S] [links=N] [lab=NAME labup=runner|block [in=NS]]
run_block() {
  local id=$1 where=$2 timeout=60 wait=10 links=1 lab='' labup='' in='' kv
  shift 2
  for kv; do
    case $kv in
      timeout=*) timeout=${kv#*=} ;; wait=*) wait=${kv#*=} ;; links=*) links=${kv#*=} ;;
      lab=*) lab=${kv#*=} ;; labup=*) labup=${kv#*=} ;; in=*) in=${kv#*=} ;;
    esac
  done
  local file=${where%%:*}
  local wd=$tmp/work/${file//\//_} ns n log=$tmp/plan/$id.log rc=0 pid t0
  if [ ! -d "$wd" ]; then
    mkdir -p "$wd/build"
    ln -s "$TXS" "$wd/build/txscale"
    ln -s "$SRC/scripts" "$wd/scripts"
  fi
  # the block's own namespace (its loopback ports and the host's never
  # meet), or with in=NS one of its lab's
  if [ -z "$in" ]; then
    ns=$(lab_name "dx$id")
    CLEANUP_HOOKS+=("ip netns del $ns 2>/dev/null")
    ip netns del "$ns" 2>/dev/null || true
    ip netns add "$ns" || skip "cannot create namespace $ns"
    ip -n "$ns" link set lo up
  fi
  if [ -n "$lab" ]; then
    if [ "$labup" = runner ]; then
      lab_up "$lab" --links "$links"
    else
      TXS_LABS+=("$lab") # the block makes it; it goes at the end all the same
    fi
  fi
  [ -z "$in" ] || ns=$in
  {
    echo "_DX_WAIT=$wait"
    echo "export PATH=$tmp/bin:\$PATH"
    echo "cd $wd"
    cat "$tmp/prologue.bash" "$tmp/plan/$id.sh"
  } >"$tmp/plan/$id.run"
  t0=$(date +%s%N)
  ip netns exec "$ns" timeout -k 5 "$timeout" bash "$tmp/plan/$id.run" </dev/null >"$log" 2>&1 &
  pid=$!
  wait "$pid" || rc=$?
  kill -KILL -- "-$pid" 2>/dev/null || true # what timeout's process group still holds
  # and what is left in the block's namespaces (its own, its lab's: all ours)
  for n in $ns ${lab:+$lab-a $lab-b}; do
    ip netns pids "$n" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  done
  if [ "$(wc -l <"$log")" -gt 120 ]; then
    head -n 60 "$log"
    echo "... ($(($(wc -l <"$log") - 120)) lines)"
    tail -n 60 "$log"
  else
    cat "$log"
  fi
  echo "($where: exit $rc in $((($(date +%s%N) - t0) / 1000000)) ms)"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then fail "$where: not done within ${timeout} s"; fi
  [ $rc -eq 0 ] || fail "$where: exit status $rc"
  python3 "$SRC/tests/integration/docs_examples.py" check "$tmp/plan/$id" "$log" || fail "$where: the output is not what the text says"
}

# a case's name: FILE:LINE as run_case takes it (README.md-L25, docs_recv.md-L675)
case_name() { local f=${1%%:*}; echo "${f//\//_}-L${1##*:}"; }

while IFS=$'\t' read -r id where action args; do
  if [ "$action" = skip ]; then
    run_case "$(case_name "$where")" skip "$where: $args"
  else
    # shellcheck disable=SC2086 # args: key=value words
    run_case "$(case_name "$where")" run_block "$id" "$where" $args
  fi
done <"$tmp/plan/plan.tsv"
