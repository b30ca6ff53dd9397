#!/usr/bin/env bash
# tests/bench/xform.sh [BUILD_DIR]: sf-xform on large generated graphs against xmllint --schema.
# Transformer scale. `sf-xform -w 4 --explain --dot` on generated
# graphs (forests of chains of Functor, Filter, keyed Aggregate, Work and stateful Functor with
# FileSink taps, tests/bench/biggraph.c) of SF_BENCH_XFORM_N operators (default 100000) and a tenth
# of that, against `xmllint --noout --schema schema/graph.xsd` on the same files, run alternately:
# wall time, CPU time (user + system) and peak memory, and how time grows with the graph.
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh" "$@"

[ -x /usr/bin/time ] || bench_die "/usr/bin/time is missing (tools/setup.sh installs package time)"
command -v xmllint >/dev/null || bench_die "xmllint is missing (package libxml2-utils)"
# measure NAME CMD...: runs CMD once under /usr/bin/time and appends its wall and user+system
# seconds to NAME_walls and NAME_cpus, its peak resident KiB to NAME_rsss.
measure() {
  local -n walls=${1}_walls cpus=${1}_cpus rsss=${1}_rsss
  local wall user sys kib
  shift
  /usr/bin/time -o times.txt -f '%e %U %S %M' "$@" >/dev/null 2>&1 || bench_die "failed: $*"
  read -r wall user sys kib <times.txt
  walls+=("$wall") cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')") rsss+=("$kib")
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
large=${SF_BENCH_XFORM_N:-100000} small=$(( ${SF_BENCH_XFORM_N:-100000} / 10 ))
echo "7. sf-xform -w 4 --explain --dot on generated graphs, against xmllint --noout --schema on the same file,"
echo "   median of $RUNS alternating runs (memory: the largest peak)"
printf '   %-9s %-9s %10s %10s %7s %10s %10s %7s %11s %11s %7s\n' operators bytes "xform s" "xmllint s" ratio \
  "xform cpu" "lint cpu" ratio "xform KiB" "lint KiB" ratio
declare -A wall cpu
for n in "$small" "$large"; do
  "$bin/sf-bench-biggraph" "$n" >"big$n.xml"
  "$bin/sf-xform" --check "big$n.xml" || bench_die "the generated graph of $n operators is refused"
  xf_walls=() xf_cpus=() xf_rsss=() xl_walls=() xl_cpus=() xl_rsss=()
  for _ in $(seq "$RUNS"); do
    measure xf "$bin/sf-xform" -w 4 --explain --dot "big$n.dot" -o "big$n.out.xml" "big$n.xml"
    measure xl xmllint --noout --schema "$top/schema/graph.xsd" "big$n.xml"
  done
  xf_wall=$(bench_median "${xf_walls[@]}") xl_wall=$(bench_median "${xl_walls[@]}")
  xf_cpu=$(bench_median "${xf_cpus[@]}") xl_cpu=$(bench_median "${xl_cpus[@]}")
  xf_rss=$(printf '%s\n' "${xf_rsss[@]}" | sort -n | tail -n 1) xl_rss=$(printf '%s\n' "${xl_rsss[@]}" | sort -n | tail -n 1)
  printf '   %-9s %-9s %10s %10s %6sx %10s %10s %6sx %11s %11s %6sx\n' "$n" "$(stat -c %s "big$n.xml")" \
    "$xf_wall" "$xl_wall" "$(ratio "$xf_wall" "$xl_wall")" "$xf_cpu" "$xl_cpu" "$(ratio "$xf_cpu" "$xl_cpu")" \
    "$xf_rss" "$xl_rss" "$(ratio "$xf_rss" "$xl_rss")"
  wall[$n]=$xf_wall cpu[$n]=$xf_cpu
  size=$([ "$n" = "$large" ] && echo large || echo small)
  what="sf-xform against xmllint --schema, $n operators"
  bench_figure "$size.wall" "$xf_wall" "$xl_wall" s "$what: wall time"
  bench_figure "$size.cpu" "$xf_cpu" "$xl_cpu" s "$what: user + system time"
  bench_figure "$size.memory" "$(mib "$xf_rss")" "$(mib "$xl_rss")" MiB "$what: peak memory (the largest)"
  rm -f "big$n.dot" "big$n.out.xml"
done
printf '   %s/%s: time %sx (wall), %sx (cpu); linear is 10 (targets: time <= 3x xmllint, growth <= 12, memory <= 3x)\n' \
  "$large" "$small" "$(ratio "${wall[$large]}" "${wall[$small]}")" "$(ratio "${cpu[$large]}" "${cpu[$small]}")"
bench_figure growth.wall "$(ratio "${wall[$large]}" "${wall[$small]}")" 10 x \
  "sf-xform's wall time, $large over $small operators, against linear growth"
bench_figure growth.cpu "$(ratio "${cpu[$large]}" "${cpu[$small]}")" 10 x \
  "sf-xform's CPU time, $large over $small operators, against linear growth"
bench_end
