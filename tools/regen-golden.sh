#!/usr/bin/env bash
# regen-golden.sh BUILD_DIR: rewrites tests/golden/ from the current sf-xform.
#
# For every example graph graphs/NAME.xml it writes, from the repository root,
#   tests/golden/NAME.xml      the parallel graph at width 3 on three hosts
#   tests/golden/NAME.dot      its Graphviz picture (--dot)
#   tests/golden/NAME.explain  the --explain report (stderr of the same run)
# with exactly the command tests/golden.sh checks:
#   sf-xform -w 3 --hosts h0=127.0.0.1:7101,h1=127.0.0.1:7102,h2=127.0.0.1:7103 --explain \
#            -o tests/golden/NAME.xml --dot tests/golden/NAME.dot graphs/NAME.xml 2>tests/golden/NAME.explain
# and removes golden files of graphs that no longer exist. It also renders the README's picture,
# docs/img/vwap-parallel.svg, from tests/golden/vwap.dot (when Graphviz's dot is installed).
#
# Use it after a deliberate change to the transformer, the emitters or an example graph:
#   cmake --build BUILD_DIR --target sf-xform && tools/regen-golden.sh BUILD_DIR && git diff tests/golden
# then read the diff: every changed line is a change users will see. Never regenerate to make a
# failing tests/golden.sh pass without understanding why it failed.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: tools/regen-golden.sh BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
xform="$build/bin/sf-xform"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hosts="h0=127.0.0.1:7101,h1=127.0.0.1:7102,h2=127.0.0.1:7103"

if [ ! -x "$xform" ]; then
  echo "regen-golden: error: '$xform' not found; build it first (cmake --build $1 --target sf-xform)" >&2
  exit 1
fi

cd "$root"
mkdir -p tests/golden
for graph in graphs/*.xml; do
  name=$(basename "$graph" .xml)
  if ! "$xform" -w 3 --hosts "$hosts" --explain -o "tests/golden/$name.xml" --dot "tests/golden/$name.dot" \
      "$graph" 2>"tests/golden/$name.explain"; then
    echo "regen-golden: error: sf-xform failed on '$graph':" >&2
    cat "tests/golden/$name.explain" >&2
    exit 1
  fi
  chmod 644 "tests/golden/$name.xml" "tests/golden/$name.dot" "tests/golden/$name.explain"
  echo "regenerated tests/golden/$name.{xml,dot,explain}"
done
for golden in tests/golden/*.xml tests/golden/*.dot tests/golden/*.explain; do
  [ -e "$golden" ] || continue
  name=$(basename "$golden"); name=${name%.*}
  if [ ! -e "graphs/$name.xml" ]; then
    rm -f "$golden"
    echo "removed $golden (no graphs/$name.xml)"
  fi
done
if command -v dot >/dev/null; then
  dot -Tsvg tests/golden/vwap.dot -o docs/img/vwap-parallel.svg
  echo "rendered docs/img/vwap-parallel.svg"
fi
