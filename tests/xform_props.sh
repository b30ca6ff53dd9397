#!/usr/bin/env bash
# xform_props.sh BUILD_DIR SOURCE_DIR: properties of sf-xform on every example graph, swept over
# widths 1..4 and host sets (none, one, two, three hosts), the way libexpat sweeps chunk sizes.
#
# For every graph and every (width, hosts):
#   - the output validates against SOURCE_DIR/schema/graph.xsd (xmllint --schema);
#   - determinism: a second run gives the same bytes (XML, dot and --explain);
#   - idempotence: sf-xform on its own output, without -w and --hosts, gives the same document.
#     At width 1 the output has no region (see below), so there is nothing to mark it as already
#     parallelized and sf-xform would parallelize it at the default width: the re-run is given -w 1;
#   - `sf-xform --check` accepts the output;
#   - the --dot picture renders with `dot -Tsvg` with nothing on stderr; so does the --dot-input
#     picture, which must not depend on the width or the hosts;
#   - no temporary file is left next to the -o output.
# Width 1 keeps a graph without width attributes above 1 unchanged apart from hosts: no Split, no
# Merge, no region, channel or origin attribute, and the document equals the input (as `--dump
# check` writes it) once the <host> elements and host attributes are removed. (An operator's
# width="N" sets its region's width whatever -w says, so a graph with one keeps that region.)
# On bad input (malformed XML, an unknown stream) and on bad usage (a bad --hosts), sf-xform exits
# 1 or 2 and creates none of its output files, and an existing output file keeps its contents.
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: tests/xform_props.sh BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
xform="$build/bin/sf-xform"
xsd="$source_dir/schema/graph.xsd"
for tool in xmllint dot; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "xform_props: FAIL: '$tool' is not installed (needed to check sf-xform's outputs)" >&2
    exit 1
  fi
done
if [ ! -x "$xform" ]; then
  echo "xform_props: FAIL: '$xform' not found (build the sf-xform target)" >&2
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sf-props.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$source_dir"

failures=0
checks=0
fail() {
  echo "xform_props: FAIL: $*" >&2
  failures=$((failures + 1))
}
# check DESCRIPTION COMMAND...: runs the command, counts it, reports a failure with its stderr.
check() {
  local what=$1
  shift
  checks=$((checks + 1))
  if ! "$@" 2>"$tmp/check.err"; then
    fail "$what"
    sed 's/^/    /' "$tmp/check.err" >&2
    return 1
  fi
}
# renders FILE with dot -Tsvg and requires an empty stderr
renders() {
  dot -Tsvg "$1" -o /dev/null 2>"$tmp/dot.err" || { cat "$tmp/dot.err" >&2; return 1; }
  if [ -s "$tmp/dot.err" ]; then
    cat "$tmp/dot.err" >&2
    return 1
  fi
}
# the number of Split and Merge operators in FILE
count_split_merge() {
  grep -cE 'kind="(Split|Merge)"' "$1"
}
# FILE without <host> elements and host attributes, on stdout
strip_hosts() {
  sed -e '/^ *<host name=/d' -e 's/ host="[^"]*"//' "$1"
}

host_sets=("" "h0=127.0.0.1:7201" "h0=127.0.0.1:7201,h1=127.0.0.1:7202"
           "h0=127.0.0.1:7201,h1=127.0.0.1:7202,h2=127.0.0.1:7203")

for graph in graphs/*.xml; do
  name=$(basename "$graph" .xml)
  dir="$tmp/$name"
  mkdir -p "$dir"
  if ! "$xform" --dump check "$graph" >"$dir/input.xml" 2>"$dir/input.err"; then
    fail "$graph: sf-xform --dump check failed"
    cat "$dir/input.err" >&2
    continue
  fi
  first_dot_input=""
  for width in 1 2 3 4; do
    for hosts in "${host_sets[@]}"; do
      nh=0
      [ -n "$hosts" ] && nh=$(($(tr -cd ',' <<<"$hosts" | wc -c) + 1))
      case_name="$graph -w $width, $nh host(s)"
      args=(-w "$width")
      [ -n "$hosts" ] && args+=(--hosts "$hosts")
      run="$dir/w$width-h$nh"
      mkdir -p "$run"
      checks=$((checks + 1))
      if ! "$xform" "${args[@]}" --explain -o "$run/out.xml" --dot "$run/out.dot" --dot-input "$run/in.dot" \
          "$graph" 2>"$run/explain"; then
        fail "$case_name: sf-xform failed"
        cat "$run/explain" >&2
        continue
      fi
      check "$case_name: the output does not validate against graph.xsd" \
        xmllint --noout --schema "$xsd" "$run/out.xml"

      "$xform" "${args[@]}" --explain -o "$run/again.xml" --dot "$run/again.dot" --dot-input "$run/again-in.dot" \
        "$graph" 2>"$run/again.explain"
      for f in out.xml:again.xml out.dot:again.dot in.dot:again-in.dot explain:again.explain; do
        check "$case_name: two runs give different ${f%%:*} (not deterministic)" \
          diff -u "$run/${f%%:*}" "$run/${f##*:}"
      done

      rerun=()
      [ "$width" -eq 1 ] && rerun=(-w 1)
      if "$xform" "${rerun[@]}" "$run/out.xml" >"$run/twice.xml" 2>"$run/twice.err"; then
        check "$case_name: sf-xform on its own output changes it (not idempotent)" \
          diff -u "$run/out.xml" "$run/twice.xml"
      else
        fail "$case_name: sf-xform fails on its own output"
        cat "$run/twice.err" >&2
      fi
      check "$case_name: sf-xform --check rejects the output" "$xform" --check "$run/out.xml"
      check "$case_name: the --dot picture does not render cleanly" renders "$run/out.dot"
      if [ -z "$first_dot_input" ]; then
        first_dot_input="$run/in.dot"
        check "$graph: the --dot-input picture does not render cleanly" renders "$run/in.dot"
      else
        check "$case_name: the --dot-input picture depends on -w/--hosts" diff -u "$first_dot_input" "$run/in.dot"
      fi
      leftovers=$(find "$run" -name '*.tmp.*' | head -3)
      checks=$((checks + 1))
      [ -z "$leftovers" ] || fail "$case_name: temporary files left behind: $leftovers"

      if [ "$width" -eq 1 ] && ! grep -qE ' width="([2-9]|[1-9][0-9]+)"' "$dir/input.xml"; then
        n=$(count_split_merge "$run/out.xml")
        checks=$((checks + 1))
        [ "$n" -eq 0 ] || fail "$case_name: width 1 output has $n Split/Merge operators"
        checks=$((checks + 1))
        if grep -qE ' (region|channel|origin)="' "$run/out.xml"; then
          fail "$case_name: width 1 output carries region, channel or origin attributes"
        fi
        check "$case_name: width 1 changes the graph beyond hosts" \
          diff -u <(strip_hosts "$dir/input.xml") <(strip_hosts "$run/out.xml")
      fi
      checks=$((checks + 1))
      expect_hosts=$nh
      [ "$nh" -eq 0 ] && expect_hosts=1
      got_hosts=$(grep -c '^ *<host name=' "$run/out.xml")
      [ "$got_hosts" -eq "$expect_hosts" ] || fail "$case_name: $got_hosts <host> elements, expected $expect_hosts"
      checks=$((checks + 1))
      unplaced=$(grep '<operator ' "$run/out.xml" | grep -vc ' host="')
      [ "$unplaced" -eq 0 ] || fail "$case_name: $unplaced operators without a host attribute"
    done
  done

  # all or nothing: bad input or bad usage creates no output file and keeps an existing one
  bad="$dir/bad"
  mkdir -p "$bad"
  head -c 200 "$graph" >"$bad/truncated.xml"
  sed '0,/<input stream="[^"]*"/s//<input stream="NoSuchStream"/' "$graph" >"$bad/unknown.xml"
  for input in "$bad/truncated.xml" "$bad/unknown.xml"; do
    rm -f "$bad"/out.*
    checks=$((checks + 1))
    "$xform" -w 2 -o "$bad/out.xml" --dot "$bad/out.dot" --dot-input "$bad/out.in.dot" "$input" 2>/dev/null
    rc=$?
    [ "$rc" -eq 1 ] || fail "$graph: bad input '$(basename "$input")' exits with $rc, expected 1"
    created=$(find "$bad" -name 'out*' | head -3)
    checks=$((checks + 1))
    [ -z "$created" ] || fail "$graph: bad input '$(basename "$input")' created $created"
    echo old >"$bad/out.xml"
    "$xform" -w 2 -o "$bad/out.xml" "$input" 2>/dev/null
    checks=$((checks + 1))
    [ "$(cat "$bad/out.xml")" = old ] || fail "$graph: bad input '$(basename "$input")' overwrote an existing -o file"
    created=$(find "$bad" -name 'out.xml.*' | head -3)
    checks=$((checks + 1))
    [ -z "$created" ] || fail "$graph: bad input '$(basename "$input")' left $created"
  done
  rm -f "$bad"/out.*
  "$xform" -w 2 --hosts "h0=nowhere" -o "$bad/out.xml" --dot "$bad/out.dot" "$graph" 2>/dev/null
  rc=$?
  checks=$((checks + 1))
  [ "$rc" -eq 2 ] || fail "$graph: a bad --hosts exits with $rc, expected 2"
  created=$(find "$bad" -name 'out*' | head -3)
  checks=$((checks + 1))
  [ -z "$created" ] || fail "$graph: a bad --hosts created $created"
done

if [ "$failures" -ne 0 ]; then
  echo "xform_props: $failures of $checks checks failed" >&2
  exit 1
fi
echo "xform_props: $checks checks passed"
