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
[ -x "$tmp/prefix/bin/txscale" ] || { echo "FAIL: no txscale binary installed" >&2; exit 1; }
pc=$(find "$tmp/prefix" -name txscale.pc -path '*pkgconfig*' | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no txscale.pc installed" >&2; exit 1; }
# relocatable: the .pc finds its prefix from its own place, so the tree
# works moved where it was not installed, with no --define-variable
mv "$tmp/prefix" "$tmp/moved"
pc=${pc/$tmp\/prefix/$tmp/moved}
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs txscale)
libdir=$(cd "$(pkg-config --variable=libdir txscale)" && pwd -P)
case "$libdir" in
  "$tmp"/moved/*) ;;
  *) echo "FAIL: the .pc's libdir '$libdir' is not under the moved prefix $tmp/moved" >&2; exit 1 ;;
esac
# the public headers include no dependency's headers: no -I of theirs
cflags=$(pkg-config --cflags txscale)
for w in dbus p11-kit gnutls libnl; do
  case "$cflags" in
    *$w*) echo "FAIL: pkg-config --cflags txscale drags $w into consumers: $cflags" >&2; exit 1 ;;
  esac
done
[ "$(pkg-config --modversion txscale)" = "$("$tmp/moved/bin/txscale" --version | awk '{ print $2 }')" ] ||
  { echo "FAIL: .pc version $(pkg-config --modversion txscale) is not txscale --version's" >&2; exit 1; }
# static linking still finds every library (pkgconf: Requires.internal)
pkg-config --static --libs txscale | grep -- -ljansson >/dev/null ||
  { echo "FAIL: --static --libs lacks -ljansson: $(pkg-config --static --libs txscale)" >&2; exit 1; }
cp "$src/tests/build/consumer.c" "$tmp/consumer.c"
cd "$tmp"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -o consumer consumer.c $flags ||
  { echo "FAIL: consumer does not build with: $flags" >&2; exit 1; }
out=$(LD_LIBRARY_PATH="$libdir" ./consumer) || { echo "FAIL: consumer (shared) failed: $out" >&2; exit 1; }
major=$(pkg-config --modversion txscale | cut -d. -f1)
LD_LIBRARY_PATH="$libdir" ldd ./consumer | grep "$libdir/libtxscale.so.$major" >/dev/null ||
  { echo "FAIL: consumer did not load the installed library" >&2; exit 1; }
echo "install: $out"
