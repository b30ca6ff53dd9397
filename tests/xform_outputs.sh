#!/usr/bin/env bash
# xform_outputs.sh: how sf-xform writes its files (-o, --dot, --dot-input): all or nothing, put in
# place by rename so an existing file is replaced whole, the mode creat(2) would give under the
# umask, devices written in place, exact messages when a file cannot be written, and nothing left
# behind (no temporary file) when the run fails after the outputs were rendered.
#
# usage: bash tests/xform_outputs.sh BUILD_DIR SOURCE_DIR
set -u
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
. "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform || exit 2
xform=$build/bin/sf-xform
sf_mktemp dir sf-xform-outputs || exit 2
trap sf_cleanup EXIT

failures=0
checks=0
fail() {
  echo "xform_outputs: FAIL: $*" >&2
  failures=$((failures + 1))
}
check() { # WHAT COMMAND...: counts a check, fails with WHAT when COMMAND fails
  local what=$1
  shift
  checks=$((checks + 1))
  "$@" || fail "$what"
}
no_leftovers() { [ -z "$(find "$dir" -name '*.tmp.*')" ]; }

graph=$src/graphs/vwap.xml
cd "$dir" || exit 2
"$xform" -w 2 "$graph" >expected.xml 2>/dev/null || { echo "xform_outputs: sf-xform fails on $graph" >&2; exit 1; }

# new files get 0666 less the umask; an existing file is replaced by a new one, whole
(umask 027 && "$xform" -w 2 -o out.xml --dot out.dot --dot-input in.dot "$graph")
check "-o under umask 027: mode $(stat -c %a out.xml 2>/dev/null), expected 640" [ "$(stat -c %a out.xml)" = 640 ]
check "--dot under umask 027: mode $(stat -c %a out.dot 2>/dev/null), expected 640" [ "$(stat -c %a out.dot)" = 640 ]
check "-o writes what stdout gets" cmp -s out.xml expected.xml
check "--dot-input wrote nothing" [ -s in.dot ]
echo old >out.xml
ln out.xml old-link.xml
(umask 022 && "$xform" -w 2 -o out.xml "$graph")
check "-o does not replace an existing file" cmp -s out.xml expected.xml
check "-o wrote into the existing file instead of replacing it" [ "$(cat old-link.xml)" = old ]
check "temporary files left behind: $(find "$dir" -name '*.tmp.*')" no_leftovers

# a device is written as it is
"$xform" -w 2 -o /dev/null "$graph"
check "-o /dev/null replaced the device" [ -c /dev/null ]

# a file that cannot be written: the message, exit 1, and none of the other outputs
rm -f out.*
"$xform" -w 2 --dot out.dot -o "$dir/nodir/out.xml" "$graph" 2>err.txt
rc=$?
check "-o into a missing directory exits with $rc, expected 1" [ "$rc" = 1 ]
check "-o into a missing directory says: $(cat err.txt)" \
  [ "$(cat err.txt)" = "sf-xform: error: cannot write '$dir/nodir/out.xml': No such file or directory" ]
check "-o into a missing directory still wrote --dot" [ ! -e out.dot ]

# the run fails after --dot-input was rendered (a pin to a host --hosts does not have): no file
sed 's|<operator name="out" kind="FileSink"|<operator name="out" kind="FileSink" host="far"|' "$graph" >pinned.xml
check "the test graph did not get its pin" grep -q 'host="far"' pinned.xml
"$xform" -w 2 --hosts h0=127.0.0.1:7000 --dot-input in2.dot -o out2.xml pinned.xml 2>err.txt
rc=$?
check "a failing placement exits with $rc, expected 1" [ "$rc" = 1 ]
check "a failing placement says: $(cat err.txt)" grep -q "placed on unknown host 'far'" err.txt
check "a failing placement created --dot-input" [ ! -e in2.dot ]
check "a failing placement created -o" [ ! -e out2.xml ]
check "temporary files left behind: $(find "$dir" -name '*.tmp.*')" no_leftovers

if [ "$failures" -ne 0 ]; then
  echo "xform_outputs: $failures of $checks checks failed" >&2
  exit 1
fi
echo "xform_outputs: $checks checks passed"
