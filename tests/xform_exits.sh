#!/usr/bin/env bash
# tests/xform_exits.sh BUILD_DIR SOURCE_DIR
#
# Every way sf-xform can end, on graphs/vwap.xml: each `--dump PASS` (check, regions, rewrite,
# place), `--check` alone and with `--dot-input`, `--time-passes` (the passes it names), a full run
# with -o and --dot (rendered side by side), a bad --hosts (usage, 2), an -o or a --dot that cannot
# be written (1: nothing is written), a graph that fails its checks (1) and a missing file (1). Each case must give its exit status and exactly the expected standard error (nothing
# on success). In the sanitizer build (SF_SANITIZE) this is where LeakSanitizer would report a
# graph not freed on one of these paths: its report lands on stderr and fails the case.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
trap sf_cleanup EXIT
sf_need_bins "$build" sf-xform || exit 1
sf_mktemp work sf-xform-exits || exit 1
cd "$src" || exit 1

failed=0
# expect NAME STATUS EXPECTED_STDERR ARGS...: runs sf-xform ARGS, compares status and stderr
expect() {
  local name=$1 status=$2 want=$3 rc
  shift 3
  "$build/bin/sf-xform" "$@" >"$work/out" 2>"$work/err"
  rc=$?
  if [[ $rc -ne $status ]]; then
    echo "FAIL  $name: exit status $rc, expected $status"
    sed 's/^/    | /' "$work/err" | head -n 30
    failed=1
  elif [[ $(cat "$work/err") != "$want" ]]; then
    echo "FAIL  $name: standard error differs"
    diff <(printf '%s\n' "$want") "$work/err" | head -n 30 | sed 's/^/    | /'
    failed=1
  else
    echo "OK    $name"
  fi
}

g=graphs/vwap.xml
for pass in check regions rewrite place; do
  expect "--dump $pass" 0 "" --dump "$pass" "$g"
done
expect "--check" 0 "" --check "$g"
expect "--check --dot-input" 0 "" --check --dot-input "$work/in.dot" "$g"
expect "-o and --dot" 0 "" -w 2 -o "$work/par.xml" --dot "$work/par.dot" "$g"
expect "a bad --hosts" 2 "sf-xform: host entry 'nohost' is not name=address:port
Try 'sf-xform --help' for more information." --hosts nohost "$g"
expect "-o in a missing directory" 1 \
  "sf-xform: error: cannot write '$work/none/par.xml': No such file or directory" -o "$work/none/par.xml" "$g"
expect "-o and --dot in missing directories (the first is said)" 1 \
  "sf-xform: error: cannot write '$work/none/par.xml': No such file or directory" \
  -o "$work/none/par.xml" --dot "$work/none/par.dot" "$g"
expect "--dot in a missing directory" 1 \
  "sf-xform: error: cannot write '$work/none/par.dot': No such file or directory" \
  -o "$work/par2.xml" --dot "$work/none/par.dot" "$g"
[[ ! -e "$work/par2.xml" ]] || { echo "FAIL  --dot in a missing directory: -o was written"; failed=1; }
expect "a graph failing its checks" 1 "$(cat tests/bad/param-missing.err)" --check tests/bad/param-missing.xml
# --time-passes: one line per pass, in the driver's order; the figures vary, so they are masked
"$build/bin/sf-xform" --time-passes -w 2 --explain --dot-input "$work/in.dot" --dot "$work/par.dot" \
  -o "$work/par.xml" "$g" >/dev/null 2>"$work/err"
want="parse check dot-input analyze regions explain rewrite place emit commit free"
got=$(sed -n 's/^sf-xform: time: \([a-z-]*\) *[0-9]*\.[0-9]\{3\} s wall *[0-9]*\.[0-9]\{3\} s cpu$/\1/p' "$work/err" | tr '\n' ' ')
if [[ "$got" != "$want " ]]; then
  echo "FAIL  --time-passes: passes '$got', expected '$want'"
  sed 's/^/    | /' "$work/err" | head -n 30
  failed=1
else
  echo "OK    --time-passes"
fi
expect "a missing file" 1 "missing.xml: error: cannot open file: No such file or directory" missing.xml
[[ $failed -eq 0 ]]
