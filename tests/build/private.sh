#!/usr/bin/env bash
# The library boundary from the other side: the engine's and the devices' own
# state stays out of the public structs. Each field below must not compile
# against include/txscale (offsetof on the public struct fails), and must
# compile on the private struct in lib/ that holds it (so the list stays true
# as fields move).
#   private.sh SRCDIR [CC]
set -euo pipefail
src=$1 cc=${2:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: needs $cc" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# public struct | private struct (its header under lib/) | fields
fields='
txs_netdev txs_nd:netdev/netdev_priv.h priv queues err linkstate
txs_txq txs_nq:netdev/netdev_priv.h closed priv link
txs_worker txs_wk:engine/worker.h stats cpu quota rate_pps error gen_ready eng thread run ts_rebase_ticks ts_bursts ts_checks ts_min ts_steps ts_err_n ts_err_sum ts_err_max ts_ahead ts_err_hist
txs_prof txs_prof_run:engine/worker.h samples discarded pkts loop tsc ns split
'
flags=(-std=gnu11 -D_GNU_SOURCE -fsyntax-only -Werror -I"$src/include")
bad=0 n=0
while read -r pub priv rest; do
  [ -n "$pub" ] || continue
  pstruct=${priv%%:*} phdr=${priv#*:}
  for f in $rest; do
    n=$((n + 1))
    printf '#include <stddef.h>\n#include <txscale/txscale.h>\nsize_t x = offsetof(struct %s, %s);\n' "$pub" "$f" >"$tmp/pub.c"
    if "$cc" "${flags[@]}" "$tmp/pub.c" 2>/dev/null; then
      echo "FAIL: struct $pub has the private field '$f' again (it belongs in struct $pstruct, lib/$phdr)" >&2
      bad=1
    fi
    printf '#include <stddef.h>\n#include "%s"\nsize_t x = offsetof(struct %s, %s);\n' "$phdr" "$pstruct" "$f" >"$tmp/priv.c"
    if ! "$cc" "${flags[@]}" -I"$src/lib" "$tmp/priv.c" 2>"$tmp/err"; then
      cat "$tmp/err" >&2
      echo "FAIL: struct $pstruct (lib/$phdr) has no field '$f': update this list" >&2
      bad=1
    fi
  done
done <<<"$fields"
[ $bad -eq 0 ] || exit 1
echo "private: $n fields of the engine and the devices stay out of the public structs"
