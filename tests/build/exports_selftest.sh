#!/usr/bin/env bash
# exports.sh can fail: run it on the built library against copies of
# lib/txscale.map each broken one way, and require the failure that names it.
#   exports_selftest.sh LIBTXSCALE_SO SRCDIR
set -euo pipefail
so=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib" "$tmp/include"
ln -s "$src/include/txscale" "$tmp/include/txscale"
bash "$src/tests/build/exports.sh" "$so" "$src" >/dev/null ||
  { echo "FAIL: exports.sh fails on the tree as it is" >&2; exit 1; }
bad=0
# expect NAME SED-SCRIPT MESSAGE-PATTERN
expect() {
  sed "$2" "$src/lib/txscale.map" >"$tmp/lib/txscale.map"
  cmp -s "$src/lib/txscale.map" "$tmp/lib/txscale.map" && { echo "FAIL: $1: the edit changed nothing" >&2; bad=1; return; }
  if out=$(bash "$src/tests/build/exports.sh" "$so" "$tmp" 2>&1); then
    echo "FAIL: $1: exports.sh passed" >&2; bad=1
  elif ! grep -q -- "$3" <<<"$out"; then
    echo "FAIL: $1: exports.sh failed without '$3':" >&2; echo "$out" >&2; bad=1
  else
    echo "ok: $1"
  fi
}
expect "an export listed nowhere" '/^\t\ttxs_netdev_open;$/d' "exports 'txs_netdev_open' (TXSCALE_UNSTABLE_"
expect "a listed name not defined" 's/^\t\ttxs_strerror;$/&\n\t\ttxs_no_such_function;/' "lists 'txs_no_such_function' under TXSCALE_0.1"
expect "a name moved to the other node" 's/^\t\ttxs_version_patch;$//; s/^\t\ttxs_netdev_close;$/&\n\t\ttxs_version_patch;/' "'txs_version_patch' has version TXSCALE_0.1, lib/txscale.map lists it under TXSCALE_UNSTABLE_"
expect "a wildcard" 's/^\t\ttxs_netdev_open;$/\t\ttxs_netdev_*;/' "wildcards"
mkdir -p "$tmp/debian"
for sf in "$src"/debian/libtxscale*.symbols; do [ -f "$sf" ] && cp "$sf" "$tmp/debian/"; done
expect "the unstable node not renamed" 's/TXSCALE_UNSTABLE_[0-9.]*/TXSCALE_UNSTABLE_0.0.9/' "rename the unstable node"
expect "a stable node newer than the version" 's/TXSCALE_0\.1\b/TXSCALE_0.99/g' "newer than version.h"
# the map as it is, and the symbols file of another release
cp "$src/lib/txscale.map" "$tmp/lib/txscale.map"
for sf in "$tmp"/debian/libtxscale*.symbols; do
  [ -f "$sf" ] || continue
  sed -i 's/(symver)TXSCALE_UNSTABLE_[0-9.]*/(symver)TXSCALE_UNSTABLE_0.0.9/' "$sf"
  if out=$(bash "$src/tests/build/exports.sh" "$so" "$tmp" 2>&1) || ! grep -q "does not name the unstable node" <<<"$out"; then
    echo "$out" >&2; echo "FAIL: a stale unstable node in ${sf#$tmp/} passed" >&2; bad=1
  else
    echo "ok: a stale unstable node in ${sf#$tmp/}"
  fi
done
[ $bad -eq 0 ] || exit 1
echo "exports_selftest: exports.sh fails on each broken map"
