#!/usr/bin/env bash
# bad_inputs.sh: the bad-input corpus. Every tests/bad/NAME.xml is a graph sf-xform must refuse;
# tests/bad/NAME.err holds the exact standard error of
#     sf-xform --check tests/bad/NAME.xml
# run from the source directory. Each file must give exit status 1, that stderr byte for byte and
# nothing on stdout. A few command-line cases are checked as well (missing file, usage error,
# nothing written by -o on bad input).
#
# usage: bash tests/bad_inputs.sh BUILD_DIR SOURCE_DIR
#        bash tests/bad_inputs.sh --regen BUILD_DIR SOURCE_DIR
# --regen rewrites every .err from what sf-xform prints now (and creates the missing ones); read
# `git diff tests/bad` afterwards: every message must still be right, clear and point at the
# right line before it is committed.
set -u

regen=0
if [ "${1:-}" = "--regen" ]; then
  regen=1
  shift
fi
if [ $# -ne 2 ]; then
  echo "usage: bash $0 [--regen] BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
xform="$build/bin/sf-xform"
if [ ! -x "$xform" ]; then
  echo "bad_inputs: $xform is missing (build the sf-xform target)" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
checked=0

fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

# Runs sf-xform from the source directory; leaves stdout, stderr and the status in $tmp.
run() {
  (cd "$src" && "$xform" "$@") >"$tmp/out" 2>"$tmp/err"
  echo $? >"$tmp/status"
}

# expect_run WHAT STATUS EXPECTED_STDERR_FILE ARGS...: the exact result of one run.
expect_run() {
  local what=$1 status=$2 expected=$3
  shift 3
  run "$@"
  local got
  got=$(cat "$tmp/status")
  checked=$((checked + 1))
  if [ "$got" != "$status" ]; then
    fail "$what: exit status $got, expected $status"
  fi
  if [ -s "$tmp/out" ]; then
    fail "$what: unexpected output on stdout:"
    head -c 2000 "$tmp/out"
  fi
  if ! cmp -s "$expected" "$tmp/err"; then
    fail "$what: stderr differs from ${expected#"$src"/}"
    diff -u --label expected --label actual "$expected" "$tmp/err"
  fi
}

shopt -s nullglob
corpus=("$src"/tests/bad/*.xml)
if [ ${#corpus[@]} -eq 0 ]; then
  echo "bad_inputs: no files in $src/tests/bad" >&2
  exit 1
fi

for xml in "${corpus[@]}"; do
  rel=${xml#"$src"/}
  err=${xml%.xml}.err
  if [ $regen -eq 1 ]; then
    run --check "$rel"
    cp "$tmp/err" "$err"
    echo "regenerated ${err#"$src"/} (exit $(cat "$tmp/status"))"
    continue
  fi
  if [ ! -f "$err" ]; then
    fail "$rel: no expected stderr ${err#"$src"/}"
    continue
  fi
  expect_run "$rel" 1 "$err" --check "$rel"
done
for err in "$src"/tests/bad/*.err; do
  [ -f "${err%.err}.xml" ] || fail "${err#"$src"/}: no matching .xml"
done
[ $regen -eq 1 ] && exit 0

# A missing file: a plain message without a line, exit 1.
printf '%s\n' "tests/bad/nope.xml: error: cannot open file: No such file or directory" >"$tmp/nope.err"
expect_run "missing file" 1 "$tmp/nope.err" --check tests/bad/nope.xml

# Host pins are checked against the hosts the run would use: --hosts when given, else the graph's,
# else the one default host 'local'.
nohosts=tests/bad/ref-unknown-host-no-hosts.xml
printf '%s\n' "$nohosts:8: error: operator 'src' is placed on unknown host 'local'" >"$tmp/pins.err"
expect_run "--hosts without 'local'" 1 "$tmp/pins.err" --check --hosts h1=127.0.0.1:7471 "$nohosts"
: >"$tmp/empty.err"
expect_run "--hosts naming every pin" 0 "$tmp/empty.err" --check --hosts local=127.0.0.1:7470,h1=127.0.0.1:7471 \
  "$nohosts"

# sf-exec runs the same checks before starting anything: the same diagnostics, exit 1, and no file
# written (it runs in a directory of its own holding only the graph).
for rel in tests/bad/custom-too-many-ports.xml tests/bad/filesink-same-file.xml \
  tests/bad/file-names-directory.xml tests/bad/colocate-pinned-apart.xml tests/bad/expr-too-deep.xml \
  tests/bad/param-window-too-large.xml tests/bad/param-numbers-in-rewritten.xml; do
  rm -rf "$tmp/run" && mkdir -p "$tmp/run/tests/bad" && cp "$src/$rel" "$tmp/run/tests/bad/"
  (cd "$tmp/run" && SF_TOKEN=t "$build/bin/sf-exec" "$rel") >"$tmp/out" 2>"$tmp/err" </dev/null
  status=$?
  checked=$((checked + 1))
  [ $status -eq 1 ] || fail "sf-exec $rel: exit status $status, expected 1"
  cmp -s "$src/${rel%.xml}.err" "$tmp/err" || {
    fail "sf-exec $rel: stderr differs from the --check diagnostics"
    diff -u --label expected --label actual "$src/${rel%.xml}.err" "$tmp/err"
  }
  made=$(cd "$tmp/run" && find . -mindepth 1 ! -path ./tests ! -path ./tests/bad ! -path "./$rel")
  [ -z "$made" ] || fail "sf-exec $rel: wrote $made"
done

# Expressions far deeper than the limit (tests/bad/expr-too-deep.xml is one level over it), too
# large to check in: a chain of 200,000 terms and 200,000 nested parentheses. Both tools refuse them
# with the same diagnostic instead of running out of stack.
too_deep="error: expression too deep (more than 1000 nested operators, calls or parentheses)"
for kind in chain parens; do
  deep="$tmp/deep-$kind.xml"
  awk -v kind=$kind '/<set attr="k">k \+/ {
      printf "    <set attr=\"k\">"
      if (kind == "chain") { printf "k"; for (i = 1; i < 200000; i++) printf " + k" }
      else { for (i = 0; i < 200000; i++) printf "("; printf "k"; for (i = 0; i < 200000; i++) printf ")" }
      print "</set>"; next }
    { print }' "$src/tests/bad/expr-too-deep.xml" >"$deep"
  col=4017
  [ $kind = parens ] && col=$((18 + 2002))
  printf '%s\n' "$deep:16:$col: $too_deep" >"$tmp/deep.err"
  expect_run "sf-xform: a $kind 200,000 deep" 1 "$tmp/deep.err" --check "$deep"
  (cd "$tmp" && SF_TOKEN=t "$build/bin/sf-exec" "$deep") >"$tmp/out" 2>"$tmp/err" </dev/null
  status=$?
  checked=$((checked + 1))
  [ $status -eq 1 ] || fail "sf-exec: a $kind 200,000 deep: exit status $status, expected 1"
  cmp -s "$tmp/deep.err" "$tmp/err" || {
    fail "sf-exec: a $kind 200,000 deep: stderr differs"
    diff -u --label expected --label actual "$tmp/deep.err" "$tmp/err" | cut -c1-300
  }
  [ -e "$tmp/out.csv" ] && fail "sf-exec: a $kind 200,000 deep: wrote out.csv"
done

# A width of 0 is bad usage (exit 2) with a message, not bad input.
run -w 0 graphs/vwap.xml
checked=$((checked + 1))
[ "$(cat "$tmp/status")" = 2 ] || fail "-w 0: exit status $(cat "$tmp/status"), expected 2"
grep -q "width" "$tmp/err" || fail "-w 0: the message does not mention the width: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "-w 0: unexpected output on stdout"

# -o on a bad input: the errors, exit 1, and no output file (not even an empty one).
out="$tmp/never.xml"
for rel in tests/bad/cycle-two-operators.xml tests/bad/xml-unclosed-tag.xml; do
  expect_run "-o with $rel" 1 "$src/${rel%.xml}.err" -o "$out" "$rel"
  [ -e "$out" ] && fail "-o with $rel: $out was created"
  leftovers=("$tmp"/never.xml*)
  [ ${#leftovers[@]} -eq 0 ] || fail "-o with $rel: left ${leftovers[*]}"
done

if [ $failed -ne 0 ]; then
  echo "bad_inputs: $failed of $checked checks failed"
  exit 1
fi
echo "bad_inputs: all $checked checks passed (${#corpus[@]} corpus files)"
