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
#   lookup:  lookup.xml: 5000 orders looked up in a table keyed on two columns (its file with its
#            columns in another order and one more), missing="drop" and "keep", and a table of a
#            header alone with missing="keep" (every value its type's zero).
#   lookup-explain: sf-xform --explain shows the Lookups parallel, stateless, atmostone (drop) and
#            one (keep);
#   lookup-restore: a Lookup at width 3 killed with SIGKILL after a checkpoint, restored at width 2,
#            the output the sequential run's;
#   lookup-sides: lookup_one.xml on a few rows written here: keys in the table only, in the input
#            only, in both; lookup-empty: a table of a header alone drops every order.
# and runs that must fail with one exact line on standard error and exit 1:
#   columns-exact: the same file without columns="subset": its first extra column is named;
#   columns-missing: columns="subset" and a header without the column 'vol';
#   lookup-duplicate, lookup-no-column, lookup-field, lookup-no-file: a table with a key twice, a
#            header without a column of the schema, a field not of its type, no table file.
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
# out/ compared with the oracle's expected/ (ORACLE_CASE -: $work/CASE holds the inputs and
# expected/ already).
expect_run() {
  local c=$1 graph=$2 ocase=$3 d=$work/$1 w
  mkdir -p "$d"
  if [[ $ocase != - ]] && ! python3 "$src/tests/lets/oracle.py" "$ocase" "$d" >"$d/oracle.log" 2>&1; then
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
      sf_ok "$c w$w" "$(cd "$d/expected" && wc -l * | tail -n 1 | awk '{print $1}') lines as expected"
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

expect_run lookup "$src/tests/lets/lookup.xml" lookup

# a Lookup is stateless: replicated like a Functor
c=lookup-explain
(cd "$src/tests/lets" && "$B/sf-xform" -w 3 --explain lookup.xml) >/dev/null 2>"$work/explain.log"
want="lookup.xml:33: lk_drop: model: state none, selectivity atmostone, forwards 'id', 'cur', 'day' and 'amount', punct none, final none"
if ! grep -q "^lookup.xml:33: lk_drop: parallel in region r1 (width 3" "$work/explain.log"; then
  sf_bad "$c" "--explain does not show lk_drop parallel at width 3" "$work/explain.log"
elif ! grep -qxF "$want" "$work/explain.log" || ! grep -q "lk_keep: model: state none, selectivity one," "$work/explain.log"; then
  sf_bad "$c" "--explain does not give the models expected" "$work/explain.log"
else
  sf_ok "$c" "lk_drop parallel at width 3; models atmostone (drop) and one (keep)"
fi

# lookup_dir CASE ORDERS RATES: $work/CASE with orders.csv and rates.csv of those lines (\n-separated)
lookup_dir() {
  d=$work/$1
  mkdir -p "$d/expected"
  printf "$2" >"$d/orders.csv"
  printf "$3" >"$d/rates.csv"
}
one=$src/tests/lets/lookup_one.xml
orders='id,cur,day\n1,EUR,1\n2,EUR,2\n3,USD,1\n4,EUR,1\n5,GBP,2\n'
lookup_dir lookup-sides "$orders" 'rate,day,cur\n1.5,1,EUR\n2.25,1,GBP\n0.5,3,EUR\n4,2,GBP\n'
printf 'id,cur,rate\n1,EUR,1.5\n4,EUR,1.5\n5,GBP,4\n' >"$d/expected/o.csv"
expect_run lookup-sides "$one" -
lookup_dir lookup-empty "$orders" 'cur,day,rate\n'
printf 'id,cur,rate\n' >"$d/expected/o.csv"
expect_run lookup-empty "$one" -

lookup_dir lookup-duplicate "$orders" 'cur,day,rate\nEUR,1,1.5\nEUR,2,1\n"EUR",1,2\n'
expect_fail lookup-duplicate "$d" "$one" \
  "sf-exec: error: operator 'lk': rates.csv:4: error: duplicate key (cur=\"EUR\", day=1), first on line 2"
lookup_dir lookup-no-column "$orders" 'cur,day,price\nEUR,1,1.5\n'
expect_fail lookup-no-column "$d" "$one" "sf-exec: error: operator 'lk': rates.csv:1: error: header has no column 'rate'"
lookup_dir lookup-field "$orders" 'cur,day,rate\nEUR,1,1.5\nEUR,x,1\n'
expect_fail lookup-field "$d" "$one" "sf-exec: error: operator 'lk': rates.csv:3: error: field 'day': 'x' is not an int"
lookup_dir lookup-no-file "$orders" ''
rm "$d/rates.csv"
expect_fail lookup-no-file "$d" "$one" "sf-exec: error: operator 'lk': cannot open 'rates.csv': No such file or directory"

# lookup-restore: a Lookup replicated at width 3 behind a paced Beacon (30000 orders in about 1.5 s),
# with checkpoints every 0.1 s, killed with SIGKILL after its first complete checkpoint, then
# restored at width 2: the output must be the sequential run's, byte for byte (each replica reads
# the table again when it opens; the Lookup has nothing in the checkpoints).
c=lookup-restore
d=$work/$c
mkdir -p "$d/out"
cat >"$d/g.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="lookup_restore">
  <schema name="Order"><attr name="id" type="int"/><attr name="cur" type="string"/><attr name="day" type="int"/></schema>
  <schema name="Rate"><attr name="cur" type="string"/><attr name="day" type="int"/><attr name="rate" type="double"/></schema>
  <schema name="Priced"><attr name="id" type="int"/><attr name="cur" type="string"/><attr name="rate" type="double"/></schema>
  <operator name="src" kind="Beacon">
    <output stream="Orders" schema="Order"/>
    <param name="count">30000</param>
    <param name="rate">20000</param>
    <set attr="id">seq</set>
    <set attr="cur">"c" + str(seq % 7)</set>
    <set attr="day">seq % 5</set>
  </operator>
  <operator name="lk" kind="Lookup">
    <input stream="Orders"/>
    <output stream="Priced" schema="Priced"/>
    <param name="file">rates.csv</param>
    <param name="schema">Rate</param>
    <param name="on">table.cur = cur and table.day = day</param>
    <set attr="rate">table.rate * double(id % 3)</set>
  </operator>
  <operator name="out" kind="FileSink">
    <input stream="Priced"/>
    <param name="file">out/o.csv</param>
  </operator>
</graph>
XML
{
  echo "day,cur,rate"
  for ((k = 0; k < 30; k++)); do ((k % 4 != 3)) && echo "$((k % 5)),c$((k / 5)),$k.5"; done
} >"$d/rates.csv"
"$B/sf-xform" -w 3 "$d/g.xml" -o "$d/g3.xml" && "$B/sf-xform" -w 2 "$d/g.xml" -o "$d/g2.xml" || exit 1
sf_exec_in "$build" "$d" "$d/g.xml" "$d/seq.log"
st=$?
mv "$d/out/o.csv" "$d/seq.csv" 2>/dev/null
(cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 g3.xml) >"$d/run1.log" 2>&1 &
pid=$!
for ((i = 0; i < 200; i++)); do
  compgen -G "$d/ck/ckpt-*/MANIFEST" >/dev/null && break
  sleep 0.05
done
{
  kill -9 "$pid"
  wait "$pid"
} 2>/dev/null
killed=$?
(cd "$d" && timeout -k 5 60 "$B/sf-exec" --restore --checkpoint-dir ck --checkpoint-interval 0.1 g2.xml) >"$d/run2.log" 2>&1
st2=$?
if [[ $st != 0 ]]; then
  sf_bad "$c" "the sequential run exited $st" "$d/seq.log"
elif [[ $killed != 137 ]]; then
  sf_bad "$c" "the run at width 3 was not killed by SIGKILL (status $killed): it ended too early" "$d/run1.log"
elif [[ $st2 != 0 ]]; then
  sf_bad "$c" "the restore at width 2 exited $st2" "$d/run2.log"
elif ! cmp -s "$d/seq.csv" "$d/out/o.csv"; then
  sf_bad "$c" "the restored output differs from the sequential run's" "$d/run2.log"
else
  sf_ok "$c" "killed at width 3 after a checkpoint, restored at width 2: $(wc -l <"$d/seq.csv") lines as sequential"
fi

echo "lets_lookups: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
