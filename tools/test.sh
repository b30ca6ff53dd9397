#!/usr/bin/env bash
# tools/test.sh: sets up (packages, CMake build) and runs the whole test suite with ctest, then the
# sanitizer pass:
#   1. every ctest test of build/ (the normal build);
#   2. build-asan/ (clang, SF_SANITIZE=address,undefined, leak detection on; clang also builds the
#      fuzz targets) runs the unit suites, the end-to-end suites with fewer random graphs
#      (SF_RANDOM_COUNT=$SF_ASAN_RANDOM_COUNT, default 20; distributed random seeds 1-3; widths 1 and 3,
#      SF_ASAN_WIDTHS), sf-xform's
#      exit paths and the replay of every fuzz target's corpus (ctest -L 'unit|e2e|fuzz' and
#      script.xform_exits). Tests that assert memory figures skip themselves there.
# It prints how long each step took, then, when something failed, the FAIL lines of the script
# tests again (so that the tail of the log names them), and ends with one line
# "tests: N passed, N failed" over both passes. Exit status 0 only when both passed.
# Extra arguments go to the normal pass's ctest and skip the sanitizer pass, e.g.
#     tools/test.sh -R unit.test_expr
# SF_SANITIZER_PASS=0 skips the sanitizer pass too.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${SF_BUILD:-$top/build}
asan=${SF_ASAN_BUILD:-$top/build-asan}
log=$(mktemp "${TMPDIR:-/tmp}/sf-test.XXXXXX")
trap 'rm -f "$log"' EXIT
now() { date +%s; }

t0=$(now)
# the suite's own packages too: a real single-node Slurm for tests/slurm.sh, Prometheus for
# tests/metrics.sh and Chromium for its live view, kcat for tests/kafka.sh (each skips without them)
SF_SETUP_EXTRA="slurm-wlm munge prometheus chromium kcat ${SF_SETUP_EXTRA:-}" "$top/tools/setup.sh"
t1=$(now)
rc=0
(cd "$build" && ctest --output-on-failure -j"$(nproc)" "$@") | tee "$log" || rc=1
t2=$(now)
if [[ $# -gt 0 || ${SF_SANITIZER_PASS:-1} == 0 ]]; then
  exit $rc
fi

echo "test: the sanitizer pass (ASan + UBSan, $asan)"
cc=gcc
command -v clang >/dev/null && cc=clang
if [[ ! -f $asan/CMakeCache.txt ]]; then
  CC=$cc SF_BUILD=$asan SF_SANITIZE=address,undefined "$top/tools/setup.sh"
else
  SF_BUILD=$asan SF_SANITIZE=address,undefined "$top/tools/setup.sh"
fi
t3=$(now)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/tests/lsan.supp:print_suppressions=0} # known open leaks
export SF_RANDOM_COUNT=${SF_ASAN_RANDOM_COUNT:-20} SF_DIST_SEEDS=${SF_ASAN_DIST_SEEDS:-1 2 3} SF_WIDTHS=${SF_ASAN_WIDTHS:-1 3}
(cd "$asan" && ctest --output-on-failure -j"$(nproc)" -L 'unit|e2e|fuzz') | tee -a "$log" || rc=1
(cd "$asan" && ctest --output-on-failure -R '^script\.xform_exits$') | tee -a "$log" || rc=1
t4=$(now)

echo "test: setup and build $((t1 - t0))s, normal suite $((t2 - t1))s, sanitizer build $((t3 - t2))s," \
  "sanitizer suite $((t4 - t3))s, total $((t4 - t0))s"
passed=0 failed=0
while read -r nfailed total; do
  passed=$((passed + total - nfailed))
  failed=$((failed + nfailed))
done < <(sed -n 's/^[0-9]*% tests passed, \([0-9]*\) tests* failed out of \([0-9]*\)$/\1 \2/p' "$log")
# the failing cases last, so that a log cut to its tail still shows what failed and how to repeat it
if ((rc != 0)); then
  echo "test: what failed:"
  grep -E '\*\*\*(Failed|Timeout|Exception)|Not Run' "$log" || true
  grep -A 8 ' FAIL  ' "$log" | cut -c1-400 | head -n 150 || true
fi
echo "tests: $passed passed, $failed failed"
exit $rc
