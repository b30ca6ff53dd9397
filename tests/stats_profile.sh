#!/usr/bin/env bash
# tests/stats_profile.sh BUILD_DIR SOURCE_DIR
#
# The CPU figures of `sf-exec --stats-json` (docs/running.md): tests/profile/regions.xml (two
# pipelines) run sequentially and rewritten at width 2. Every operator must have "cpu_ns" and
# "ns_per_tuple"; the file must give "cores" (at least 1) and one "threads" entry per thread (2
# sequentially, 8 at width 2: per pipeline its source with the Split, two channels, the Merge with
# the sink) whose operators' cpu_ns add up to the thread's (within 1 %: what the samples miss goes
# to the operator that drives the thread); and dear (2000 rounds of work per tuple) must cost at
# least 20 times what cheap (1 round) costs per tuple, in both runs. The ratio is about 300 here;
# nothing asserts nanoseconds, so a loaded machine does not fail it. At width 2 both Merges run on
# their channels' threads ("hosted": true, docs/design.md "Hosted merges"); with --merge-threads
# neither does, and the outputs are the same bytes.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
trap sf_cleanup EXIT
sf_need_bins "$build" sf-xform sf-exec || exit 1
sf_mktemp work sf-stats-profile || exit 1
export SF_SCHEMA=$src/schema/graph.xsd

failed=0
fail() {
  echo "FAIL: $*" >&2
  failed=1
}

# field FILE OPERATOR KEY: the number KEY of OPERATOR's line in the JSON (empty when missing)
field() {
  grep -F "{\"name\": \"$2\"," "$1" | head -n 1 | sed -n "s/.*\"$3\": \([0-9.]*\).*/\1/p"
}

# check LABEL FILE THREADS OPERATOR...: the figures every operator and thread must have
check() {
  local label=$1 json=$2 want_threads=$3 op v cores threads
  shift 3
  for op in "$@"; do
    for key in cpu_ns ns_per_tuple; do
      v=$(field "$json" "$op" "$key")
      [[ -n $v ]] || fail "$label: no $key for '$op' in $json"
    done
  done
  cores=$(sed -n 's/^  "cores": \([0-9]*\),$/\1/p' "$json")
  [[ -n $cores && $cores -ge 1 ]] || fail "$label: no \"cores\" (at least 1) in $json"
  # the threads: their number, and each one's operators adding up to its cpu_ns
  threads=$(sed -n '/"threads": \[/,/^  \]/p' "$json" | grep -c '"cpu_ns"')
  [[ $threads -eq $want_threads ]] || fail "$label: $threads threads in $json, want $want_threads"
  while IFS= read -r line; do
    local tcpu ops sum=0 o
    tcpu=$(sed -n 's/.*"cpu_ns": \([0-9]*\),.*/\1/p' <<<"$line")
    ops=$(sed -n 's/.*"operators": \[\(.*\)\]}.*/\1/p' <<<"$line" | tr -d '"' | tr ',' ' ')
    for o in $ops; do
      v=$(field "$json" "$o" cpu_ns)
      sum=$(awk -v a="$sum" -v b="${v:-0}" 'BEGIN { printf "%.0f", a + b }')
    done
    awk -v s="$sum" -v t="$tcpu" 'BEGIN { exit !(t > 0 && s >= 0.99 * t && s <= 1.01 * t) }' ||
      fail "$label: the operators of thread '$line' add up to $sum ns, not its $tcpu"
  done < <(sed -n '/"threads": \[/,/^  \]/p' "$json" | grep '"cpu_ns"')
}

# dearer LABEL FILE DEAR CHEAP: DEAR's ns_per_tuple is at least 20 times CHEAP's
dearer() {
  local d c
  d=$(field "$2" "$3" ns_per_tuple)
  c=$(field "$2" "$4" ns_per_tuple)
  awk -v d="${d:-0}" -v c="${c:-0}" 'BEGIN { exit !(d > 0 && d >= 20 * c) }' ||
    fail "$1: '$3' costs $d ns per tuple, '$4' $c: want at least 20 times"
}

cd "$work" || exit 1
graph=$src/tests/profile/regions.xml
if ! "$build/bin/sf-exec" --stats-json seq.json "$graph" 2>seq.err; then
  fail "the sequential run failed: $(cat seq.err)"
else
  check sequential seq.json 2 jobs cheap light tasks dear heavy
  dearer sequential seq.json dear cheap
fi

"$build/bin/sf-xform" -w 2 -o par.xml "$graph" || fail "sf-xform -w 2 failed"
if ! "$build/bin/sf-exec" --stats-json par.json par.xml 2>par.err; then
  fail "the width-2 run failed: $(cat par.err)"
else
  check "width 2" par.json 8 jobs r1.split 'cheap[0]' 'cheap[1]' r1.merge light tasks r2.split 'dear[0]' 'dear[1]' \
    r2.merge heavy
  dearer "width 2" par.json 'dear[0]' 'cheap[0]'
  hosted=$(sed -n '/"threads": \[/,/^  \]/p' par.json | grep '"hosted": true' | sed -n 's/.*"name": "\([^"]*\)".*/\1/p' | tr '\n' ' ')
  [[ $hosted == "r1.merge r2.merge " ]] || fail "width 2: the hosted merges are '$hosted', want 'r1.merge r2.merge '"
  mkdir -p own && cp light.csv heavy.csv own/
  if ! "$build/bin/sf-exec" --merge-threads --stats-json own.json par.xml 2>own.err; then
    fail "the width-2 run with --merge-threads failed: $(cat own.err)"
  else
    check "width 2, --merge-threads" own.json 8 r1.merge r2.merge
    ! grep -q '"hosted"' own.json || fail "width 2, --merge-threads: a merge is hosted in own.json"
    cmp -s light.csv own/light.csv && cmp -s heavy.csv own/heavy.csv ||
      fail "width 2: the outputs with --merge-threads differ from those without"
  fi
fi

if [[ $failed -ne 0 ]]; then
  sf_keep "$work"
  exit 1
fi
echo "stats_profile: ok"
