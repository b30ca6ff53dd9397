#!/usr/bin/env bash
# golden.sh BUILD_DIR SOURCE_DIR: the rewrite of every example graph, byte for byte.
#
# For every graphs/NAME.xml, runs from SOURCE_DIR
#   sf-xform -w 3 --hosts h0=127.0.0.1:7101,h1=127.0.0.1:7102,h2=127.0.0.1:7103 --explain \
#            -o OUT.xml --dot OUT.dot graphs/NAME.xml 2>OUT.explain
# and compares OUT.xml, OUT.dot and OUT.explain with tests/golden/NAME.{xml,dot,explain}, printing a
# unified diff for each difference. A graph without golden files, or golden files without a graph,
# are failures too. After a deliberate change, tools/regen-golden.sh BUILD_DIR rewrites the goldens.
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: tests/golden.sh BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
xform="$build/bin/sf-xform"
hosts="h0=127.0.0.1:7101,h1=127.0.0.1:7102,h2=127.0.0.1:7103"
if [ ! -x "$xform" ]; then
  echo "golden: FAIL: '$xform' not found (build the sf-xform target)" >&2
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sf-golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$source_dir"

failures=0
checked=0
fail() {
  echo "golden: FAIL: $*" >&2
  failures=$((failures + 1))
}

for graph in graphs/*.xml; do
  name=$(basename "$graph" .xml)
  out="$tmp/$name"
  if ! "$xform" -w 3 --hosts "$hosts" --explain -o "$out.xml" --dot "$out.dot" "$graph" 2>"$out.explain"; then
    fail "sf-xform failed on '$graph':"
    cat "$out.explain" >&2
    continue
  fi
  for ext in xml dot explain; do
    golden="tests/golden/$name.$ext"
    checked=$((checked + 1))
    if [ ! -f "$golden" ]; then
      fail "'$golden' is missing (tools/regen-golden.sh $build creates it)"
    elif ! cmp -s "$golden" "$out.$ext"; then
      fail "'$graph' no longer gives '$golden' (- golden, + now):"
      diff -u --label "$golden" --label "sf-xform output" "$golden" "$out.$ext" >&2
    fi
  done
done

for golden in tests/golden/*; do
  [ -e "$golden" ] || continue
  base=$(basename "$golden")
  name=${base%.*}
  case "$base" in
    *.xml | *.dot | *.explain) [ -f "graphs/$name.xml" ] || fail "'$golden' has no graph 'graphs/$name.xml'" ;;
    *) fail "unexpected file '$golden' (goldens are NAME.xml, NAME.dot, NAME.explain)" ;;
  esac
done

if [ "$failures" -ne 0 ]; then
  echo "golden: $failures failure(s) in $checked comparisons" >&2
  exit 1
fi
echo "golden: $checked files match"
