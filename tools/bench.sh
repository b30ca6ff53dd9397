#!/usr/bin/env bash
# tools/bench.sh: runs the benchmark sections (tests/bench/SECTION.sh, over tests/bench/lib.sh),
# each of which measures StreamFission against a baseline in the same run, and collects their
# figure lines. A whole run (no --only) also writes the table of figures into the README, between
# the lines `<!-- bench-table begin -->` and `<!-- bench-table end -->`. docs/benchmarks.md says
# what each section measures, the environment variables and the line format.
#
# Standard output: one run line first, then every section's figure and load lines (tests/bench/lib.sh
# describes those):
#   run<TAB>DATE<TAB>COMMIT<TAB>CPUS<TAB>CPU MODEL<TAB>MEMORY<TAB>SETTINGS
# DATE in UTC, COMMIT from git describe (-dirty when the tree has changes), CPUS from nproc, the
# model from /proc/cpuinfo, MEMORY from /proc/meminfo (GiB), SETTINGS the SF_BENCH_* variables set.
# Standard error: the sections' reports.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
sections=(chain scaling merge memory distributed tbb nexmark paper slide number latency xform eval ckpt keys eventtime nexmark_builtin kafka metrics)

usage() {
  cat <<'TXT'
usage: tools/bench.sh [--only NAME[,NAME...]] [--readme FILE | --no-readme] [BUILD_DIR]
       tools/bench.sh --from FIGURES [--readme FILE]
       tools/bench.sh --list | --help

Runs the benchmark sections (tests/bench/NAME.sh; all of them, in the order of --list, unless
--only names some) on BUILD_DIR (default $SF_BUILD, then ./build; built first if needed), prints
their figure lines on standard output and their reports on standard error. A whole run that
succeeded writes its table of figures into README.md (or FILE) between the lines
<!-- bench-table begin --> and <!-- bench-table end -->.

  --only NAME[,NAME...]  run only these sections (may be repeated; SF_BENCH_ONLY=NAME does the same)
  --readme FILE          the file whose table a whole run replaces (default: the checkout's README.md)
  --no-readme            write no table
  --from FIGURES         run nothing: write the table from the lines of an earlier run (a file, - for
                         standard input)
  --list                 the sections, one a line, with what each measures
  --help                 this text

Environment: SF_BENCH_N (tuples; default 5000000), SF_BENCH_RUNS (rounds of each timing; default 3)
and the sections' own variables: docs/benchmarks.md. Exit status: 0 when every section measured
or was skipped (a peer not built), 1 when one failed (its report says why), 2 on bad usage.
TXT
}
die_usage() { echo "bench: $*" >&2; echo "usage: tools/bench.sh [--only NAME] [--readme FILE] [BUILD_DIR] (see --help)" >&2; exit 2; }
what_of() { sed -n '2s/^# tests\/bench\/[a-z0-9_]*\.sh \[BUILD_DIR\]: //p' "$top/tests/bench/$1.sh"; }

only=() readme="" no_readme=0 from="" build_arg=""
while [ $# -gt 0 ]; do
  case $1 in
    --only) [ $# -ge 2 ] || die_usage "--only needs a section name"; IFS=, read -r -a names <<<"$2"; only+=("${names[@]}"); shift 2 ;;
    --only=*) IFS=, read -r -a names <<<"${1#--only=}"; only+=("${names[@]}"); shift ;;
    --readme) [ $# -ge 2 ] || die_usage "--readme needs a file"; readme=$2; shift 2 ;;
    --no-readme) no_readme=1; shift ;;
    --from) [ $# -ge 2 ] || die_usage "--from needs a file"; from=$2; shift 2 ;;
    --list) for s in "${sections[@]}"; do printf '%-12s %s\n' "$s" "$(what_of "$s")"; done; exit 0 ;;
    -h|--help) usage; exit 0 ;;
    -*) die_usage "unknown option '$1'" ;;
    *) [ -z "$build_arg" ] || die_usage "one build directory only"; build_arg=$1; shift ;;
  esac
done
if [ ${#only[@]} -eq 0 ] && [ -n "${SF_BENCH_ONLY:-}" ]; then IFS=, read -r -a only <<<"$SF_BENCH_ONLY"; fi
for s in "${only[@]}"; do
  [[ " ${sections[*]} " == *" $s "* ]] ||
    die_usage "no section '$s' (tools/bench.sh --list names them)"
done
[ -z "$from" ] || [ ${#only[@]} -eq 0 ] || die_usage "--from writes a table: it takes no --only"
[ -z "$readme" ] || [ "$no_readme" = 0 ] || die_usage "--readme and --no-readme together"

# bench_table FIGURES: the table of a run in Markdown, from its run, figure and load lines
bench_table() {
  awk -F'\t' '
    function cell(s) { gsub(/\|/, "\\|", s); return s }
    $1 == "run" { date = $2; commit = $3; cpus = $4; model = $5; mem = $6; settings = $7 }
    $1 == "figure" { n++; name[n] = $2; value[n] = $3; base[n] = $4; unit[n] = $5; what[n] = $6
                     split($2, p, "."); section[n] = p[1] }
    $1 == "load" { others[$2] = $3 }
    END {
      if (date == "") { print "bench: no run line in the figures" > "/dev/stderr"; exit 1 }
      printf "Figures of `tools/bench.sh` on %s, commit %s, on %s CPUs (%s) with %s of memory.\n", date, commit, cpus, cell(model), mem
      if (settings != "") printf "Settings: `%s`.\n", settings
      print "Each figure is StreamFission'"'"'s against a baseline measured in the same run ([docs/benchmarks.md](docs/benchmarks.md)"
      print "says what each measures); timings are medians of alternating runs; *ratio* is sf / baseline;"
      print "*others* is how many CPUs other processes kept busy on average during the section."
      print ""
      print "| figure | sf | baseline | ratio | others |"
      print "|---|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        num = "^[0-9.eE+-]+$"
        r = (base[i] ~ num && base[i] + 0 != 0 && value[i] ~ num) ? sprintf("%.2f", value[i] / base[i]) : "-"
        sep = unit[i] == "x" ? "" : " "
        printf "| `%s`: %s | %s | %s | %s | %s |\n", name[i], cell(what[i]), value[i] sep unit[i],
          base[i] == "-" ? "-" : base[i] sep unit[i], r, section[i] in others ? others[section[i]] : "-"
      }
    }' "$1"
}
# bench_replace FILE TABLE: replaces what lies between FILE's bench-table markers with TABLE's lines
bench_replace() {
  local b e
  b=$(grep -c -x '<!-- bench-table begin -->' "$1" || true) e=$(grep -c -x '<!-- bench-table end -->' "$1" || true)
  { [ "$b" = 1 ] && [ "$e" = 1 ]; } || { echo "bench: $1 needs each bench-table marker line exactly once (has $b begin, $e end)" >&2; return 1; }
  awk -v table="$2" '
    $0 == "<!-- bench-table begin -->" { print; while ((getline line < table) > 0) print line; skip = 1; next }
    $0 == "<!-- bench-table end -->" { if (!skip) exit 1; skip = 0 }
    !skip' "$1" >"$1.bench-tmp" || { rm -f "$1.bench-tmp"; echo "bench: $1: the end marker comes before the begin marker" >&2; return 1; }
  cat "$1.bench-tmp" >"$1" && rm -f "$1.bench-tmp"
}
# bench_write FIGURES: the table into the README, unless --no-readme
bench_write() {
  [ "$no_readme" = 0 ] || return 0
  local file=${readme:-$top/README.md} table
  if [ -z "$readme" ] && ! grep -q -x '<!-- bench-table begin -->' "$file"; then
    echo "bench: $file has no bench-table markers: no table written" >&2
    return 0
  fi
  table=$(mktemp "${TMPDIR:-/tmp}/sf-bench-table.XXXXXX")
  bench_table "$1" >"$table" && bench_replace "$file" "$table" && echo "bench: table written into $file" >&2
  local rc=$?
  rm -f "$table"
  return $rc
}

if [ -n "$from" ]; then
  if [ "$from" = - ]; then from=/dev/stdin; fi
  figures=$(mktemp "${TMPDIR:-/tmp}/sf-bench-figures.XXXXXX")
  trap 'rm -f "$figures"' EXIT
  cat "$from" >"$figures"
  bench_write "$figures"
  exit
fi

build=${build_arg:-${SF_BUILD:-$top/build}}
# The TBB peer (section tbb) needs packages of its own, installed here rather than for every build;
# setup.sh configures again, so CMake finds them.
tbb_missing=0
if [ "${SF_BENCH_TBB:-1}" != 0 ] && [ -f "$build/CMakeCache.txt" -o ! -e "$build" ]; then
  for p in libtbb-dev g++; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || tbb_missing=1
  done
fi
if [ ! -x "$build/bin/sf-exec" ] || [ "$tbb_missing" = 1 ]; then
  SF_BUILD=$build SF_SETUP_EXTRA="libtbb-dev g++" "$top/tools/setup.sh" >&2
elif [ -f "$build/CMakeCache.txt" ]; then # up to date: the figures are of the sources as they are
  cmake --build "$build" -j "$(nproc)" >"$build/bench-build.log" 2>&1 ||
    { tail -n 30 "$build/bench-build.log" >&2; echo "bench: the build failed ($build/bench-build.log)" >&2; exit 1; }
fi
build=$(cd "$build" && pwd)

figures=$(mktemp "${TMPDIR:-/tmp}/sf-bench-figures.XXXXXX")
trap 'rm -f "$figures"' EXIT
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
settings=$(env | { grep '^SF_BENCH_' || true; } | { grep -v '^SF_BENCH_ONLY=' || true; } | sort | tr '\n' ' ' | sed 's/ $//')
printf 'run\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u '+%F %H:%M UTC')" "$commit" "$(nproc)" "${model:-unknown}" "$mem" \
  "$settings" | tee "$figures"
echo "StreamFission benchmarks: $(nproc) CPUs (${model:-unknown}), $mem, commit $commit, ${SF_BENCH_RUNS:-3} rounds of each timing, $(date -u '+%F %H:%M UTC')" >&2

todo=("${only[@]}")
[ ${#todo[@]} -gt 0 ] || todo=("${sections[@]}")
failed=() skipped=()
for s in "${todo[@]}"; do
  echo >&2
  echo "== $s: $(what_of "$s")" >&2
  set +e
  bash "$top/tests/bench/$s.sh" "$build" | tee -a "$figures"
  rc=${PIPESTATUS[0]}
  set -e
  case $rc in
    0) ;;
    77) skipped+=("$s") ;;
    *) failed+=("$s"); echo "bench: section $s failed (exit status $rc)" >&2 ;;
  esac
done
echo >&2
[ ${#skipped[@]} -eq 0 ] || echo "bench: skipped: ${skipped[*]}" >&2
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench: failed: ${failed[*]}; no table written" >&2
  exit 1
fi
if [ ${#only[@]} -eq 0 ]; then bench_write "$figures"; fi
