#!/usr/bin/env bash
# tools/fuzz.sh TARGET SECONDS: fuzzes one libFuzzer target of tests/fuzz/ (xform, expr, csv, wire,
# number) for SECONDS seconds with ASan and UBSan.
#
# It configures and builds $SF_FUZZ_BUILD (default build-fuzz/) with clang, -DSF_SANITIZE=
# address,undefined and coverage instrumentation of the libraries (-fsanitize=fuzzer-no-link), then
# runs build-fuzz/bin/sf-fuzz-TARGET on two corpus directories: build-fuzz/fuzz-corpus/TARGET
# (what this and earlier runs found, kept between runs) and the seeds of the tree
# (build-fuzz/fuzz-seeds/TARGET, tests/fuzz/corpus/TARGET, those that exist: number has neither and
# starts from nothing). A crash, leak or timeout stops the run and leaves the input in
# build-fuzz/fuzz-crashes/TARGET/; reproduce it with
#     build-fuzz/bin/sf-fuzz-TARGET FILE
# and, once fixed, copy it into tests/fuzz/corpus/TARGET/ so that ctest's fuzz.TARGET replays it.
# Extra arguments go to libFuzzer (e.g. -jobs=2 -workers=2, -max_len=8192).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -lt 2 || ! $2 =~ ^[0-9]+$ ]]; then
  echo "usage: tools/fuzz.sh TARGET SECONDS [LIBFUZZER-OPTION...]" >&2
  echo "targets: $(cd "$top/tests/fuzz" && ls fuzz_*.c | sed 's/fuzz_\(.*\)\.c/\1/' | tr '\n' ' ')" >&2
  exit 2
fi
target=$1
seconds=$2
shift 2
if [[ ! -f $top/tests/fuzz/fuzz_$target.c ]]; then
  echo "fuzz: error: no fuzz target '$target' (tests/fuzz/fuzz_$target.c)" >&2
  exit 2
fi
if ! command -v clang >/dev/null; then
  echo "fuzz: error: clang is not installed (tools/setup.sh installs it)" >&2
  exit 1
fi
build=${SF_FUZZ_BUILD:-$top/build-fuzz}
if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=clang cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSF_SANITIZE=address,undefined \
    -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target "sf-fuzz-$target" sf-fuzz-wire-seed-files >/dev/null
corpus=$build/fuzz-corpus/$target
crashes=$build/fuzz-crashes/$target
mkdir -p "$corpus" "$crashes"
seeds=() # libFuzzer stops at a corpus directory that does not exist
for dir in "$build/fuzz-seeds/$target" "$top/tests/fuzz/corpus/$target"; do
  [[ -d $dir ]] && seeds+=("$dir")
done
echo "fuzz: $target for ${seconds}s; corpus $corpus, crashes in $crashes/"
exec "$build/bin/sf-fuzz-$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
  -artifact_prefix="$crashes/" -print_final_stats=1 "$@" "$corpus" ${seeds[@]+"${seeds[@]}"}
