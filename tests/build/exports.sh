#!/usr/bin/env bash
# libtxscale exports exactly its public API: every dynamic symbol it defines
# is a txs_ name under the TXSCALE_0 version node (lib/txscale.map), and every
# function a public header declares with TXS_API is among them.
#   exports.sh LIBTXSCALE_SO SRCDIR
set -euo pipefail
so=$1 src=$2
command -v nm >/dev/null || { echo "SKIP: needs nm (binutils)" >&2; exit 77; }
[ -f "$so" ] || { echo "FAIL: no library at $so" >&2; exit 1; }
bad=0
syms=$(nm -D --defined-only --with-symbol-versions "$so" | awk '$2 != "A" { print $3 }')
n=$(printf '%s\n' "$syms" | grep -c . || true)
[ "$n" -ge 100 ] || { echo "FAIL: only $n symbols exported from $so" >&2; exit 1; }
while read -r s; do
  name=${s%%@*} ver=${s#*@}; ver=${ver#@}
  case "$name" in
    txs_*) ;;
    *) echo "FAIL: $so exports '$name', not a txs_ name" >&2; bad=1 ;;
  esac
  [ "$ver" = TXSCALE_0 ] || { echo "FAIL: '$name' has version '$ver', not TXSCALE_0" >&2; bad=1; }
done <<<"$syms"
names=$(printf '%s\n' "$syms" | sed 's/@.*//' | sort -u)
decl=$(grep -ho 'TXS_API[^(;]*\btxs_[a-z0-9_]*[[:space:]]*(' "$src"/include/txscale/*.h |
  grep -o 'txs_[a-z0-9_]*[[:space:]]*($' | tr -d ' (' | sort -u)
missing=$(comm -23 <(printf '%s\n' "$decl") <(printf '%s\n' "$names"))
if [ -n "$missing" ]; then
  echo "FAIL: declared TXS_API in include/txscale but not exported:" $missing >&2
  bad=1
fi
[ $bad -eq 0 ] || exit 1
echo "exports: $n symbols, all txs_* @TXSCALE_0; $(printf '%s\n' "$decl" | grep -c .) TXS_API functions all exported"
