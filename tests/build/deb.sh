#!/usr/bin/env bash
# The Debian packages make deb left (scripts/deb), inspected as a user gets
# them: each holds what it should (the library under its SONAME; headers,
# the .so link, the static library and a relocatable txscale.pc; the CLI,
# its man page and txscale-server.service), -dev depends on the exact
# library version, and, unpacked into a scratch root (not installed, not the
# build tree), a program builds with pkg-config alone and runs against the
# unpacked library, and the CLI tells the packages' version.
#   deb.sh DEBDIR SRCDIR
set -euo pipefail
dir=$1 src=$2
for c in dpkg-deb dpkg-architecture pkg-config cc; do
  command -v $c >/dev/null || { echo "SKIP: needs $c" >&2; exit 77; }
done
ls "$dir"/*.deb >/dev/null 2>&1 || { echo "SKIP: no packages in $dir (make deb)" >&2; exit 77; }
ver=$(awk '/^#define TXS_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 } END { print v }' \
  "$src/include/txscale/version.h")
major=${ver%%.*}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
bad=0
fail() { echo "FAIL: $*" >&2; bad=1; }
deb() { local f="$dir/$1_${ver}_$arch.deb"; [ -f "$f" ] || { echo "FAIL: no $f" >&2; exit 1; }; echo "$f"; }
lib=$(deb "libtxscale$major") dev=$(deb libtxscale-dev) cli=$(deb txscale)
# what each holds (dpkg-deb -c: ./path, symlinks as 'path -> target')
has() { # has DEB PATH-REGEX WHAT
  dpkg-deb -c "$1" | awk '{ print $6 }' | grep -E "^\./$2\$" >/dev/null || fail "$(basename "$1") lacks $3 ($2)"
}
has "$lib" "usr/lib/$ma/libtxscale\.so\.$major" "the SONAME link"
has "$lib" "usr/lib/$ma/libtxscale\.so\.$ver" "the shared library"
has "$dev" "usr/lib/$ma/libtxscale\.so" "the .so link"
has "$dev" "usr/lib/$ma/libtxscale\.a" "the static library"
has "$dev" "usr/lib/$ma/pkgconfig/txscale\.pc" "txscale.pc"
for h in txscale version common session session_send session_recv; do
  has "$dev" "usr/include/txscale/$h\.h" "txscale/$h.h"
done
has "$cli" "usr/bin/txscale" "the CLI"
has "$cli" "usr/share/man/man1/txscale\.1\.gz" "the man page"
has "$cli" "(usr/)?lib/systemd/system/txscale-server\.service" "txscale-server.service"
# nothing of one package in another
dpkg-deb -c "$lib" | grep 'usr/include\|usr/bin' >/dev/null && fail "libtxscale$major holds headers or programs"
dpkg-deb -c "$cli" | grep 'libtxscale\.so' >/dev/null && fail "txscale holds the library"
# -dev needs this very library; the library's shlibs name its package
dpkg-deb -f "$dev" Depends | grep "libtxscale$major (= $ver)" >/dev/null ||
  fail "libtxscale-dev does not depend on libtxscale$major (= $ver): $(dpkg-deb -f "$dev" Depends)"
# the symbols file (debian/libtxscale0.symbols, by version node): every
# stable symbol of lib/txscale.map's stable nodes since a version
symctl=$(mktemp -d)
dpkg-deb -e "$lib" "$symctl"
for s in txs_version txs_strerror; do
  grep -Eq "^ $s@TXSCALE_[0-9]+\.[0-9]+ " "$symctl/symbols" 2>/dev/null || fail "libtxscale$major's symbols file lacks $s@TXSCALE_<MAJOR>.<MINOR>"
done
rm -rf "$symctl"
# the unit: runs the server, not enabled by the package (its maintainer scripts do not enable it)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for d in "$lib" "$dev" "$cli"; do dpkg-deb -x "$d" "$root"; done
unit=
for u in "$root"/lib/systemd/system/txscale-server.service "$root"/usr/lib/systemd/system/txscale-server.service; do
  [ -f "$u" ] && unit=$u
done
[ -n "$unit" ] && grep -q '^ExecStart=/usr/bin/txscale server' "$unit" || fail "txscale-server.service does not run txscale server"
ctl=$(mktemp -d)
dpkg-deb -e "$cli" "$ctl"
# dh_installsystemd --no-enable --no-start: the postinst re-enables the unit
# only where the admin had it enabled (under 'debian-installed') and starts
# nothing (no deb-systemd-invoke)
if [ -f "$ctl/postinst" ]; then
  grep -q 'deb-systemd-invoke' "$ctl/postinst" && fail "txscale's postinst starts txscale-server.service"
  grep -q "deb-systemd-helper debian-installed 'txscale-server.service'" "$ctl/postinst" ||
    fail "txscale's postinst enables txscale-server.service on a first install"
fi
rm -rf "$ctl"
# the man page reads
zcat "$root/usr/share/man/man1/txscale.1.gz" | grep '^\.TH' >/dev/null || fail "the man page has no .TH"
# the CLI as packaged
v=$("$root/usr/bin/txscale" --version) || fail "txscale --version failed"
[ "$v" = "txscale $ver" ] || fail "txscale --version says '$v', the packages $ver"
# a program built with pkg-config alone against the unpacked -dev, run on the unpacked library
export PKG_CONFIG_PATH=$root/usr/lib/$ma/pkgconfig
export PKG_CONFIG_LIBDIR=$PKG_CONFIG_PATH:/usr/lib/$ma/pkgconfig:/usr/share/pkgconfig
[ "$(pkg-config --modversion txscale)" = "$ver" ] || fail "txscale.pc says $(pkg-config --modversion txscale)"
libdir=$(cd "$(pkg-config --variable=libdir txscale)" && pwd -P)
[ "$libdir" = "$(cd "$root/usr/lib/$ma" && pwd -P)" ] || fail "txscale.pc's libdir is $libdir, not the unpacked one"
flags=$(pkg-config --cflags --libs txscale)
case "$flags" in *dbus*|*p11-kit*) fail "pkg-config --cflags txscale drags: $flags" ;; esac
cp "$src/tests/build/consumer.c" "$root/consumer.c"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -o "$root/consumer" "$root/consumer.c" $flags || fail "consumer does not build with: $flags"
out=$(LD_LIBRARY_PATH="$libdir" "$root/consumer") || fail "consumer failed: $out"
LD_LIBRARY_PATH="$libdir" ldd "$root/consumer" | grep "$libdir/libtxscale.so.$major" >/dev/null ||
  fail "consumer did not load the unpacked library"
# docs/library.md's C walk-through, built with the compile line its header gives, run
wline=$(sed -n 's/^ \*   cc walkthrough\.c \(.*\) -o walkthrough$/\1/p' "$src/examples/walkthrough.c")
[ -n "$wline" ] || fail "examples/walkthrough.c gives no compile line"
cp "$src/examples/walkthrough.c" "$root/walkthrough.c"
# shellcheck disable=SC2086
(cd "$root" && eval "cc -Wall -Werror walkthrough.c $wline -o walkthrough") ||
  fail "the walk-through does not build with its own line: cc walkthrough.c $wline"
wout=$(LD_LIBRARY_PATH="$libdir" "$root/walkthrough" 47413 | tail -n1) || fail "walkthrough failed: $wout"
[ "$wout" = "sent 1000, received 1000, lost 0" ] || fail "walkthrough printed: $wout"
# python3-txscale: the module under dist-packages, bound to this very library
# version, and a loopback session run through it on the unpacked library
# (loaded by its SONAME: no TXSCALE_LIB), Debian's own python3
py="$dir/python3-txscale_${ver}_all.deb"
if [ ! -f "$py" ]; then
  fail "no $py"
else
  has "$py" "usr/lib/python3/dist-packages/txscale/__init__\.py" "the module"
  pdep=$(dpkg-deb -f "$py" Depends)
  case "$pdep" in *"libtxscale$major (>= $ver)"*"libtxscale$major (<< $ver.1~)"*) ;;
    *) fail "python3-txscale does not depend on libtxscale$major $ver exactly: $pdep" ;; esac
  dpkg-deb -x "$py" "$root"
  pyout=$(env -u TXSCALE_LIB PYTHONPATH="$root/usr/lib/python3/dist-packages" LD_LIBRARY_PATH="$libdir" \
    /usr/bin/python3 - "$ver" "$root" <<'PY' 2>&1
import json, os, sys, txscale
ver, root = sys.argv[1], sys.argv[2]
assert txscale.__file__.startswith(root), txscale.__file__
assert txscale.__version__ == ver, (txscale.__version__, ver)
with open("/proc/self/maps") as m:
    libs = [l.split()[-1] for l in m if "libtxscale.so" in l]
assert libs and all(p.startswith(root) or os.path.realpath(p).startswith(os.path.realpath(root)) for p in libs), libs
r = txscale.run("send", dest="198.18.0.2", dev="dummy", packets=5000, bitrate="0")
assert r["packets"] == 5000, r
try:
    txscale.Session("send", dest="198.18.0.2", ttl=300)
    raise SystemExit("ttl 300 was taken")
except txscale.ConfigError as e:
    assert e.key == "ttl", e.key
print("python3-txscale %s: %d datagrams through %s" % (txscale.__version__, r["packets"], libs[0]))
PY
) || fail "python3-txscale on the unpacked packages: $pyout"
fi
[ $bad -eq 0 ] || exit 1
echo "deb: $(basename "$lib") $(basename "$dev") $(basename "$cli") $(basename "$py"): contents, dependencies, unit, man page, CLI $ver; $out; $pyout"
