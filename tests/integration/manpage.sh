#!/usr/bin/env bash
# docs/txscale.1 is generated from the CLI's --help texts: it must be current.
set -euo pipefail
TXS=${TXS_BIN:-build/txscale}
SRC=${TXS_SRCDIR:-.}
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
bash "$SRC/scripts/gen-man" "$TXS" >"$tmp"
if ! diff -u "$SRC/docs/txscale.1" "$tmp"; then
  echo "docs/txscale.1 is out of date: run scripts/gen-man build/txscale > docs/txscale.1"
  echo "manpage: 0 passed, 1 failed"
  exit 1
fi
echo "manpage: 1 passed, 0 failed"
