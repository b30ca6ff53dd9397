# tests/bench/lib.sh: the harness every benchmark section (tests/bench/SECTION.sh) sources.
#
# A section is run as `bash tests/bench/SECTION.sh [BUILD_DIR]` (tools/bench.sh runs them; BUILD_DIR
# defaults to $SF_BUILD, then ./build of the checkout). It measures StreamFission against a baseline
# in the same run: there are no timed assertions (the machine may be shared and noisy), only figures.
#
# Output. Standard output carries machine-readable lines only, fields separated by one TAB:
#   figure<TAB>NAME<TAB>VALUE<TAB>BASELINE<TAB>UNIT<TAB>WHAT
#     one per figure. NAME is SECTION.WHICH (letters, digits and . _ -), the same from run to run;
#     VALUE is StreamFission's figure; BASELINE the same figure of the baseline, measured in the same
#     run, or - when the figure has none; UNIT the unit of both (M tuples/s, s, ns/tuple, us, MiB,
#     bytes/key, x); WHAT says in words what was measured against what (free text, no TAB).
#     Timings are the median of SF_BENCH_RUNS rounds in which StreamFission and its baseline run
#     alternately (bench_alternate), so that both meet the same load, unless WHAT says otherwise.
#   load<TAB>SECTION<TAB>OTHERS<TAB>LOADAVG<TAB>SECONDS
#     once, last: the foreign load while the section ran. OTHERS is the number of CPUs that other
#     processes kept busy on average (the machine's busy time in /proc/stat, steal included, less
#     the section's own user and system time, over its wall time: 0 on a quiet machine, at most
#     nproc); LOADAVG the 1-minute load average at the end (it counts the section's own work too);
#     SECONDS the section's wall time.
# tools/bench.sh prints one run line (date, commit, machine) before the sections' lines.
# The human-readable report goes to standard error: sourcing this file points standard output at
# standard error and keeps the real one as descriptor 3, where bench_figure and bench_end write.
# A section exits 0 when it measured everything, 77 when it is skipped (a program is not built;
# it says why), and 1 on a failure (a command failed, or outputs that must be identical differ).
#
# Environment shared by the sections: SF_BENCH_N (tuples of the chain, merge, distribution and
# TBB sections; default 5000000) and SF_BENCH_RUNS (rounds of each timing; default 3). The other
# variables belong to one section each (docs/benchmarks.md lists them).
# shellcheck shell=bash disable=SC2034 # the variables set here are for the sections
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-${SF_BUILD:-$top/build}}" && pwd)
bin=$build/bin
[ -x "$bin/sf-exec" ] || { echo "bench: $bin/sf-exec is missing (build first: tools/setup.sh)" >&2; exit 1; }
N=${SF_BENCH_N:-5000000}
RUNS=${SF_BENCH_RUNS:-3}
bench_section=$(basename "$0" .sh)
work=$(mktemp -d "${TMPDIR:-/tmp}/sf-bench-$bench_section.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"
cd "$work"
exec 3>&1 1>&2

header='<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="bench">'

bench_die() { echo "bench: $bench_section: $*" >&2; exit 1; }
bench_skip() { echo "bench: $bench_section skipped: $*" >&2; exit 77; }

# Microseconds since the epoch (bash's clock: no process started).
now_us() { echo "${EPOCHREALTIME/./}"; }
# Nanoseconds since the epoch, for the sections that time something themselves.
now_ns() { date +%s%N; }

# ---- figures and the foreign load ----
# bench_figure NAME VALUE BASELINE UNIT WHAT: one figure line on the real standard output.
bench_figure() {
  case $2$3$4$5 in *$'\t'*|*$'\n'*) bench_die "figure $1: a field holds a TAB or a newline" ;; esac
  printf 'figure\t%s\t%s\t%s\t%s\t%s\n' "$bench_section.$1" "$2" "$3" "$4" "$5" >&3
}
# Busy CPU time of the whole machine so far, in clock ticks: user, nice, system, irq, softirq and
# steal (another virtual machine's time on our CPUs is load we meet too); idle and iowait are not.
bench_busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
bench_t0=$(now_us)
bench_busy0=$(bench_busy_ticks)
# bench_end: the load line; the last call of a section that measured everything.
bench_end() {
  local t1 busy1 hz own others
  t1=$(now_us)
  busy1=$(bench_busy_ticks)
  hz=$(getconf CLK_TCK)
  times >"$work/times.txt" # this shell's and its waited-for children's user and system time
  own=$(awk '{ for (i = 1; i <= NF; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } } END { print s }' \
    "$work/times.txt")
  others=$(awk -v b=$((busy1 - bench_busy0)) -v hz="$hz" -v own="$own" -v us=$((t1 - bench_t0)) -v n="$(nproc)" \
    'BEGIN { o = (b / hz - own) / (us / 1e6); if (o < 0) o = 0; if (o > n) o = n; printf "%.2f", o }')
  printf 'load\t%s\t%s\t%s\t%s\n' "$bench_section" "$others" "$(cut -d' ' -f1 /proc/loadavg)" \
    "$(awk -v us=$((t1 - bench_t0)) 'BEGIN { printf "%.1f", us / 1e6 }')" >&3
  echo "   (other processes kept $others of $(nproc) CPUs busy on average during this section)"
}

# ---- timings ----
# bench_alternate [-r ROUNDS] [-c CHECK] CMD...: runs the commands one after the other, ROUNDS
# rounds (default $RUNS), so that every command meets the same load as the others. Each CMD and
# CHECK is a shell command evaluated here (eval; standard output discarded); CHECK runs after each
# round, untimed (e.g. bench_same on the outputs). A failed command ends the section. Sets, for the
# i-th command (from 0), bench_med[i] and bench_best[i] (the median and the least of its times, in
# seconds with 3 decimals) and bench_times[i] (every round's seconds, space-separated).
bench_alternate() {
  local rounds=$RUNS check="" i r t0 t1 opt OPTIND=1
  while getopts r:c: opt; do
    case $opt in r) rounds=$OPTARG ;; c) check=$OPTARG ;; *) bench_die "bench_alternate: bad option" ;; esac
  done
  shift $((OPTIND - 1))
  local cmds=("$@")
  bench_times=() bench_med=() bench_best=()
  for i in "${!cmds[@]}"; do bench_times[i]=""; done
  for r in $(seq "$rounds"); do
    for i in "${!cmds[@]}"; do
      t0=$(now_us)
      eval "${cmds[i]}" >/dev/null || bench_die "failed (round $r): ${cmds[i]}"
      t1=$(now_us)
      bench_times[i]+="$(awk -v us=$((t1 - t0)) 'BEGIN { printf "%.3f", us / 1e6 }') "
    done
    if [ -n "$check" ]; then eval "$check"; fi
  done
  for i in "${!cmds[@]}"; do
    # shellcheck disable=SC2086 # one word per round
    bench_med[i]=$(bench_median ${bench_times[i]})
    # shellcheck disable=SC2086
    bench_best[i]=$(printf '%s\n' ${bench_times[i]} | sort -g | head -n 1)
  done
}
# bench_median VALUE...: the median (of an even count, the lower of the two middle values).
bench_median() {
  [ $# -gt 0 ] || bench_die "bench_median: no values"
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
# bench_same FILE BASELINE-FILE WHAT: ends the section unless the two files are byte-identical.
bench_same() { cmp -s "$1" "$2" || bench_die "$3: $1 differs from $2"; }

# ---- numbers ----
# mrate N SECONDS: millions of tuples per second, 4 significant digits (for figures).
mrate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.4g", n / s / 1e6 }'; }
# rate N SECONDS: the same for the report, with its unit.
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f M tuples/s", n / s / 1e6 }'; }
# ratio A B: A / B with 2 decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# percent A B: A / B as a whole percentage, e.g. "42 %".
percent() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f %%", 100 * a / b }'; }

# ---- graphs shared by sections ----
chain_graph() { # N FILE: Beacon -> Functor -> Filter -> FileSink (the chain and memory sections)
  cat <<XML
$header
  <schema name="In"><attr name="k" type="int"/><attr name="v" type="int"/><attr name="x" type="double"/></schema>
  <schema name="Out"><attr name="k" type="int"/><attr name="y" type="int"/><attr name="z" type="double"/></schema>
  <operator name="src" kind="Beacon">
    <output stream="A" schema="In"/>
    <param name="count">$1</param>
    <set attr="k">seq % 100</set>
    <set attr="v">rand(seq) % 1000</set>
    <set attr="x">double(seq) * 0.5</set>
  </operator>
  <operator name="f" kind="Functor">
    <input stream="A"/>
    <output stream="B" schema="Out"/>
    <set attr="y">v * 3 + k</set>
    <set attr="z">x / 2.0</set>
  </operator>
  <operator name="keep" kind="Filter">
    <input stream="B"/>
    <output stream="C" schema="Out"/>
    <param name="where">y % 7 != 0</param>
  </operator>
  <operator name="sink" kind="FileSink">
    <input stream="C"/>
    <param name="file">$2</param>
  </operator>
</graph>
XML
}

work_graph() { # N ROUNDS FILE: Beacon -> Work -> FileSink (the scaling and TBB sections)
  cat <<XML
$header
  <schema name="Job"><attr name="id" type="int"/><attr name="cost" type="int"/></schema>
  <operator name="jobs" kind="Beacon">
    <output stream="Jobs" schema="Job"/>
    <param name="count">$1</param>
    <set attr="id">seq</set>
    <set attr="cost">rand(seq) % 100</set>
  </operator>
  <operator name="burn" kind="Work">
    <input stream="Jobs"/>
    <output stream="Done" schema="Job"/>
    <param name="iterations">$2</param>
  </operator>
  <operator name="sink" kind="FileSink">
    <input stream="Done"/>
    <param name="file">$3</param>
  </operator>
</graph>
XML
}

cheap_graph() { # N HOSTS SRC-HOST-ATTR REST-HOST-ATTR FILE: the chain's tuples, one cheap filter, few rows out
  # (the distributed and paper sections: HOSTS the <host> elements, the attributes put the Beacon
  # on one host and the Filter and FileSink on another)
  cat <<XML
$header
  <schema name="In"><attr name="k" type="int"/><attr name="v" type="int"/><attr name="x" type="double"/></schema>
  $2
  <operator name="src" kind="Beacon"$3>
    <output stream="A" schema="In"/>
    <param name="count">$1</param>
    <set attr="k">seq % 100</set>
    <set attr="v">rand(seq) % 1000</set>
    <set attr="x">double(seq) * 0.5</set>
  </operator>
  <operator name="rare" kind="Filter"$4>
    <input stream="A"/>
    <output stream="B" schema="In"/>
    <param name="where">v == 7</param>
  </operator>
  <operator name="sink" kind="FileSink"$4>
    <input stream="B"/>
    <param name="file">$5</param>
  </operator>
</graph>
XML
}
