#!/usr/bin/env bash
# tests/build/abi.sh can fail, and fails on what docs/abi.md says:
#  1. a tiny library with a stable node and an unstable one (tests/build/abi/),
#     dumped as built, then rebuilt changed: abidiff with abi/stable.supp and
#     --no-added-syms (abi.sh's flags) exits 0 on the same library, on a
#     function added to the stable node and on a changed unstable function
#     (which it does see without the suppressions), 4 on a stable struct's
#     member type and on a stable function's parameter type, 12 on a stable
#     function removed;
#  2. abi.sh check on the real library against copies of abi/'s dump changed
#     the way a broken release would look: a stable function gone (abidiff:
#     incompatible), a stable parameter's type changed (ABI change), and a
#     function the library exports in a node the dump has as released.
#   abi_selftest.sh LIBTXSCALE_SO SRCDIR [CC]
set -euo pipefail
export LC_ALL=C
so=$1 src=$2 cc=${3:-cc}
for c in abidw abidiff "$cc"; do
  command -v "$c" >/dev/null || { echo "SKIP: needs $c (Debian: abigail-tools; scripts/deps test)" >&2; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
flags=(--no-added-syms --suppressions "$src/abi/stable.supp")
t=$src/tests/build/abi
for v in V1 V2_ADD V2_STABLE_STRUCT V2_STABLE_PARAM V2_UNSTABLE; do
  "$cc" -shared -fPIC -g -O2 -D$v -o "$tmp/lib$v.so" "$t/tiny.c" -Wl,--version-script="$t/tiny.map"
done
abidw --exported-interfaces-only --no-show-locs --no-corpus-path --no-comp-dir-path --no-elf-needed "$tmp/libV1.so" >"$tmp/v1.abi"
abidw --exported-interfaces-only --no-show-locs --no-corpus-path --no-comp-dir-path --no-elf-needed "$tmp/libV2_ADD.so" >"$tmp/v2add.abi"
# want OLD NEW RC WHAT [abidiff flags...]
want() {
  local old=$1 new=$2 exp=$3 what=$4 rc=0
  shift 4
  abidiff "$@" "$old" "$new" >"$tmp/out" 2>&1 || rc=$?
  if [ "$rc" -ne "$exp" ]; then
    cat "$tmp/out" >&2
    echo "FAIL: tiny: $what: abidiff exit $rc, want $exp" >&2
    bad=1
  else
    echo "ok: tiny: $what: exit $rc"
  fi
}
want "$tmp/v1.abi" "$tmp/libV1.so" 0 "unchanged" "${flags[@]}"
want "$tmp/v1.abi" "$tmp/libV2_ADD.so" 0 "a function added to the stable node" "${flags[@]}"
want "$tmp/v1.abi" "$tmp/libV2_UNSTABLE.so" 0 "an unstable function changed" "${flags[@]}"
want "$tmp/v1.abi" "$tmp/libV2_UNSTABLE.so" 4 "the same without the suppressions"
want "$tmp/v1.abi" "$tmp/libV2_STABLE_STRUCT.so" 4 "a stable struct's member type and size" "${flags[@]}"
want "$tmp/v1.abi" "$tmp/libV2_STABLE_PARAM.so" 4 "a stable function's parameter types" "${flags[@]}"
want "$tmp/v2add.abi" "$tmp/libV1.so" 12 "a stable function removed" "${flags[@]}"

# The real library against broken copies of the dump.
major=$(awk '/^#define TXS_VERSION_MAJOR / { print $3 }' "$src/include/txscale/version.h")
dump=$src/abi/libtxscale.so.$major.abi
[ -f "$dump" ] || { echo "FAIL: no $dump" >&2; exit 1; }
mkdir -p "$tmp/src/abi" "$tmp/src/include"
ln -s "$src/include/txscale" "$tmp/src/include/txscale"
cp "$src/abi/stable.supp" "$tmp/src/abi/"
fake=$tmp/src/abi/$(basename "$dump")
if ! readelf -S "$so" | grep -q '\.debug_info'; then
  echo "SKIP: $so has no debug info (a Release build): the tiny library's cases passed" >&2
  [ $bad -eq 0 ] || exit 1
  exit 77
fi
# broken NAME SED-SCRIPT MESSAGE-PATTERN
broken() {
  sed "$2" "$dump" >"$fake"
  cmp -s "$dump" "$fake" && { echo "FAIL: real: $1: the edit changed nothing" >&2; bad=1; return; }
  if out=$(bash "$src/tests/build/abi.sh" check "$so" "$tmp/src" 2>&1); then
    echo "FAIL: real: $1: abi.sh check passed" >&2; bad=1
  elif ! grep -q -- "$3" <<<"$out"; then
    echo "$out" >&2; echo "FAIL: real: $1: abi.sh check failed without '$3'" >&2; bad=1
  else
    echo "ok: real: $1: $(grep -m1 -- "$3" <<<"$out")"
  fi
}
cp "$dump" "$fake"
bash "$src/tests/build/abi.sh" check "$so" "$tmp/src" >/dev/null || { echo "FAIL: abi.sh check fails on an unchanged copy" >&2; exit 1; }
broken "a released stable function gone" "s/'txs_strerror'/'txs_strerror_gone'/g; s/'txs_strerror@@/'txs_strerror_gone@@/g" "incompatible"
# txs_strerror(int) released as txs_strerror(const char *): the fresh int is a change
sid=$(grep -A1 "<function-decl name='txs_strerror'" "$dump" | sed -n "s/.*<parameter type-id='\([^']*\)'.*/\1/p")
cid=$(grep "<function-decl name='txs_version'" -A1 "$dump" | sed -n "s/.*<return type-id='\([^']*\)'.*/\1/p")
[ -n "$sid" ] && [ -n "$cid" ] || { echo "FAIL: real: no txs_strerror parameter or txs_version return type in $dump" >&2; exit 1; }
broken "a stable function's parameter type" "/<function-decl name='txs_strerror'/,/<\/function-decl>/ s/<parameter type-id='$sid'/<parameter type-id='$cid'/" "ABI-change"
broken "a function joined a released node" "/<elf-symbol name='txs_version_patch'/d" "joined TXSCALE_"
[ $bad -eq 0 ] || exit 1
echo "abi_selftest: abidiff and abi.sh fail on each stable change and pass the allowed ones"
