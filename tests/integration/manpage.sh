#!/usr/bin/env bash
# docs/txscale.1 is generated from the CLI's --help texts: it must be current.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
txs_tmp

current() {
  bash "$SRC/scripts/gen-man" "$TXS" >"$tmp/txscale.1"
  if ! diff -u "$SRC/docs/txscale.1" "$tmp/txscale.1"; then
    fail "docs/txscale.1 is out of date: run scripts/gen-man build/txscale > docs/txscale.1"
  fi
}
run_case current
