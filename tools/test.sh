#!/usr/bin/env bash
# tools/test.sh: sets up (packages, CMake build) and runs the whole test suite with ctest.
# Extra arguments go to ctest, e.g. tools/test.sh -R unit.test_expr
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tools/setup.sh"
cd "${SF_BUILD:-$top/build}"
ctest --output-on-failure -j"$(nproc)" "$@"
