#!/usr/bin/env bash
# pytest over the Python package, as ctest runs it (CMakeLists.txt sets
# TXSCALE_LIB, TXSCALE_BIN and PYTHONPATH to the build's). Exits 77 when
# python3-pytest is missing (scripts/deps test installs it).
#   run.sh TESTDIR [pytest args]
set -euo pipefail
py=${TXS_PYTHON:-python3}
if ! "$py" -c 'import pytest' 2>/dev/null; then
  echo "SKIP: needs python3-pytest (scripts/deps test)" >&2
  exit 77
fi
exec "$py" -m pytest -q -p no:cacheprovider "$@"
