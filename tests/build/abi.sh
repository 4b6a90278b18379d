#!/usr/bin/env bash
# libtxscale's stable ABI against the dump of the last release kept in the
# repository (abi/libtxscale.so.<SOVERSION>.abi; docs/abi.md).
#
#   abi.sh check LIBTXSCALE_SO SRCDIR   (ctest build_abi)
#     abidiff between the dump and the fresh library, the unstable node
#     suppressed (abi/stable.supp) and added functions allowed: any other
#     change to a stable function or a type it reaches fails (abidiff's
#     exit status 4, "ABI change", or 8, "incompatible"). Then the nodes: a
#     released node (one the dump has) is frozen, each of its symbols
#     exported under it and nothing added to it.
#   abi.sh dump STABLE_SO SRCDIR        (make abi-dump, at a release)
#     writes the dump from the build's stable projection (libtxscale-abi-
#     stable.so: the same objects linked with the stable nodes only), so
#     that it holds the stable surface and nothing else.
set -euo pipefail
export LC_ALL=C
mode=$1 so=$2 src=$3
supp=$src/abi/stable.supp
major=$(awk '/^#define TXS_VERSION_MAJOR / { print $3 }' "$src/include/txscale/version.h")
dump=$src/abi/libtxscale.so.$major.abi
for c in abidw abidiff nm readelf; do
  command -v $c >/dev/null || { echo "SKIP: needs $c (Debian: abigail-tools, binutils; scripts/deps test)" >&2; exit 77; }
done
[ -f "$so" ] || { echo "FAIL: no library at $so" >&2; exit 1; }
has_dwarf() { readelf -S "$1" | grep -q '\.debug_info'; }

case "$mode" in
dump)
  has_dwarf "$so" || { echo "abi.sh dump: $so has no debug info: build with -g (RelWithDebInfo, the default)" >&2; exit 1; }
  # no paths of this checkout and no DT_NEEDED (optional libraries) in the dump
  abidw --exported-interfaces-only --no-show-locs --no-corpus-path --no-comp-dir-path --no-elf-needed "$so" |
    sed "s|path='$src/|path='|" >"$dump.tmp"
  grep -q "<elf-symbol name='txs_version'" "$dump.tmp" || { rm -f "$dump.tmp"; echo "abi.sh dump: no txs_version in the dump of $so" >&2; exit 1; }
  mv "$dump.tmp" "$dump"
  echo "abi.sh: wrote ${dump#$src/}: $(grep -c '<elf-symbol ' "$dump") stable symbols ($(grep -o "elf-symbol name='[^']*' version='[^']*'" "$dump" | sed "s/.*version='//; s/'$//" | sort -u | tr '\n' ' '))"
  ;;
check)
  [ -f "$dump" ] || { echo "FAIL: no ABI dump ${dump#$src/} (make abi-dump, docs/abi.md)" >&2; exit 1; }
  has_dwarf "$so" || { echo "SKIP: $so has no debug info (a Release build); abidiff needs DWARF" >&2; exit 77; }
  bad=0
  rc=0
  out=$(abidiff --no-added-syms --suppressions "$supp" "$dump" "$so" 2>&1) || rc=$?
  if [ $rc -ne 0 ]; then
    echo "$out" >&2
    echo "FAIL: abidiff ${dump#$src/} $so: exit $rc ($( ((rc & 1)) && echo -n 'error ')$( ((rc & 2)) && echo -n 'usage ')$( ((rc & 4)) && echo -n 'ABI-change ')$( ((rc & 8)) && echo -n 'incompatible'))" >&2
    echo "      a stable function or a type it reaches changed: undo it, or (a new SONAME) see docs/abi.md" >&2
    bad=1
  fi
  # The nodes: NAME VERSION of the dump, and of the library's stable exports.
  old=$(grep -o "<elf-symbol name='[^']*' version='[^']*'" "$dump" | sed "s/.*name='\([^']*\)' version='\([^']*\)'/\1 \2/" | sort)
  new=$(nm -D --defined-only --with-symbol-versions "$so" | awk '$2 != "A" {
    n = $3; v = n; sub(/@.*/, "", n); sub(/^[^@]*@@?/, "", v); if (v !~ /^TXSCALE_UNSTABLE_/) print n, v }' | sort)
  gone=$(comm -23 <(printf '%s\n' "$old") <(printf '%s\n' "$new") | grep . || true)
  [ -z "$gone" ] || { echo "FAIL: released stable symbols not exported under their node any more:" >&2; echo "$gone" >&2; bad=1; }
  released=$(awk '{ print $2 }' <<<"$old" | sort -u)
  added=$(comm -13 <(printf '%s\n' "$old") <(printf '%s\n' "$new") | grep . || true)
  while read -r name node; do
    [ -n "$name" ] || continue
    if grep -qx "$node" <<<"$released"; then
      echo "FAIL: '$name' joined $node, which ${dump#$src/} has as released: list it in a new node" \
        "TXSCALE_<MAJOR>.<MINOR> of this release (if $node is not released yet, refresh the dump: make abi-dump)" >&2
      bad=1
    fi
  done <<<"$added"
  [ $bad -eq 0 ] || exit 1
  echo "abi: abidiff ${dump#$src/} clean ($(grep -c . <<<"$old") stable symbols; $(sed -n 's/.*(\([0-9]*\) filtered out).*/\1/p' <<<"$out" | head -n 1) unstable filtered out); added in new nodes: $( [ -n "$added" ] && awk '{ printf "%s@%s ", $1, $2 }' <<<"$added" || echo none)"
  ;;
*)
  echo "usage: abi.sh check|dump LIB SRCDIR" >&2
  exit 2
  ;;
esac
