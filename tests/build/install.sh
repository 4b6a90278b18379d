#!/usr/bin/env bash
# `cmake --install` into a scratch prefix, then a program outside the tree
# built with nothing but `pkg-config --cflags --libs txscale` against it, run
# against the installed shared library.
#   install.sh BUILDDIR SRCDIR
set -euo pipefail
build=$1 src=$2
for c in cmake pkg-config cc; do
  command -v $c >/dev/null || { echo "SKIP: needs $c" >&2; exit 77; }
done
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; echo "FAIL: cmake --install" >&2; exit 1; }
pc=$(find "$tmp/prefix" -name txscale.pc -path '*pkgconfig*' | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no txscale.pc installed" >&2; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
# the .pc carries the configure-time prefix: point it at the scratch one
flags=$(pkg-config --define-variable=prefix="$tmp/prefix" --cflags --libs txscale)
libdir=$(pkg-config --define-variable=prefix="$tmp/prefix" --variable=libdir txscale)
[ -x "$tmp/prefix/bin/txscale" ] || { echo "FAIL: no txscale binary installed" >&2; exit 1; }
cp "$src/tests/build/consumer.c" "$tmp/consumer.c"
cd "$tmp"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -o consumer consumer.c $flags ||
  { echo "FAIL: consumer does not build with: $flags" >&2; exit 1; }
out=$(LD_LIBRARY_PATH="$libdir" ./consumer) || { echo "FAIL: consumer (shared) failed: $out" >&2; exit 1; }
LD_LIBRARY_PATH="$libdir" ldd ./consumer | grep "$libdir/libtxscale.so" >/dev/null || { echo "FAIL: consumer did not load the installed library" >&2; exit 1; }
echo "install: $out"
