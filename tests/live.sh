#!/usr/bin/env bash
# tests/live.sh BUILD_DIR SOURCE_DIR
#
# Live streams (docs/language.md, "Live streams") through whole runs of sf-exec. The graph
# (written here) is a source -> Functor (v * 2 + 1) -> FileSink, run as it is (w1) and rewritten by
# sf-xform -w 2 (w2: the Functor in two channels). Cases:
#   stdin:     FileSource file="-" fed by a pipe, FileSink file="-": standard output equals the
#              expected rows byte for byte, exit 0, nothing on standard error;
#   stdin-bad: a malformed row on standard input: the error names '<stdin>' and the line;
#   stream:    rows written one at a time into standard input come out of standard output before
#              the next one is written (the sink flushes when its input idles), for file="-" and
#              for file="/dev/stdout" (a pipe written in place);
#   follow:    FileSource follow="yes" on a regular file: rows appended while the job runs come out,
#              a row appended in two writes 0.3 s apart comes out whole, SIGINT ends it (130);
#   follow-drain: the same job ended by SIGTERM while a row is half written: exit 0, nothing on
#              standard error, every whole row out, the half row dropped;
#   follow-truncate, follow-copytruncate, follow-rename: the followed file truncated (`: >`, or
#              logrotate's copytruncate) or replaced by a rename: every row written before and after
#              comes out in order (tail -F: the old file read to its end first), a repeated header
#              and a row cut by the truncation dropped, and standard error is exactly the warning;
#   roll-drain: roll="tuples 3" from a followed file, SIGTERM: exit 0, the last part committed
#              whole (rows 4 and 5) beside part 0;
#   follow-fifo: follow="yes" on a FIFO: the job ends when its writer closes it, exit 0, every row;
#   roll:      FileSink roll="tuples 3" fed from standard input: part 0 appears, whole, while the
#              input stays open; SIGINT then exits 130 leaving only the closed part (the one being
#              written neither visible nor left behind); kill -9 leaves no visible part but the
#              closed one; roll="seconds 1": a part closes while no row comes; widths 1 and 2;
#   roll-all:  roll="bytes 4096" over the 2000 rows: every part starts with the header and the
#              parts' rows, in order, are the expected rows;
#   socket:    SocketSource listen= fed by a client (sf-tcp send) -> FileSink: out/x.csv equals the
#              expected rows byte for byte; socket-loopback: listen="PORT" listens on 127.0.0.1
#              only and names the input 127.0.0.1:PORT; socket-connect: SocketSource connect= header="no" to a
#              server sending the rows without their header; socketsink: FileSource -> SocketSink
#              to a listener: it receives the expected rows; socket-stream: rows reach the
#              SocketSink's peer while the job runs; socket-drain: SIGTERM while the client keeps
#              its connection open: exit 0, every row sent before it in out/x.csv, once;
#   example:   graphs/live/logstream.xml (SocketSource -> two regions -> rolling FileSinks) fed
#              graphs/data/logs.csv by a client: sequentially, at width 3 in one process, and on
#              three executors (sf-launch): the alert parts (tuples 100) are byte-identical to the
#              sequential run's, and the server parts (seconds 10) hold the same rows in order;
#              example-drain: on three executors, the client sends every row and keeps its
#              connection open; SIGTERM to sf-launch: exit 0 and the same parts and rows;
#   stats-latency: --stats shows the sink's latency percentiles (p50 <= p99 <= p99.9) from the
#              source, in one process at widths 1 and 2 (without --stats: no latency);
#   skip:      onerror="skip": the malformed rows are dropped, the others come out in order, exit 0,
#              and standard error is exactly the warning counting them (with --stats: the count);
#   maxrow, maxfields: a row over maxrow bytes or maxfields fields (the header too) stops the job
#              with the exact error naming its line; limit-memory: a row of 200 MiB without a line
#              end and one of 200 MiB of commas, into a SocketSource and a FIFO with onerror="skip":
#              both skipped, the good rows out, the exact warning, peak RSS below 64 MiB;
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
sf_need_bins "$build" sf-xform sf-exec sf-tcp || exit 1
B=$build/bin

cleanup() {
  local p
  for p in $(jobs -p); do kill -KILL "$p" 2>/dev/null; done # unreaped children only
  wait 2>/dev/null
  sf_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

work=$(sf_mktemp sf-live) || exit 1
SF_TMPDIRS+=("$work") # sf_mktemp ran in a $(...) subshell: register it here

passed=0
failed=0
ok() { printf '%-18s OK    %s\n' "$1" "$2"; passed=$((passed + 1)); }
bad() { # CASE WHAT [LOG...]
  local c=$1 what=$2 f
  shift 2
  printf '%-18s FAIL  %s (work dir %s)\n' "$c" "$what" "$work"
  for f in "$@"; do
    [[ -f $f ]] || continue
    echo "    $(basename "$f"):"
    sed 's/^/    | /' "$f" | head -n 15
  done
  failed=$((failed + 1))
  sf_keep "$work"
}

# make_graph DIR WIDTH SOURCE_PARAMS SINK_PARAMS: DIR/g.xml, FileSource with SOURCE_PARAMS (XML
# <param> elements) -> calc -> FileSink with SINK_PARAMS; runs happen in DIR. SRC_KIND and
# SINK_KIND replace FileSource and FileSink.
make_graph() {
  local dir=$1 width=$2 src_params=$3 sink_params=$4
  mkdir -p "$dir/out"
  cat >"$dir/seq.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="live">
  <schema name="T">
    <attr name="id" type="int"/>
    <attr name="v"  type="int"/>
  </schema>
  <operator name="src" kind="${SRC_KIND:-FileSource}">
    <output stream="Rows" schema="T"/>
    $src_params
  </operator>
  <operator name="calc" kind="Functor">
    <input stream="Rows"/>
    <output stream="Calced" schema="T"/>
    <set attr="v">v * 2 + 1</set>
  </operator>
  <operator name="out" kind="${SINK_KIND:-FileSink}">
    <input stream="Calced"/>
    $sink_params
  </operator>
</graph>
EOF
  if [[ $width == 1 ]]; then
    cp "$dir/seq.xml" "$dir/g.xml"
  elif ! "$B/sf-xform" -w "$width" "$dir/seq.xml" -o "$dir/g.xml" >"$dir/xform.log" 2>&1; then
    echo "error: sf-xform failed on the test graph:" >&2
    cat "$dir/xform.log" >&2
    exit 1
  fi
}

# The input: a header and 2000 rows; want.csv is what the graph makes of them.
rows=$work/rows.csv
{
  echo "id,v"
  for ((i = 1; i <= 2000; i++)); do echo "$i,$((i * 7 % 1000))"; done
} >"$rows"
want=$work/want.csv
awk -F, 'NR == 1 { print; next } { print $1 "," $2 * 2 + 1 }' "$rows" >"$want"

# visible DIR: the files of DIR/out not starting with '.', on one line
visible() { find "$1/out" -mindepth 1 -not -name '.*' -printf '%P ' | tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' '; }
# wait_file PATH: waits up to 5 s for PATH to exist
wait_file() {
  local i
  for ((i = 0; i < 100; i++)); do
    [[ -e $1 ]] && return 0
    sleep 0.05
  done
  return 1
}

out_all() { find "$1/out" -mindepth 1 -printf '%P ' | tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' '; }

STDIN='<param name="file">-</param>'
STDOUT='<param name="file">-</param>'

for width in 1 2; do
  c=stdin-w$width d=$work/$c
  make_graph "$d" "$width" "$STDIN" "$STDOUT"
  (cd "$d" && timeout -k 5 30 "$B/sf-exec" g.xml <"$rows" >stdout.csv 2>exec.log)
  st=$?
  if [[ $st != 0 ]]; then
    bad "$c" "exit status $st, expected 0" "$d/exec.log"
  elif [[ -s $d/exec.log ]]; then
    bad "$c" "sf-exec printed something on standard error" "$d/exec.log"
  elif ! cmp -s "$want" "$d/stdout.csv"; then
    bad "$c" "standard output differs from the expected rows" "$d/stdout.csv"
  else
    ok "$c" "standard input to standard output: exit 0, $(wc -l <"$want") lines"
  fi
done

c=stdin-bad d=$work/$c
make_graph "$d" 1 "$STDIN" "$STDOUT"
(cd "$d" && printf 'id,v\n1,2\n3,x\n4,5\n' | timeout -k 5 30 "$B/sf-exec" g.xml >stdout.csv 2>exec.log)
st=$?
msg="sf-exec: error: operator 'src': <stdin>:3: error: field 'v': 'x' is not an int"
if [[ $st != 1 ]]; then
  bad "$c" "exit status $st, expected 1" "$d/exec.log"
elif [[ $(cat "$d/exec.log") != "$msg" ]]; then
  bad "$c" "standard error is not exactly '$msg'" "$d/exec.log"
else
  ok "$c" "a malformed row on standard input: exit 1, the line named"
fi

# stream CASE WIDTH SINK_PARAMS: writes the header and a row, then each further row only once the
# previous one came out of standard output (5 s at most each); then closes standard input and
# expects exit 0 and nothing more on standard output.
stream() {
  local c=$1 width=$2 sink=$3 d=$work/$1 line i expect fail=""
  make_graph "$d" "$width" "$STDIN" "$sink"
  cd "$d" || return
  coproc SF { exec timeout -k 5 30 "$B/sf-exec" g.xml 2>exec.log; }
  local in=${SF[1]} out=${SF[0]} pid=$SF_PID
  printf 'id,v\n' >&"$in"
  for ((i = 1; i <= 5; i++)); do
    printf '%d,%d\n' "$i" "$((i * 10))" >&"$in"
    if ((i == 1)); then
      read -r -t 5 -u "$out" line || line="(nothing in 5 s)"
      [[ $line == id,v ]] || fail="header: got '$line'"
    fi
    [[ -n $fail ]] && break
    expect="$i,$((i * 20 + 1))"
    read -r -t 5 -u "$out" line || line="(nothing in 5 s)"
    [[ $line == "$expect" ]] || fail="row $i: got '$line', expected '$expect' while standard input stays open"
    [[ -n $fail ]] && break
  done
  exec {in}>&-
  if [[ -z $fail ]] && read -r -t 10 -u "$out" line; then fail="after the end: unexpected '$line'"; fi
  wait "$pid"
  local st=$?
  cd - >/dev/null || return
  if [[ -n $fail ]]; then
    bad "$c" "$fail" "$d/exec.log"
  elif [[ $st != 0 ]]; then
    bad "$c" "exit status $st, expected 0" "$d/exec.log"
  elif [[ -s $d/exec.log ]]; then
    bad "$c" "sf-exec printed something on standard error" "$d/exec.log"
  else
    ok "$c" "each row shown before the next is written, exit 0"
  fi
}

for width in 1 2; do
  stream "stream-w$width" "$width" "$STDOUT"
  stream "devstdout-w$width" "$width" '<param name="file">/dev/stdout</param>'
done

# follow CASE WIDTH [END]: in.csv has a header and two rows; the job follows it, writing to
# standard output; rows appended to it must come out while it runs. END: INT (default), or TERM
# after half a row more.
follow() {
  local c=$1 width=$2 end=${3:-INT} d=$work/$1 line fail="" i
  make_graph "$d" "$width" '<param name="file">in.csv</param><param name="follow">yes</param>' "$STDOUT"
  printf 'id,v\n1,10\n2,20\n' >"$d/in.csv"
  cd "$d" || return
  coproc SF { exec timeout -k 5 30 "$B/sf-exec" g.xml 2>exec.log </dev/null; }
  local out=${SF[0]} pid=$SF_PID
  expect_line() { # EXPECTED
    [[ -n $fail ]] && return
    read -r -t 5 -u "$out" line || line="(nothing in 5 s)"
    [[ $line == "$1" ]] || fail="got '$line', expected '$1'"
  }
  expect_line id,v
  expect_line 1,21
  expect_line 2,41
  for ((i = 3; i <= 5; i++)); do
    printf '%d,%d\n' "$i" "$((i * 10))" >>in.csv
    expect_line "$i,$((i * 20 + 1))"
  done
  printf '6,6' >>in.csv # a row being written: waited for, whole
  sleep 0.3
  printf '0\n' >>in.csv
  expect_line 6,121
  if [[ $end == TERM ]]; then
    printf '7,7' >>in.csv # half a row: a drain drops it
    sleep 0.1
    kill -TERM "$pid"
    if [[ -z $fail ]] && read -r -t 10 -u "$out" line; then fail="after SIGTERM: unexpected '$line'"; fi
    wait "$pid"
    local st=$?
    cd - >/dev/null || return
    if [[ -n $fail ]]; then
      bad "$c" "$fail" "$d/exec.log"
    elif [[ $st != 0 ]]; then
      bad "$c" "exit status $st after SIGTERM, expected 0" "$d/exec.log"
    elif [[ -s $d/exec.log ]]; then
      bad "$c" "sf-exec printed something on standard error" "$d/exec.log"
    else
      ok "$c" "SIGTERM drains: exit 0, every whole row out, the half row dropped"
    fi
    return
  fi
  kill -INT "$pid"
  wait "$pid"
  local st=$?
  cd - >/dev/null || return
  if [[ -n $fail ]]; then
    bad "$c" "$fail" "$d/exec.log"
  elif [[ $st != 130 ]]; then
    bad "$c" "exit status $st after SIGINT, expected 130" "$d/exec.log"
  else
    ok "$c" "appended rows come out while the job runs (a cut row whole), SIGINT: 130"
  fi
}

for width in 1 2; do
  follow "follow-w$width" "$width"
  follow "follow-drain-w$width" "$width" TERM
done

# follow_moved CASE MODE: the job follows in.csv (header and rows 1, 2) to standard output; then
# MODE: truncate (`: > in.csv`, then rows 3, 4 without a header), copytruncate (row 3, half a row,
# then cp + truncate -s 0 as logrotate does, then the header again and row 4: the header is
# dropped, the half row lost), rename (mv in.csv in.csv.1, row 3 appended to the old file, then a
# new in.csv with the header and row 4). Rows written after the truncation are written only once
# its warning is out (a file truncated and grown past the old size within one poll is
# indistinguishable from one that grew). Expects rows 1-4 in order, then SIGTERM: exit 0 and
# standard error exactly the warning.
follow_moved() {
  local c=$1 mode=$2 d=$work/$1 line fail="" i
  make_graph "$d" 1 '<param name="file">in.csv</param><param name="follow">yes</param>' "$STDOUT"
  printf 'id,v\n1,10\n2,20\n' >"$d/in.csv"
  cd "$d" || return
  coproc SF { exec timeout -k 5 30 "$B/sf-exec" g.xml 2>exec.log </dev/null; }
  local out=${SF[0]} pid=$SF_PID warning
  expect_line() { # EXPECTED
    [[ -n $fail ]] && return
    read -r -t 5 -u "$out" line || line="(nothing in 5 s)"
    [[ $line == "$1" ]] || fail="got '$line', expected '$1'"
  }
  wait_warning() { # waits up to 5 s for exec.log to hold a line
    for ((i = 0; i < 100; i++)); do
      [[ -s exec.log ]] && return
      sleep 0.05
    done
    fail="no warning in 5 s"
  }
  expect_line id,v
  expect_line 1,21
  expect_line 2,41
  case $mode in
    truncate)
      : >in.csv
      warning="sf-exec: warning: operator 'src': 'in.csv' was truncated to 0 bytes (15 were read): reading it again from its start"
      wait_warning
      printf '3,30\n4,40\n' >>in.csv
      ;;
    copytruncate)
      printf '3,30\n' >>in.csv
      expect_line 3,61
      printf '9,9' >>in.csv # being written: lost with the truncation
      sleep 0.1
      cp in.csv in.csv.1
      truncate -s 0 in.csv
      warning="sf-exec: warning: operator 'src': 'in.csv' was truncated to 0 bytes (23 were read): reading it again from its start"
      wait_warning
      printf 'id,v\n4,40\n' >>in.csv
      ;;
    rename)
      mv in.csv in.csv.1
      printf '3,30\n' >>in.csv.1 # the writer, before it reopens its log
      printf 'id,v\n4,40\n' >in.csv.new
      mv in.csv.new in.csv
      warning="sf-exec: warning: operator 'src': 'in.csv' was replaced (a new file at its path): the old one read to its end, reading the new one from its start"
      ;;
  esac
  [[ $mode == copytruncate ]] || expect_line 3,61
  expect_line 4,81
  kill -TERM "$pid"
  if [[ -z $fail ]] && read -r -t 10 -u "$out" line; then fail="after SIGTERM: unexpected '$line'"; fi
  wait "$pid"
  local st=$?
  cd - >/dev/null || return
  if [[ -n $fail ]]; then
    bad "$c" "$fail" "$d/exec.log"
  elif [[ $st != 0 ]]; then
    bad "$c" "exit status $st after SIGTERM, expected 0" "$d/exec.log"
  elif [[ $(cat "$d/exec.log") != "$warning" ]]; then
    bad "$c" "standard error is not exactly '$warning'" "$d/exec.log"
  else
    ok "$c" "every row out in order, the exact warning, SIGTERM: exit 0"
  fi
}

follow_moved follow-truncate truncate
follow_moved follow-copytruncate copytruncate
follow_moved follow-rename rename

for width in 1 2; do
  c=roll-drain-w$width d=$work/$c
  make_graph "$d" "$width" '<param name="file">in.csv</param><param name="follow">yes</param>' \
    '<param name="file">out/x.csv</param><param name="roll">tuples 3</param>'
  printf 'id,v\n1,1\n2,2\n3,3\n4,4\n5,5\n' >"$d/in.csv"
  (cd "$d" && exec timeout -k 5 30 "$B/sf-exec" g.xml >stdout.txt 2>exec.log) &
  pid=$!
  wait_file "$d/out/x-000000.csv"
  sleep 0.2
  kill -TERM "$pid" # to timeout, which passes it on
  wait "$pid"
  st=$?
  if [[ $st != 0 ]]; then
    bad "$c" "exit status $st after SIGTERM, expected 0" "$d/exec.log"
  elif [[ $(visible "$d") != "x-000000.csv x-000001.csv " || -n $(find "$d/out" -name '.*') ]]; then
    bad "$c" "out/ holds '$(out_all "$d")', expected x-000000.csv and x-000001.csv" "$d/exec.log"
  elif [[ $(cat "$d/out/x-000001.csv") != $'id,v\n4,9\n5,11' ]]; then
    bad "$c" "the last part is not rows 4 and 5" "$d/out/x-000001.csv"
  else
    ok "$c" "SIGTERM commits the last part whole: exit 0"
  fi
done

c=follow-fifo d=$work/$c
make_graph "$d" 2 '<param name="file">in.fifo</param><param name="follow">yes</param>' "$STDOUT"
mkfifo "$d/in.fifo"
(cd "$d" && timeout -k 5 30 "$B/sf-exec" g.xml >stdout.csv 2>exec.log) &
pid=$!
{ head -n 1000 "$rows"; sleep 0.3; tail -n +1001 "$rows"; } >"$d/in.fifo"
wait "$pid"
st=$?
if [[ $st != 0 ]]; then
  bad "$c" "exit status $st, expected 0 when the writer closed the FIFO" "$d/exec.log"
elif ! cmp -s "$want" "$d/stdout.csv"; then
  bad "$c" "standard output differs from the expected rows" "$d/stdout.csv" "$d/exec.log"
else
  ok "$c" "a followed FIFO ends when its writer closes it: exit 0, every row"
fi

for width in 1 2; do
  c=skip-w$width d=$work/$c
  make_graph "$d" "$width" '<param name="file">-</param><param name="onerror">skip</param>' \
    '<param name="file">out/x.csv</param>'
  printf 'id,v\n1,2\n3,x\n4\n5,6\n7,"8"9\n10,11\n' >"$d/in.csv"
  (cd "$d" && timeout -k 5 30 "$B/sf-exec" g.xml <in.csv >stdout.txt 2>exec.log)
  st=$?
  msg="sf-exec: warning: operator 'src': skipped 3 malformed rows of '<stdin>' (the first: <stdin>:3: field 'v': 'x' is not an int)"
  if [[ $st != 0 ]]; then
    bad "$c" "exit status $st, expected 0" "$d/exec.log"
  elif [[ $(cat "$d/exec.log") != "$msg" ]]; then
    bad "$c" "standard error is not exactly '$msg'" "$d/exec.log"
  elif [[ $(cat "$d/out/x.csv") != $'id,v\n1,5\n5,13\n10,23' ]]; then
    bad "$c" "out/x.csv is not the three good rows" "$d/out/x.csv"
  else
    (cd "$d" && timeout -k 5 30 "$B/sf-exec" --stats g.xml <in.csv >stdout.txt 2>stats.log)
    if ! grep -Eq '^  src +FileSource .* skipped 3$' "$d/stats.log"; then
      bad "$c" "--stats does not show 'skipped 3' for src" "$d/stats.log"
    else
      ok "$c" "3 malformed rows dropped and counted, the good rows in order"
    fi
  fi
done

# roll CASE WIDTH ROLL ROWS_BEFORE END: feeds standard input the header and ROWS_BEFORE rows,
# expects out/x-000000.csv to appear while the input stays open, then writes rows up to 5 and
# ends the job with END (INT or KILL).
roll() {
  local c=$1 width=$2 roll=$3 before=$4 end=$5 d=$work/$1 i fail=""
  make_graph "$d" "$width" "$STDIN" "<param name=\"file\">out/x.csv</param><param name=\"roll\">$roll</param>"
  cd "$d" || return
  coproc SF { exec "$B/sf-exec" g.xml 2>exec.log >/dev/null; } # signalled directly: no timeout in between
  local in=${SF[1]} pid=$SF_PID
  printf 'id,v\n' >&"$in"
  for ((i = 1; i <= before; i++)); do printf '%d,%d\n' "$i" "$i" >&"$in"; done
  if ! wait_file out/x-000000.csv; then
    fail="out/x-000000.csv did not appear in 5 s"
  elif [[ $(cat out/x-000000.csv) != "$(printf 'id,v\n'; for ((i = 1; i <= before; i++)); do echo "$i,$((2 * i + 1))"; done)" ]]; then
    fail="out/x-000000.csv is not the header and rows 1-$before"
  fi
  for ((i = before + 1; i <= 5; i++)); do printf '%d,%d\n' "$i" "$i" >&"$in"; done
  sleep 0.3 # the rows reach the sink, in a part still being written
  kill -"$end" "$pid"
  { wait "$pid"; } 2>/dev/null # no "Killed" line from the shell
  local st=$?
  exec {in}>&-
  cd - >/dev/null || return
  local want_st=130 left
  [[ $end == KILL ]] && want_st=137
  left=$(visible "$d")
  if [[ -n $fail ]]; then
    bad "$c" "$fail" "$d/exec.log"
  elif [[ $st != "$want_st" ]]; then
    bad "$c" "exit status $st after SIG$end, expected $want_st" "$d/exec.log"
  elif [[ $left != "x-000000.csv " ]]; then
    bad "$c" "out/ shows '$left' after SIG$end, expected x-000000.csv alone" "$d/exec.log"
  elif [[ $end == INT && -n $(out_all "$d") && $(out_all "$d") != "x-000000.csv " ]]; then
    bad "$c" "out/ holds '$(out_all "$d")' after SIGINT: the part being written was left behind" "$d/exec.log"
  else
    ok "$c" "part 0 visible while the job runs; after SIG$end only the closed part shows"
  fi
}

for width in 1 2; do
  roll "roll-int-w$width" "$width" "tuples 3" 3 INT
  roll "roll-kill-w$width" "$width" "tuples 3" 3 KILL
  roll "roll-seconds-w$width" "$width" "seconds 1" 2 INT
done

for width in 1 2; do
  c=roll-all-w$width d=$work/$c
  make_graph "$d" "$width" "$STDIN" '<param name="file">out/x.csv</param><param name="roll">bytes 4096</param>'
  (cd "$d" && timeout -k 5 30 "$B/sf-exec" g.xml <"$rows" >stdout.txt 2>exec.log)
  st=$?
  parts=$(find "$d/out" -name 'x-*.csv' | wc -l)
  if [[ $st != 0 ]]; then
    bad "$c" "exit status $st, expected 0" "$d/exec.log"
  elif ((parts < 3)); then
    bad "$c" "$parts parts, expected several of about 4096 bytes" "$d/exec.log"
  elif [[ $(for f in "$d"/out/x-*.csv; do head -n 1 "$f"; done | sort -u) != id,v ]]; then
    bad "$c" "a part does not start with the header" "$d/exec.log"
  elif ! cmp -s <(tail -n +2 "$want") <(for f in "$d"/out/x-*.csv; do tail -n +2 "$f"; done); then
    bad "$c" "the parts' rows differ from the expected rows" "$d/exec.log"
  else
    ok "$c" "$parts parts, each with the header; their rows are the expected rows in order"
  fi
done

# ---- sockets ----

# expect_file CASE FILE ST LOG WHAT: exit status ST is 0, LOG is empty, FILE equals want.csv.
expect_file() {
  local c=$1 file=$2 st=$3 log=$4 what=$5
  if [[ $st != 0 ]]; then
    bad "$c" "exit status $st, expected 0" "$log"
  elif [[ -s $log ]]; then
    bad "$c" "sf-exec printed something" "$log"
  elif ! cmp -s "$want" "$file"; then
    bad "$c" "$(basename "$file") differs from the expected rows" "$file" "$log"
  else
    ok "$c" "$what"
  fi
}

for width in 1 2; do
  c=socket-w$width d=$work/$c
  sf_next_ports 1 || exit 1
  SRC_KIND=SocketSource make_graph "$d" "$width" "<param name=\"listen\">127.0.0.1:$P0</param>" \
    '<param name="file">out/x.csv</param>'
  (cd "$d" && exec timeout -k 5 30 "$B/sf-exec" g.xml >stdout.txt 2>exec.log) &
  pid=$!
  timeout 30 "$B/sf-tcp" send "127.0.0.1:$P0" <"$rows" 2>"$d/client.log"
  wait "$pid"
  expect_file "$c" "$d/out/x.csv" $? "$d/exec.log" "rows from a client of SocketSource listen=: out/x.csv equals the expected rows"
done

# listen="PORT": a port alone listens on loopback only (127.0.0.1 in /proc/net/tcp, not 0.0.0.0),
# and messages name the input 127.0.0.1:PORT.
c=socket-loopback d=$work/$c
sf_next_ports 1 || exit 1
SRC_KIND=SocketSource make_graph "$d" 1 "<param name=\"listen\">$P0</param>" '<param name="file">out/x.csv</param>'
(cd "$d" && exec timeout -k 5 30 "$B/sf-exec" g.xml >stdout.txt 2>exec.log) &
pid=$!
hexport=$(printf '%04X' "$P0")
listening=""
for ((i = 0; i < 100; i++)); do # the listening socket's local address (state 0A), as soon as it is there
  listening=$(awk -v p=":$hexport" '$4 == "0A" && substr($2, length($2) - 4) == p { print $2 }' /proc/net/tcp /proc/net/tcp6)
  [[ -n $listening ]] && break
  sleep 0.05
done
printf 'id,v\n1,2\n3,x\n' | timeout 30 "$B/sf-tcp" send "127.0.0.1:$P0" 2>"$d/client.log"
wait "$pid"
st=$?
msg="sf-exec: error: operator 'src': 127.0.0.1:$P0:3: error: field 'v': 'x' is not an int"
if [[ $listening != "0100007F:$hexport" ]]; then
  bad "$c" "listening on '$listening' (/proc/net/tcp), expected 0100007F:$hexport (127.0.0.1) only" "$d/exec.log"
elif [[ $st != 1 ]]; then
  bad "$c" "exit status $st, expected 1" "$d/exec.log"
elif [[ $(cat "$d/exec.log") != "$msg" ]]; then
  bad "$c" "standard error is not exactly '$msg'" "$d/exec.log"
else
  ok "$c" "listen=\"PORT\" listens on 127.0.0.1 only; messages name 127.0.0.1:PORT"
fi

c=socket-connect d=$work/$c
sf_next_ports 1 || exit 1
SRC_KIND=SocketSource make_graph "$d" 2 "<param name=\"connect\">127.0.0.1:$P0</param><param name=\"header\">no</param>" \
  '<param name="file">out/x.csv</param>'
tail -n +2 "$rows" | timeout 30 "$B/sf-tcp" serve "$P0" 2>"$d/server.log" &
server=$!
(cd "$d" && exec timeout -k 5 30 "$B/sf-exec" g.xml >stdout.txt 2>exec.log)
st=$?
wait "$server"
expect_file "$c" "$d/out/x.csv" $st "$d/exec.log" "SocketSource connect= header=no reads a server's rows: out/x.csv equals the expected rows"

for width in 1 2; do
  c=socketsink-w$width d=$work/$c
  sf_next_ports 1 || exit 1
  SINK_KIND=SocketSink make_graph "$d" "$width" '<param name="file">in.csv</param>' "<param name=\"connect\">127.0.0.1:$P0</param>"
  cp "$rows" "$d/in.csv"
  timeout 30 "$B/sf-tcp" listen "$P0" >"$d/got.csv" 2>"$d/listener.log" &
  listener=$!
  (cd "$d" && exec timeout -k 5 30 "$B/sf-exec" g.xml >stdout.txt 2>exec.log)
  st=$?
  wait "$listener"
  expect_file "$c" "$d/got.csv" $st "$d/exec.log" "SocketSink's peer receives the expected rows, header first"
done

c=socket-stream d=$work/$c
sf_next_ports 1 || exit 1
SINK_KIND=SocketSink make_graph "$d" 1 "$STDIN" "<param name=\"connect\">127.0.0.1:$P0</param>"
timeout 30 "$B/sf-tcp" listen "$P0" >"$d/got.csv" 2>"$d/listener.log" &
listener=$!
cd "$d" || exit 1
coproc SF { exec timeout -k 5 30 "$B/sf-exec" g.xml 2>exec.log >/dev/null; }
in=${SF[1]} pid=$SF_PID
printf 'id,v\n1,10\n' >&"$in"
fail="the peer did not get row 1 within 5 s while the input stays open"
for ((i = 0; i < 100; i++)); do
  [[ $(cat got.csv) == $'id,v\n1,21' ]] && { fail=""; break; }
  sleep 0.05
done
exec {in}>&-
wait "$pid"
st=$?
wait "$listener"
cd - >/dev/null || exit 1
if [[ -n $fail ]]; then
  bad "$c" "$fail" "$d/got.csv" "$d/exec.log"
elif [[ $st != 0 ]]; then
  bad "$c" "exit status $st, expected 0" "$d/exec.log"
else
  ok "$c" "a row reaches SocketSink's peer while the job runs"
fi

for width in 1 2; do
  c=socket-drain-w$width d=$work/$c
  sf_next_ports 1 || exit 1
  SRC_KIND=SocketSource make_graph "$d" "$width" "<param name=\"listen\">127.0.0.1:$P0</param>" \
    '<param name="file">out/x.csv</param>'
  mkfifo "$d/client.fifo"
  (cd "$d" && exec timeout -k 5 30 "$B/sf-exec" g.xml >stdout.txt 2>exec.log) &
  pid=$!
  timeout 30 "$B/sf-tcp" send "127.0.0.1:$P0" <"$d/client.fifo" 2>"$d/client.log" &
  client=$!
  exec {hold}>"$d/client.fifo"
  cat "$rows" >&"$hold" # every row, the connection stays open
  sleep 1 # 2000 rows over loopback: read long before
  kill -TERM "$pid" # to timeout, which passes it on
  wait "$pid"
  st=$?
  exec {hold}>&-
  wait "$client"
  expect_file "$c" "$d/out/x.csv" $st "$d/exec.log" "SIGTERM with the client's connection open: exit 0, every row sent, once"
done

# ---- row limits ----

# limit CASE GRAPH_PARAMS INPUT MESSAGE: the job reading INPUT on standard input (or in.csv, as
# GRAPH_PARAMS say) exits 1 with exactly MESSAGE on standard error.
limit() {
  local c=$1 params=$2 input=$3 msg=$4 d=$work/$1
  make_graph "$d" 1 "$params" '<param name="file">out/x.csv</param>'
  printf '%b' "$input" >"$d/in.csv"
  (cd "$d" && timeout -k 5 30 "$B/sf-exec" g.xml <in.csv >stdout.txt 2>exec.log)
  local st=$?
  if [[ $st != 1 ]]; then
    bad "$c" "exit status $st, expected 1" "$d/exec.log"
  elif [[ $(cat "$d/exec.log") != "$msg" ]]; then
    bad "$c" "standard error is not exactly '$msg'" "$d/exec.log"
  elif [[ -n $(out_all "$d") ]]; then
    bad "$c" "out/ holds '$(out_all "$d")', expected nothing" "$d/exec.log"
  else
    ok "$c" "a row over the limit: exit 1, the line named"
  fi
}
limit maxrow-stdin '<param name="file">-</param><param name="maxrow">16</param>' \
  'id,v\n1,2\n"1234567890",123456\n3,4\n' \
  "sf-exec: error: operator 'src': <stdin>:3: error: row is longer than 16 bytes (parameter 'maxrow')"
limit maxfields-file '<param name="file">in.csv</param><param name="maxfields">2</param>' \
  'id,v\n1,2\n3,4,\n5,6\n' \
  "sf-exec: error: operator 'src': in.csv:3: error: row has more than 2 fields (parameter 'maxfields')"
limit maxfields-header '<param name="file">in.csv</param><param name="maxfields">1</param>' \
  'id,v\n1,2\n' \
  "sf-exec: error: operator 'src': in.csv:1: error: row has more than 1 field (parameter 'maxfields')"

# A row of 200 MiB without a line end, then 200 MiB of commas, between good rows, with
# onerror="skip" and the default limits: both are skipped, the good rows come out, and the peak
# memory stays far below the row (not asserted under sanitizers, whose shadow memory counts).
# SocketSource: the rows come from a client; FileSource: from a FIFO.
huge_input() { # the header, row 1, 200 MiB of x, row 2, 200 MiB of commas, row 3
  printf 'id,v\n1,10\n'
  head -c $((200 << 20)) /dev/zero | tr '\0' x
  printf '\n2,20\n'
  head -c $((200 << 20)) /dev/zero | tr '\0' ,
  printf '\n3,30\n'
}
for kind in SocketSource FileSource; do
  c=limit-memory-$kind d=$work/$c
  if [[ $kind == SocketSource ]]; then
    sf_next_ports 1 || exit 1
    name=127.0.0.1:$P0
    SRC_KIND=SocketSource make_graph "$d" 1 "<param name=\"listen\">$name</param><param name=\"onerror\">skip</param>" \
      '<param name="file">out/x.csv</param>'
  else
    name=in.fifo
    make_graph "$d" 1 '<param name="file">in.fifo</param><param name="onerror">skip</param>' \
      '<param name="file">out/x.csv</param>'
    mkfifo "$d/in.fifo"
  fi
  (cd "$d" && exec timeout -k 5 120 "$B/sf-exec" --stats-json stats.json g.xml >stdout.txt 2>exec.log) &
  pid=$!
  if [[ $kind == SocketSource ]]; then
    huge_input | timeout 120 "$B/sf-tcp" send "$name" 2>"$d/client.log"
  else
    huge_input >"$d/in.fifo"
  fi
  wait "$pid"
  st=$?
  msg="sf-exec: warning: operator 'src': skipped 2 malformed rows of '$name' (the first: $name:3: row is longer than 1048576 bytes (parameter 'maxrow'))"
  rss=$(sed -n 's/.*"peak_rss_kib": *\([0-9]*\).*/\1/p' "$d/stats.json" | head -n 1)
  if [[ $st != 0 ]]; then
    bad "$c" "exit status $st, expected 0" "$d/exec.log"
  elif [[ $(cat "$d/exec.log") != "$msg" ]]; then
    bad "$c" "standard error is not exactly '$msg'" "$d/exec.log"
  elif [[ $(cat "$d/out/x.csv") != $'id,v\n1,21\n2,41\n3,61' ]]; then
    bad "$c" "out/x.csv is not the three good rows" "$d/out/x.csv"
  elif [[ -z $rss ]]; then
    bad "$c" "no peak_rss_kib in --stats-json" "$d/stats.json"
  elif [[ -z ${SF_SANITIZE:-} ]] && ((rss >= 64 * 1024)); then
    bad "$c" "peak RSS $((rss / 1024)) MiB for rows of 200 MiB, expected below 64 MiB" "$d/exec.log"
  else
    ok "$c" "400 MiB in two rows skipped, peak RSS $((rss / 1024)) MiB, the good rows out"
  fi
done

# ---- latency in --stats ----
for width in 1 2; do
  c=stats-latency-w$width d=$work/$c
  make_graph "$d" "$width" "$STDIN" '<param name="file">out/x.csv</param>'
  (cd "$d" && exec timeout -k 5 30 "$B/sf-exec" --stats g.xml <"$rows" >stdout.txt 2>exec.log)
  st=$?
  line=$(grep -E '^  out +FileSink ' "$d/exec.log" | tail -n 1)
  re='latency p50 ([0-9.]+) ms p99 ([0-9.]+) ms p99.9 ([0-9.]+) ms$'
  if [[ $st != 0 ]]; then
    bad "$c" "exit status $st, expected 0" "$d/exec.log"
  elif [[ ! $line =~ $re ]]; then
    bad "$c" "the sink's summary line has no latency percentiles: '$line'" "$d/exec.log"
  elif ! awk -v a="${BASH_REMATCH[1]}" -v b="${BASH_REMATCH[2]}" -v c="${BASH_REMATCH[3]}" 'BEGIN { exit !(a <= b && b <= c) }'; then
    bad "$c" "percentiles out of order: '$line'" "$d/exec.log"
  elif ! cmp -s "$want" "$d/out/x.csv"; then
    bad "$c" "out/x.csv differs from the expected rows" "$d/exec.log"
  elif (cd "$d" && "$B/sf-exec" g.xml <"$rows" 2>&1 >/dev/null | grep -q latency); then
    bad "$c" "latency printed without --stats" "$d/exec.log"
  else
    ok "$c" "${line##*latency }"
  fi
done

# ---- the example application ----

# run_example CASE MODE: graphs/live/logstream.xml on a free port in $work/CASE, MODE seq, w3 (one
# process) or hosts3 (three executors through sf-launch); fed graphs/data/logs.csv; sets ST.
run_example() {
  local c=$1 mode=$2 d=$work/$1
  mkdir -p "$d/out"
  sf_next_ports 4 || exit 1
  sed "s/127.0.0.1:9400/127.0.0.1:$P0/" "$src/graphs/live/logstream.xml" >"$d/seq.xml"
  case $mode in
    seq) cp "$d/seq.xml" "$d/g.xml" ;;
    w3) "$B/sf-xform" -w 3 "$d/seq.xml" -o "$d/g.xml" 2>"$d/xform.log" ;;
    hosts3) "$B/sf-xform" -w 3 --hosts "h0=127.0.0.1:$P1,h1=127.0.0.1:$P2,h2=127.0.0.1:$P3" "$d/seq.xml" \
      -o "$d/g.xml" 2>"$d/xform.log" ;;
  esac
  # timeout's -k also counts from a signal it passes on: after the drain's SIGTERM (below) it is
  # the time the drain may take (a sanitizer build on a loaded machine takes more than 5 s)
  local kill_after=5
  [[ ${DRAIN:-} == 1 ]] && kill_after=60
  if [[ $mode == hosts3 ]]; then
    (cd "$d" && exec timeout -k $kill_after 60 bash "$src/tools/sf-launch" --exec "$B/sf-exec" g.xml >exec.log 2>&1) &
  else
    (cd "$d" && exec timeout -k $kill_after 60 "$B/sf-exec" g.xml >exec.log 2>&1) &
  fi
  local pid=$!
  if [[ ${DRAIN:-} == 1 ]]; then # the client keeps its connection open; SIGTERM ends the job
    mkfifo "$d/client.fifo"
    timeout 60 "$B/sf-tcp" send "127.0.0.1:$P0" <"$d/client.fifo" 2>"$d/client.log" &
    local client=$! hold
    exec {hold}>"$d/client.fifo"
    cat "$src/graphs/data/logs.csv" >&"$hold"
    sleep 2 # 9000 rows over loopback and three executors: all read long before
    kill -TERM "$pid" # to timeout, which passes it on to sf-launch
    wait "$pid"
    ST=$?
    exec {hold}>&-
    wait "$client"
    return
  fi
  timeout 60 "$B/sf-tcp" send "127.0.0.1:$P0" <"$src/graphs/data/logs.csv" 2>"$d/client.log"
  wait "$pid"
  ST=$?
}
rows_of() { local f; for f in "$1"/out/"$2"-*.csv; do tail -n +2 "$f"; done; } # DIR STEM

run_example example-seq seq
ref=$work/example-seq
if [[ $ST != 0 ]]; then
  bad example-seq "exit status $ST, expected 0" "$ref/exec.log"
elif (($(ls "$ref"/out/live_alerts-*.csv | wc -l) < 2)) || [[ -z $(rows_of "$ref" live_servers) ]]; then
  bad example-seq "expected several alert parts and server rows" "$ref/exec.log"
else
  ok example-seq "$(ls "$ref"/out | wc -l) parts from $(($(wc -l <"$src/graphs/data/logs.csv") - 1)) requests sent over a socket"
  for mode in w3 hosts3 drain; do
    c=example-$mode d=$work/$c
    if [[ $mode == drain ]]; then
      DRAIN=1 run_example "$c" hosts3
    else
      run_example "$c" "$mode"
    fi
    if [[ $ST != 0 ]]; then
      bad "$c" "exit status $ST, expected 0" "$d/exec.log" "$d/xform.log"
    elif ! diff -r <(cd "$ref/out" && ls live_alerts-*) <(cd "$d/out" && ls live_alerts-*) >/dev/null; then
      bad "$c" "other alert parts than the sequential run: $(cd "$d/out" && ls | tr '\n' ' ')" "$d/exec.log"
    elif ! (for f in "$ref"/out/live_alerts-*.csv; do cmp -s "$f" "$d/out/$(basename "$f")" || exit 1; done); then
      bad "$c" "an alert part differs from the sequential run's" "$d/exec.log"
    elif ! cmp -s <(rows_of "$ref" live_servers) <(rows_of "$d" live_servers); then
      bad "$c" "the server parts' rows differ from the sequential run's" "$d/exec.log"
    else
      ok "$c" "alert parts byte-identical to the sequential run's, server rows equal"
    fi
  done
fi

echo "live: $passed passed, $failed failed"
((failed == 0))
