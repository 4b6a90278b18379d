#!/usr/bin/env bash
# The public headers as a program outside the tree sees them (docs/abi.md):
#  - each header, and the umbrella, compiles alone without TXS_UNSTABLE_API
#    (C11, -Wall -Wextra -Werror);
#  - the fast path's inline functions are declared only with
#    TXS_UNSTABLE_API: a call to txs_txq_send() (and the others) does not
#    compile without it and does with it;
#  - no public struct has an __int128 member (ctypes, cffi and cgo cannot
#    express its alignment).
#   headers.sh SRCDIR [CC]
set -euo pipefail
src=$1 cc=${2:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: needs $cc" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$src/include")
bad=0 n=0
for h in "$src"/include/txscale/*.h; do
  name=txscale/$(basename "$h")
  printf '#include <%s>\nint main(void) { return 0; }\n' "$name" >"$tmp/one.c"
  n=$((n + 1))
  "$cc" "${flags[@]}" "$tmp/one.c" 2>"$tmp/err" || { cat "$tmp/err" >&2; echo "FAIL: <$name> does not compile alone" >&2; bad=1; }
done
# one call of each guarded inline; each must fail without the macro, and
# all must compile with it
calls='
txs_txq_send(0, 0, 0)
txs_txq_alloc(0, 0, 0)
txs_txq_release(0, 0, 0)
txs_txq_flush(0)
txs_rx_input_poll(0, 0, 0, 0)
txs_tmpl_patch(0, 0, 0, 0, 0)
txs_tmpl_patch_fields(0, 0, 0, 0, 0)
txs_pcap_next(0, 0)
txs_stamper_init(0, 0)
txs_stamper_read(0)
txs_worker_stamp(0)
txs_ident_reserve_fast(0, 0, 0)
txs_ident_flow_reserve(0, 0)
txs_linksel_select(0, 0)
txs_linksel_select_mask(0, 0, 0)
txs_hist_add_fast(0, 0)
'
all=""
while read -r call; do
  [ -n "$call" ] || continue
  printf '#include <txscale/txscale.h>\nvoid f(void);\nvoid f(void) { (void)%s; }\n' "$call" >"$tmp/call.c"
  if "$cc" "${flags[@]}" "$tmp/call.c" 2>/dev/null; then
    echo "FAIL: ${call%%(*}() compiles without TXS_UNSTABLE_API" >&2; bad=1
  fi
  all+="	(void)$call;"$'\n'
done <<<"$calls"
printf '#include <txscale/txscale.h>\n#include <txscale/engine.h>\nvoid f(void);\nvoid f(void)\n{\n%s}\n' "$all" >"$tmp/all.c"
"$cc" "${flags[@]}" -Wno-nonnull -DTXS_UNSTABLE_API "$tmp/all.c" 2>"$tmp/err" ||
  { cat "$tmp/err" >&2; echo "FAIL: the fast path's inlines do not compile with TXS_UNSTABLE_API" >&2; bad=1; }
# __int128 members: a declaration of a name (not a cast, not a typedef)
i128=$(grep -nE '__int128[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*(\[[^]]*\])?[[:space:]]*[;,]' "$src"/include/txscale/*.h |
  grep -v typedef || true)
[ -z "$i128" ] || { echo "FAIL: __int128 in a public struct:" >&2; echo "$i128" >&2; bad=1; }
[ $bad -eq 0 ] || exit 1
echo "headers: $n compile alone without TXS_UNSTABLE_API; $(grep -c . <<<"$calls") fast-path inlines only with it; no __int128 member"
