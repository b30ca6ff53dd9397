#!/usr/bin/env bash
# tests/lets_lookups.sh BUILD_DIR SOURCE_DIR
#
# Graphs of tests/lets/ run end to end against outputs computed independently of sf by
# tests/lets/oracle.py (which also writes each case's input files). Every case runs the graph as it
# is (w1) and rewritten by `sf-xform -w 3` (w3): both must exit 0 silently and write exactly the
# expected files, byte for byte. Cases:
#   let:     let.xml: lets in a Functor (before and after its state variables), a Filter, a FlatMap
#            (read by count) and an Aggregate (inside aggregate functions).
#   columns: columns.xml: a FileSource with columns="subset" reading a file with three columns more
#            than its schema, in another order (one of them quoted with a comma).
# and runs that must fail with one exact line on standard error and exit 1:
#   columns-exact: the same file without columns="subset": its first extra column is named;
#   columns-missing: columns="subset" and a header without the column 'vol'.
# Every case prints one line, OK or FAIL; failures keep the work directory.
# Environment: SF_KEEP=1 keeps the work directory; SF_RUN_TIMEOUT (default 60 here).
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec || exit 1
command -v python3 >/dev/null || { echo "lets_lookups: python3 is needed for the oracle" >&2; exit 77; }
B=$build/bin
export SF_RUN_TIMEOUT=${SF_RUN_TIMEOUT:-60}
trap sf_cleanup EXIT
sf_mktemp work sf-lets-lookups || exit 1
SF_WORK=$work
SF_CASE_WIDTH=16

# expect_run CASE GRAPH ORACLE_CASE: the oracle's inputs, then GRAPH at w1 and w3, each into a fresh
# out/ compared with the oracle's expected/.
expect_run() {
  local c=$1 graph=$2 ocase=$3 d=$work/$1 w
  mkdir -p "$d"
  if ! python3 "$src/tests/lets/oracle.py" "$ocase" "$d" >"$d/oracle.log" 2>&1; then
    sf_bad "$c" "oracle.py $ocase failed" "$d/oracle.log"
    return
  fi
  for w in 1 3; do
    rm -rf "$d/out" && mkdir "$d/out"
    local g=$graph
    if [[ $w != 1 ]]; then
      g=$d/g$w.xml
      if ! "$B/sf-xform" -w "$w" "$graph" -o "$g" >"$d/xform.log" 2>&1; then
        sf_bad "$c w$w" "sf-xform -w $w failed" "$d/xform.log"
        continue
      fi
    fi
    sf_exec_in "$build" "$d" "$g" "$d/exec$w.log"
    local st=$?
    if [[ $st != 0 ]]; then
      sf_bad "$c w$w" "sf-exec exited $st, expected 0" "$d/exec$w.log"
    elif [[ -s $d/exec$w.log ]]; then
      sf_bad "$c w$w" "sf-exec printed something" "$d/exec$w.log"
    elif ! diffs=$(sf_compare_dirs "$d/expected" "$d/out"); then
      sf_bad "$c w$w" "outputs differ from the oracle's"
      echo "$diffs"
    else
      sf_ok "$c w$w" "$(cd "$d/expected" && wc -l * | tail -n 1 | awk '{print $1}') lines as the oracle's"
    fi
  done
}

# expect_fail CASE DIR GRAPH MESSAGE: sf-exec GRAPH in DIR exits 1 and prints exactly MESSAGE.
expect_fail() {
  local c=$1 d=$2 graph=$3 msg=$4
  mkdir -p "$d/out"
  sf_exec_in "$build" "$d" "$graph" "$d/exec.log"
  local st=$?
  if [[ $st != 1 ]]; then
    sf_bad "$c" "sf-exec exited $st, expected 1" "$d/exec.log"
  elif [[ $(cat "$d/exec.log") != "$msg" ]]; then
    sf_bad "$c" "the output is not exactly: $msg" "$d/exec.log"
  else
    sf_ok "$c" "exit 1: ${msg#sf-exec: error: }"
  fi
}

expect_run let "$src/tests/lets/let.xml" let
expect_run columns "$src/tests/lets/columns.xml" columns

d=$work/columns-exact
mkdir -p "$d" && cp "$work/columns/wide.csv" "$d/"
grep -v 'name="columns">subset' "$src/tests/lets/columns.xml" >"$d/g.xml"
expect_fail columns-exact "$d" "$d/g.xml" \
  "sf-exec: error: operator 'src': wide.csv:1: error: header column 'note' is not an attribute of schema 'T'"
d=$work/columns-missing
mkdir -p "$d" && printf 'note,sym,price\nx,a,1.5\n' >"$d/wide.csv"
expect_fail columns-missing "$d" "$src/tests/lets/columns.xml" \
  "sf-exec: error: operator 'src': wide.csv:1: error: header has no column 'vol'"

echo "lets_lookups: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
