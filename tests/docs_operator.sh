#!/usr/bin/env bash
# tests/docs_operator.sh BUILD_DIR SOURCE_DIR [DOC]
#
# The complete example of docs/operators.md (or DOC) cannot drift from the code: this script takes
# it out of the document and runs it as a reader would. The document marks its pieces with an HTML
# comment on the line before a fenced block:
#   <!-- example: file NAME -->   the block is the file NAME (the operator's .c, the graph);
#   <!-- example: run -->         the block is shell commands, run with bash -e in the directory
#                                 of those files;
#   <!-- example: output -->      the block is what the run before it prints, stdout and stderr
#                                 together, exactly.
# Cases:
#   extract:  the document has at least one .c file, one .xml graph, and as many outputs as runs;
#   install:  `cmake --install BUILD_DIR --prefix TMP` puts streamfission-op.pc in TMP;
#   run-N:    run N, with TMP/bin first on PATH and PKG_CONFIG_PATH pointing into TMP (so the
#             operator is built with pkg-config against the installed op.h and run by the
#             installed sf-exec), prints exactly output N;
#   restore:  the graph's first Beacon slowed to 4 tuples a second (a `rate` param), run with
#             --checkpoint-dir and --checkpoint-interval 0.2, is killed (SIGKILL) once a
#             checkpoint exists and a second has passed, before it ends; sf-xform -w 2 of the slow
#             graph then restores from that checkpoint (two instances each given the one old
#             instance's snapshot) and writes the same sink file as the runs above. The sink file
#             is the graph's first <param name="file">.
# One line per case, OK or FAIL; failures keep the work directory. Environment: SF_KEEP=1,
# SF_RUN_TIMEOUT (seconds per command, default 120).
set -uo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR [DOC]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
doc=${3:-$src/docs/operators.md}
source "$src/tests/lib.sh"
trap sf_stop_all EXIT
trap 'exit 130' INT TERM
sf_need_bins "$build" sf-exec sf-xform || exit 1
for tool in cmake pkg-config cc; do
  command -v "$tool" >/dev/null || { echo "FAIL  '$tool' is not installed"; exit 1; }
done
[[ -f $doc ]] || { echo "FAIL  no document $doc"; exit 1; }
sf_mktemp work sf-docop || exit 1
SF_WORK=$work
SF_CASE_WIDTH=9
run_timeout=${SF_RUN_TIMEOUT:-120}
prefix=$work/prefix
ex=$work/example
mkdir -p "$ex" "$work/doc"

finish() {
  echo "docs_operator: $SF_PASSED passed, $SF_FAILED failed"
  [[ $SF_FAILED -eq 0 ]]
  exit
}

# ---- extract: the marked blocks into $work/doc (file.NAME, run.N, output.N) ----
if ! awk -v dir="$work/doc" '
    function fail(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg; bad = 1; exit 1 }
    want != "" && !inside {
      if ($0 !~ /^```/) fail("a fenced block must follow the example marker")
      inside = 1; out = dir "/" want; printf "" >out; next
    }
    inside {
      if ($0 == "```") { close(out); inside = 0; want = ""; next }
      print >out; next
    }
    /^<!-- example: file [A-Za-z0-9_.-]+ -->$/ { want = "file." $4; next }
    /^<!-- example: run -->$/ { want = "run." ++runs; next }
    /^<!-- example: output -->$/ { want = "output." ++outputs; next }
    /^<!-- example:/ { fail("unknown example marker: " $0) }
    END { if (!bad && (inside || want != "")) fail("the document ends inside an example block") }
  ' "$doc" >"$work/extract.log" 2>&1; then
  sf_bad extract "the example blocks of $doc do not read" "$work/extract.log"
  finish
fi
nruns=$(find "$work/doc" -name 'run.*' | wc -l)
nout=$(find "$work/doc" -name 'output.*' | wc -l)
for f in "$work"/doc/file.*; do
  [[ -e $f ]] && cp "$f" "$ex/${f##*/file.}"
done
graph=$(cd "$ex" && ls ./*.xml 2>/dev/null | head -n 1)
graph=${graph#./}
if ! ls "$ex"/*.c >/dev/null 2>&1 || [[ -z $graph ]]; then
  sf_bad extract "the document's example has no .c file or no .xml graph: $(ls "$ex" | tr '\n' ' ')"
  finish
elif [[ $nruns -eq 0 || $nruns -ne $nout ]]; then
  sf_bad extract "the document's example has $nruns runs and $nout outputs (one output after each run)"
  finish
fi
sf_ok extract "$(ls "$ex" | tr '\n' ' ')and $nruns runs with their outputs from $(basename "$doc")"

# ---- install ----
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { sf_bad install "cmake --install failed" "$work/install.log"; finish; }
pc=$(find "$prefix" -name streamfission-op.pc | head -n 1)
[[ -n $pc && -x $prefix/bin/sf-exec ]] ||
  { sf_bad install "the prefix has no streamfission-op.pc or bin/sf-exec" "$work/install.log"; finish; }
sf_ok install "into a fresh prefix: $(realpath --relative-to="$prefix" "$pc")"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
PATH=$prefix/bin:$PATH

# ---- the runs, each compared with the output the document shows ----
for ((i = 1; i <= nruns; i++)); do
  (cd "$ex" && timeout -k 5 "$run_timeout" bash -e "$work/doc/run.$i") >"$work/got.$i" 2>&1
  rc=$?
  if [[ $rc -ne 0 ]]; then
    sf_bad "run-$i" "the commands of run $i exited $rc" "$work/doc/run.$i" "$work/got.$i"
  elif ! cmp -s "$work/doc/output.$i" "$work/got.$i"; then
    sf_bad "run-$i" "the output differs from the document's (- document, + actual)"
    diff -u "$work/doc/output.$i" "$work/got.$i" | tail -n +3 | head -n 30 | sed 's/^/    | /'
  else
    sf_ok "run-$i" "$(head -n 1 "$work/doc/run.$i" | cut -c 1-60)...: $(wc -l <"$work/got.$i") lines as shown"
  fi
done
[[ $SF_FAILED -eq 0 ]] || finish

# ---- restore: killed mid-run with checkpoints, restored at width 2 ----
sink=$(sed -n 's|.*<param name="file">\([^<]*\)</param>.*|\1|p' "$ex/$graph" | head -n 1)
if [[ -z $sink || ! -f $ex/$sink ]]; then
  sf_bad restore "no sink file ('$sink') of $graph after the runs"
  finish
fi
cp "$ex/$sink" "$work/reference"
rm -rf "$ex/ck" "$ex/$(dirname "$sink")" && mkdir -p "$ex/$(dirname "$sink")"
awk '!done && /<param name="count">/ { print; print "    <param name=\"rate\">4</param>"; done = 1; next } { print }' \
  "$ex/$graph" >"$ex/slow.xml"
sf-xform -w 2 "$ex/slow.xml" -o "$ex/slow-w2.xml" >"$work/xform.log" 2>&1 ||
  { sf_bad restore "sf-xform -w 2 of the slowed graph failed" "$work/xform.log"; finish; }
# sf-exec itself is the background job (exec, no timeout in between): the kill must reach it
(cd "$ex" && exec sf-exec --checkpoint-dir ck --checkpoint-interval 0.2 slow.xml) >"$work/killed.log" 2>&1 &
pid=$!
t0=$(sf_now)
for ((k = 0; k < 200; k++)); do # up to 20 s for a checkpoint and a second of running
  sleep 0.1
  kill -0 "$pid" 2>/dev/null || break
  if [[ -n $(find "$ex/ck" -maxdepth 1 -name 'ckpt-*' 2>/dev/null) ]] &&
     awk -v a="$t0" -v b="$(sf_now)" 'BEGIN { exit !(b - a >= 1.0) }'; then
    break
  fi
done
killed_after=$(sf_elapsed "$t0" "$(sf_now)")
{ kill -KILL "$pid"; wait "$pid"; st=$?; } 2>/dev/null # (no "Killed" line from bash)
if [[ $st -ne 137 ]]; then
  sf_bad restore "the slowed run ended (status $st) before it could be killed" "$work/killed.log"
  finish
fi
(cd "$ex" && timeout -k 5 "$run_timeout" sf-exec --checkpoint-dir ck --restore slow-w2.xml) >"$work/restore.log" 2>&1
rc=$?
if [[ $rc -ne 0 ]]; then
  sf_bad restore "sf-exec --restore exited $rc" "$work/restore.log"
elif ! grep -q "^sf-exec: restored checkpoint [0-9]* from 'ck'$" "$work/restore.log"; then
  sf_bad restore "the restart restored no checkpoint" "$work/restore.log" "$work/killed.log"
elif ! cmp -s "$work/reference" "$ex/$sink"; then
  sf_bad restore "$sink after the restore at width 2 differs from the uninterrupted run's (- expected, + actual)"
  diff -u "$work/reference" "$ex/$sink" | tail -n +3 | head -n 20 | sed 's/^/    | /'
else
  sf_ok restore "killed after $killed_after s, $(grep -o 'restored checkpoint [0-9]*' "$work/restore.log") at width 2: $sink as uninterrupted"
fi
finish
