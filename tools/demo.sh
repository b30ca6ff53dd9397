#!/usr/bin/env bash
# tools/demo.sh [GRAPH]: sets up (packages, CMake build), then shows StreamFission on an example
# graph (default graphs/vwap.xml): validates it and draws it, rewrites it for three executors with
# --explain, draws the parallel graph, runs the original in one process and the parallel graph on
# three executors (tools/sf-launch, loopback ports), and checks the outputs are byte-identical.
# Everything lands in demo-out/ (pictures as SVG, the rewritten graph, both runs' output files).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tools/setup.sh"
build=${SF_BUILD:-$top/build}
graph=${1:-$top/graphs/vwap.xml}
graph=$(cd "$(dirname "$graph")" && pwd)/$(basename "$graph")
name=$(basename "$graph" .xml)
out=$top/demo-out
rm -rf "$out"
mkdir -p "$out"
xform=$build/bin/sf-xform
hosts=h0=127.0.0.1:7201,h1=127.0.0.1:7202,h2=127.0.0.1:7203

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "validate $name and draw it"
"$xform" --check --dot-input "$out/$name.input.dot" "$graph"
dot -Tsvg "$out/$name.input.dot" -o "$out/$name.input.svg"
echo "ok: $graph is valid; picture: $out/$name.input.svg"

step "parallelize for three executors (sf-xform -w 3 --hosts ... --explain)"
"$xform" -w 3 --hosts "$hosts" --explain --dot "$out/$name.parallel.dot" -o "$out/$name.parallel.xml" "$graph"
dot -Tsvg "$out/$name.parallel.dot" -o "$out/$name.parallel.svg"
echo "rewritten graph: $out/$name.parallel.xml; picture: $out/$name.parallel.svg"

run_dir() { # a working directory with the example data and an empty out/
  mkdir -p "$1/out"
  cp -r "$top/graphs/data" "$1/"
}

step "run the original graph in one process (sf-exec)"
run_dir "$out/sequential"
start=$(date +%s%N)
(cd "$out/sequential" && "$build/bin/sf-exec" "$graph")
echo "done in $(( ($(date +%s%N) - start) / 1000000 )) ms"

step "run the parallel graph on three executors (tools/sf-launch)"
run_dir "$out/parallel"
start=$(date +%s%N)
"$top/tools/sf-launch" --stats --workdir "$out/parallel" --exec "$build/bin/sf-exec" "$out/$name.parallel.xml"
echo "done in $(( ($(date +%s%N) - start) / 1000000 )) ms"

step "compare the outputs byte for byte"
status=0
for f in "$out/sequential/out/"*; do
  b=$(basename "$f")
  if cmp -s "$f" "$out/parallel/out/$b"; then
    echo "identical: out/$b ($(wc -l < "$f") lines)"
  else
    echo "DIFFERENT: out/$b"; status=1
  fi
done
exit $status
