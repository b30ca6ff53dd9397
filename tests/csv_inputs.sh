#!/usr/bin/env bash
# tests/csv_inputs.sh BUILD_DIR SOURCE_DIR
#
# The edges of a FileSource's CSV input, through whole runs of sf-exec (and one of sf-launch). The
# graph (written here) is FileSource in.csv -> Functor (v * 2 + 1) -> FileSink out/x.csv, run as it
# is (w1) and rewritten by sf-xform -w 2 (w2: the Functor in two channels). Cases:
#   truncated: the file ends inside its last row (no line end): exit 1, the exact error line naming
#          the file and the line, and nothing in out/ (neither x.csv nor a temporary file);
#   accept:  the same file with --accept-unterminated: exit 0, the last row read as it is;
#   complete: the same rows ending with LF, and with CRLF: exit 0, the same output;
#   header-cut: a file of a header without its line end: the same error, on line 1;
#   quote-cut: a file that ends inside a quoted field: the reader's own error, nothing in out/;
#   empty:   a file of zero bytes: the error it always gave; header-only: a header and no row: exit 0
#          and a file of the header;
#   fifo-rows: a FIFO whose writer stops in the middle of a row for 0.5 s, then ends it and closes:
#          the row is waited for, exit 0;
#   fifo-cut: a FIFO whose writer closes in the middle of a row: the truncation error;
#   launch:  sf-launch on two hosts (the source on h0, the sink on h1): the error on the truncated
#          file, and --accept-unterminated passed on to the executors.
# Every case prints one line, OK or FAIL with what was expected; failures keep the work directory.
# Environment: SF_KEEP=1 keeps the work directory.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec || exit 1
B=$build/bin

trap sf_stop_all EXIT
trap 'exit 130' INT TERM

sf_mktemp work sf-csv-inputs || exit 1

SF_WORK=$work
SF_CASE_WIDTH=18

# make_graph DIR WIDTH [HOSTS]: DIR/g.xml reading DIR/in.csv (relative: runs happen in DIR) into
# DIR/out/x.csv; HOSTS (h0=ADDR,h1=ADDR) puts the source on h0 and the rest on h1.
make_graph() {
  local dir=$1 width=$2 hosts=${3:-} src_host="" host=""
  mkdir -p "$dir/out"
  [[ -n $hosts ]] && src_host=' host="h0"' host=' host="h1"'
  cat >"$dir/seq.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="csv_inputs">
  <schema name="T">
    <attr name="id" type="int"/>
    <attr name="v"  type="int"/>
  </schema>
  <operator name="src" kind="FileSource"$src_host>
    <output stream="Rows" schema="T"/>
    <param name="file">in.csv</param>
  </operator>
  <operator name="calc" kind="Functor"$host>
    <input stream="Rows"/>
    <output stream="Calced" schema="T"/>
    <set attr="v">v * 2 + 1</set>
  </operator>
  <operator name="out" kind="FileSink"$host>
    <input stream="Calced"/>
    <param name="file">out/x.csv</param>
  </operator>
</graph>
EOF
  local args=(-w "$width")
  [[ -n $hosts ]] && args+=(--hosts "$hosts")
  if [[ $width == 1 && -z $hosts ]]; then
    cp "$dir/seq.xml" "$dir/g.xml"
  elif ! "$B/sf-xform" "${args[@]}" "$dir/seq.xml" -o "$dir/g.xml" >"$dir/xform.log" 2>&1; then
    echo "error: sf-xform failed on the test graph:" >&2
    cat "$dir/xform.log" >&2
    exit 1
  fi
}

# run DIR [ARGS...]: sf-exec ARGS g.xml in DIR (time limit 30 s); log DIR/exec.log, status in ST.
run() {
  local dir=$1
  shift
  (cd "$dir" && timeout -k 5 30 "$B/sf-exec" "$@" g.xml) >"$dir/exec.log" 2>&1
  ST=$?
}

# out_files DIR: the files in DIR/out, hidden ones included, on one line (empty when none)
out_files() { find "$1/out" -mindepth 1 -printf '%P ' 2>/dev/null; }

# expect_error CASE DIR MESSAGE WHAT: the run exited 1, printed exactly MESSAGE (one line, nothing
# else), and left nothing in DIR/out.
expect_error() {
  local c=$1 dir=$2 msg=$3 what=$4
  if [[ $ST != 1 ]]; then
    sf_bad "$c" "$what: exit status $ST, expected 1" "$dir/exec.log"
  elif [[ $(cat "$dir/exec.log") != "$msg" ]]; then
    sf_bad "$c" "$what: the output is not exactly '$msg'" "$dir/exec.log"
  elif [[ -n $(out_files "$dir") ]]; then
    sf_bad "$c" "$what: files left in out/: $(out_files "$dir")" "$dir/exec.log"
  else
    sf_ok "$c" "$what: exit 1, nothing written"
  fi
}

# expect_output CASE DIR EXPECTED_FILE WHAT: the run exited 0 silently and out/ holds exactly x.csv,
# equal to EXPECTED_FILE byte for byte.
expect_output() {
  local c=$1 dir=$2 want=$3 what=$4
  if [[ $ST != 0 ]]; then
    sf_bad "$c" "$what: exit status $ST, expected 0" "$dir/exec.log"
  elif [[ -s $dir/exec.log ]]; then
    sf_bad "$c" "$what: sf-exec printed something" "$dir/exec.log"
  elif [[ $(out_files "$dir") != "x.csv " ]]; then
    sf_bad "$c" "$what: out/ holds '$(out_files "$dir")', expected x.csv alone" "$dir/exec.log"
  elif ! cmp -s "$want" "$dir/out/x.csv"; then
    sf_bad "$c" "$what: out/x.csv differs from the expected rows" "$want" "$dir/out/x.csv"
  else
    sf_ok "$c" "$what: exit 0, $(wc -l <"$want") lines"
  fi
}

# The input: a header and 1000 rows, the last one cut short ("1000,4" of "1000,456"): its line is 1001.
rows=$work/rows.csv
{
  echo "id,v"
  for ((i = 1; i < 1000; i++)); do echo "$i,$((i * 7 % 1000))"; done
} >"$rows"
cut_file=$work/cut.csv
{ cat "$rows"; printf '1000,4'; } >"$cut_file"
want_cut=$work/want-cut.csv # what the cut file gives when accepted: the last v is 4
awk -F, 'NR == 1 { print; next } { print $1 "," $2 * 2 + 1 }' "$cut_file" >"$want_cut"
truncated="sf-exec: error: operator 'src': in.csv:1001: error: last row has no line end (truncated file? --accept-unterminated reads it)"

for width in 1 2; do
  d=$work/truncated-w$width
  make_graph "$d" "$width"
  cp "$cut_file" "$d/in.csv"
  run "$d"
  expect_error "truncated-w$width" "$d" "$truncated" "a file cut inside its last row"

  d=$work/accept-w$width
  make_graph "$d" "$width"
  cp "$cut_file" "$d/in.csv"
  run "$d" --accept-unterminated
  expect_output "accept-w$width" "$d" "$want_cut" "the cut file with --accept-unterminated"

  d=$work/complete-w$width
  make_graph "$d" "$width"
  { cat "$cut_file"; echo; } >"$d/in.csv"
  run "$d"
  expect_output "complete-w$width" "$d" "$want_cut" "the same rows, the last with its LF"

  d=$work/crlf-w$width
  make_graph "$d" "$width"
  { sed 's/$/\r/' "$cut_file"; echo; } >"$d/in.csv" # every line, the last included, ends with CRLF
  run "$d"
  expect_output "crlf-w$width" "$d" "$want_cut" "the same rows ending with CRLF"
done

d=$work/header-cut
make_graph "$d" 1
printf 'id,v' >"$d/in.csv"
run "$d"
expect_error header-cut "$d" \
  "sf-exec: error: operator 'src': in.csv:1: error: last row has no line end (truncated file? --accept-unterminated reads it)" \
  "a header without its line end"

d=$work/quote-cut
make_graph "$d" 1
printf 'id,v\n1,2\n3,"4' >"$d/in.csv"
run "$d" --accept-unterminated # a field still quoted at the end is never accepted
expect_error quote-cut "$d" \
  "sf-exec: error: operator 'src': in.csv:3: error: quoted field is not closed before the end of the file" \
  "a file cut inside a quoted field, with --accept-unterminated"

d=$work/empty
make_graph "$d" 1
: >"$d/in.csv"
run "$d"
expect_error empty "$d" "sf-exec: error: operator 'src': in.csv:1: error: the file is empty (expected a header row)" \
  "a file of zero bytes"

d=$work/header-only
make_graph "$d" 1
echo "id,v" >"$d/in.csv"
run "$d"
expect_output header-only "$d" "$d/in.csv" "a header and no row"

# A FIFO: its end is when the writer closes it; a row the writer has only begun is waited for.
for width in 1 2; do
  d=$work/fifo-rows-w$width
  make_graph "$d" "$width"
  mkfifo "$d/in.csv"
  (printf 'id,v\n1,10\n2,2'; sleep 0.5; printf '0\n') >"$d/in.csv" &
  writer=$!
  run "$d"
  kill "$writer" 2>/dev/null # done already, unless sf-exec never opened the FIFO
  wait "$writer" 2>/dev/null
  printf 'id,v\n1,21\n2,41\n' >"$d/want.csv"
  rm -f "$d/in.csv"
  expect_output "fifo-rows-w$width" "$d" "$d/want.csv" "a FIFO's writer pausing 0.5 s inside a row"

  d=$work/fifo-cut-w$width
  make_graph "$d" "$width"
  mkfifo "$d/in.csv"
  (printf 'id,v\n1,10\n2,2'; sleep 0.2) >"$d/in.csv" &
  writer=$!
  run "$d"
  kill "$writer" 2>/dev/null
  wait "$writer" 2>/dev/null
  rm -f "$d/in.csv"
  expect_error "fifo-cut-w$width" "$d" \
    "sf-exec: error: operator 'src': in.csv:3: error: last row has no line end (truncated file? --accept-unterminated reads it)" \
    "a FIFO's writer closing inside a row"
done

# ---- launch: the source on h0 and the sink on h1, two loopback ports ----
# launch CASE DIR [ARGS...]: sf-launch ARGS g.xml in DIR (time limit 60 s); log DIR/launch.log, ST
launch() {
  local dir=$1
  shift
  (cd "$dir" && timeout -k 5 60 bash "$src/tools/sf-launch" --exec "$B/sf-exec" "$@" g.xml) >"$dir/launch.log" 2>&1
  ST=$?
}
for flag in "" --accept-unterminated; do
  c=launch${flag:+-accept}
  d=$work/$c
  sf_next_ports 2 || exit 1
  make_graph "$d" 2 "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1"
  cp "$cut_file" "$d/in.csv"
  launch "$d" $flag
  if [[ -n $flag ]]; then
    if [[ $ST != 0 ]]; then
      sf_bad "$c" "sf-launch $flag: exit status $ST, expected 0" "$d/launch.log"
    elif ! cmp -s "$want_cut" "$d/out/x.csv"; then
      sf_bad "$c" "sf-launch $flag: out/x.csv differs from the expected rows" "$d/launch.log"
    else
      sf_ok "$c" "sf-launch passes $flag to the executors: exit 0, the last row read"
    fi
  elif [[ $ST != 1 ]]; then
    sf_bad "$c" "sf-launch: exit status $ST, expected 1" "$d/launch.log"
  elif ! grep -qxF "[h0] $truncated" "$d/launch.log"; then
    sf_bad "$c" "sf-launch: no line '[h0] $truncated'" "$d/launch.log"
  elif [[ -n $(out_files "$d") ]]; then
    sf_bad "$c" "sf-launch: files left in out/: $(out_files "$d")" "$d/launch.log"
  else
    sf_ok "$c" "sf-launch: h0 names the truncated file, exit 1, nothing written"
  fi
done

echo "csv_inputs: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
