#!/usr/bin/env bash
# tests/bench/metrics.sh [BUILD_DIR]: the cost of --metrics, idle and scraped at 10 Hz.
# The chain (Beacon -> Functor -> Filter -> FileSink, SF_BENCH_N tuples) at width 2, so that its
# Merge times its stalls: without --metrics, with --metrics and no scraper, and with a scraper
# fetching /metrics every 0.1 s (a curl loop, started before sf-exec and stopped after it), in
# alternating rounds; the figures are the best of SF_BENCH_RUNS rounds, as ratios against the run
# without --metrics. The outputs are checked identical after every round. The endpoint listens
# on 127.0.0.1:SF_BENCH_METRICS_PORT (default: a port from 18400 to 18499).
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"
command -v curl >/dev/null || bench_skip "curl is not installed"

port=${SF_BENCH_METRICS_PORT:-$((18400 + RANDOM % 100))}
for mode in none idle scraped; do
  chain_graph "$N" "out/$mode.csv" >"chain_$mode.xml"
  "$bin/sf-xform" -w 2 "chain_$mode.xml" -o "chain_${mode}_w2.xml"
done
grep -q 'kind="Merge"' chain_none_w2.xml || bench_die "expected a parallel region (a Merge) at width 2"

# timed MODE ARGS...: sf-exec ARGS, its user + system seconds appended to cpu_MODE.txt
timed() {
  local mode=$1
  shift
  /usr/bin/time -a -o "cpu_$mode.txt" -f '%U %S' "$bin/sf-exec" "$@"
}
# scraped FILE: sf-exec --metrics on FILE while a loop fetches /metrics every 0.1 s; the loop's
# successful scrapes are counted in scrapes.txt (one line each)
scraped() {
  (while :; do
     curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && echo >>scrapes.txt
     sleep 0.1
   done) &
  local loop=$! rc=0
  timed scraped --metrics "127.0.0.1:$port" "$1" || rc=$?
  kill "$loop" 2>/dev/null
  wait "$loop" 2>/dev/null || true
  return $rc
}
: >scrapes.txt
: >cpu_none.txt; : >cpu_idle.txt; : >cpu_scraped.txt
bench_alternate -c 'bench_same out/idle.csv out/none.csv "--metrics"; bench_same out/scraped.csv out/none.csv "--metrics, scraped"' \
  'timed none chain_none_w2.xml' \
  'timed idle --metrics "127.0.0.1:$port" chain_idle_w2.xml' \
  'scraped chain_scraped_w2.xml'
t0=${bench_best[0]} t1=${bench_best[1]} t2=${bench_best[2]}
scrapes=$(wc -l <scrapes.txt)
cpu() { awk '{ s = $1 + $2; if (NR == 1 || s < b) b = s } END { printf "%.2f", b }' "cpu_$1.txt"; } # the least
echo "metrics: the chain at width 2 (a round-robin Merge), $N tuples, best of $RUNS alternating rounds (outputs identical);"
echo "   wall time, and sf-exec's own CPU time (user + system, the least): the scraper's curl processes"
echo "   share the machine's CPUs with it"
printf '   no --metrics                  %8ss  %s  cpu %ss\n' "$t0" "$(rate "$N" "$t0")" "$(cpu none)"
printf '   --metrics, no scraper         %8ss  %s  cpu %ss  %s of the first\n' "$t1" "$(rate "$N" "$t1")" "$(cpu idle)" \
  "$(ratio "$t0" "$t1")"
printf '   --metrics, scraped at 10 Hz   %8ss  %s  cpu %ss  %s of the first (%d scrapes in %d rounds)\n' "$t2" \
  "$(rate "$N" "$t2")" "$(cpu scraped)" "$(ratio "$t0" "$t2")" "$scrapes" "$RUNS"
what="chain at width 2, $N tuples, best of $RUNS"
bench_figure idle "$(mrate "$N" "$t1")" "$(mrate "$N" "$t0")" "M tuples/s" \
  "$what: sf-exec --metrics without a scraper against no --metrics"
bench_figure scraped "$(mrate "$N" "$t2")" "$(mrate "$N" "$t0")" "M tuples/s" \
  "$what: sf-exec --metrics scraped every 0.1 s (curl) against no --metrics"
bench_end
