#!/usr/bin/env bash
# tests/docs_diagrams.sh BUILD_DIR SOURCE_DIR
#
# The design document's diagrams (docs/diagrams/) stay what docs/design.md shows. For every
# docs/diagrams/NAME.dot:
#   render: `dot -Tsvg NAME.dot` succeeds and prints nothing on stderr (no warning);
#   svg:    docs/diagrams/NAME.svg is checked in beside it;
#   fresh:  that SVG shows what the source says now: its node and edge titles and its text lines
#           (<title> and <text> elements, in order) are those of a fresh rendering, so a source
#           edited without rendering it again fails;
#   linked: docs/design.md links diagrams/NAME.svg.
# And every diagrams/NAME.svg that docs/design.md links has its NAME.dot (no picture without its
# source). Skipped (77) when Graphviz's `dot` is not installed. BUILD_DIR is not used: nothing here
# needs a build.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
trap sf_cleanup EXIT
command -v dot >/dev/null 2>&1 || { echo "SKIP: no 'dot' command (apt-get install graphviz)"; exit 77; }
sf_mktemp work sf-docs-diagrams || exit 1

doc=$src/docs/design.md
dir=$src/docs/diagrams
[[ -f $doc ]] || { echo "FAIL: $doc is missing"; exit 1; }

# The <title> and <text> contents of an SVG written by dot, one per line, in document order.
svg_content() { grep -o '<title>[^<]*</title>\|<text[^>]*>[^<]*</text>' "$1" | sed 's/<text[^>]*>/<text>/'; }

failed=0
ok() { echo "OK: $1"; }
fail() { echo "FAIL: $1"; failed=1; }

shopt -s nullglob
sources=("$dir"/*.dot)
[[ ${#sources[@]} -gt 0 ]] || fail "no diagram sources in docs/diagrams"
for f in "${sources[@]}"; do
  name=$(basename "$f" .dot)
  if dot -Tsvg "$f" -o "$work/$name.svg" 2>"$work/$name.err" && [[ ! -s $work/$name.err ]]; then
    ok "$name: renders"
  else
    fail "$name: dot -Tsvg failed or warned: $(head -c 500 "$work/$name.err")"
    continue
  fi
  if [[ ! -f $dir/$name.svg ]]; then
    fail "$name: docs/diagrams/$name.svg is missing (dot -Tsvg $name.dot -o $name.svg)"
    continue
  fi
  ok "$name: has its svg"
  if diff <(svg_content "$work/$name.svg") <(svg_content "$dir/$name.svg") >"$work/$name.diff"; then
    ok "$name: svg is up to date"
  else
    fail "$name: docs/diagrams/$name.svg differs from a fresh rendering of $name.dot (render it again):"
    head -20 "$work/$name.diff"
  fi
  if grep -q "diagrams/$name\.svg" "$doc"; then
    ok "$name: linked from docs/design.md"
  else
    fail "$name: docs/design.md does not link diagrams/$name.svg"
  fi
done
for linked in $(grep -o 'diagrams/[A-Za-z0-9_-]*\.svg' "$doc" | sort -u); do
  name=$(basename "$linked" .svg)
  [[ -f $dir/$name.dot ]] || fail "docs/design.md links $linked, which has no docs/diagrams/$name.dot"
done

if [[ $failed -ne 0 ]]; then
  echo "docs_diagrams: FAILED"
  exit 1
fi
echo "docs_diagrams: all diagrams render, are up to date and are linked"
exit 0
