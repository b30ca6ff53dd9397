#!/usr/bin/env bash
# tests/bench/paper.sh [BUILD_DIR]: what bounds scaling: Split, Merge and a cross-host edge, and the widths and rates they predict.
# The paper reports linear scaling to 100 cores on 14 hosts; with 2 cores, this section measures what
# bounds scaling instead and predicts from it (docs/benchmarks.md, "The scaling model"):
#   1. sf-bench-split-merge (tests/bench/split_merge.c): the per-tuple CPU cost of the runtime's
#      Split (roundrobin, hash, seqpulse, shuffle) and Merge (roundrobin, seq, seqpulse), each alone
#      on one pinned core, at widths 2, 4 and 8 (figures) and 100 (for the model, in the report),
#      against the same work written by hand on plain arrays in the same rounds; SF_BENCH_SM_N
#      tuples (default 2000000).
#   2. One cross-host edge: the distributed section's graph (a Beacon on executor a; a Filter keeping
#      0.1 % and a FileSink on executor b) on loopback under tools/sf-launch at --batch 1024, against
#      the same graph in one process; SF_BENCH_N tuples, outputs checked identical.
#   3. The Work graph's CPU time per tuple at K = 2000 rounds in one thread (user + system time of
#      sf-exec over SF_BENCH_WORK_N tuples).
# From these: the largest useful width of a region for operator costs of 100 ns, 1 us and 10 us per
# tuple, for each kind of region, and the predicted throughput of the Work graph at K = 2000 on 14
# hosts with 100 channels, against linear scaling.
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

[ -x "$bin/sf-bench-split-merge" ] || bench_die "sf-bench-split-merge is not built"
SM_N=${SF_BENCH_SM_N:-2000000}
WN=${SF_BENCH_WORK_N:-200000}
HOSTS=14 CHANNELS=100 CAP=1024

# ---- 1. Split and Merge, each alone on one core ----
echo "1. Split and Merge alone on one core, $SM_N tuples, median of $RUNS rounds of thread CPU time,"
echo "   against the same work by hand; width $CHANNELS only for the model below"
"$bin/sf-bench-split-merge" "$SM_N" "$RUNS" 2 4 8 "$CHANNELS" >sm.tsv || bench_die "sf-bench-split-merge failed"
while IFS=$'\t' read -r piece what width sf base ns _; do
  [ "$width" != "$CHANNELS" ] || continue # the paper's width: for the model, in the report only
  kind=$([ "$piece" = split ] && echo Split || echo Merge)
  bench_figure "$piece.$what.w$width" "$sf" "$base" "M tuples/s" \
    "$kind $what at width $width alone on one core, $SM_N tuples, CPU time ($ns ns/tuple): the runtime's code against the same loop by hand"
done <sm.tsv

# model WHAT...: the scaling model (docs/benchmarks.md, "The scaling model") over sm.tsv. A piece's
# cost in ns per tuple at width w is interpolated linearly between the measured widths (2, 4, 8,
# 100), below 2 the cost at 2, past 100 extended along the last segment (never falling).
#   model cost PIECE STRATEGY W      that cost at width W
#   model wmax SPLIT MERGE COST_NS   the largest width w <= CAP whose w channels of an operator of that
#                                    cost do not outrun the serial ends: COST / w >= max(split(w),
#                                    merge(w)); 1 when no width pays
model() {
  awk -F'\t' -v what="$1" -v a1="$2" -v a2="$3" -v a3="$4" -v cap="$CAP" '
    { k = $1 " " $2; i = ++n[k]; x[k, i] = $3; y[k, i] = $6 }
    function at(p, s, w,   k, i, b) {
      k = p " " s
      if (!(k in n)) { print "paper: no figure for " k > "/dev/stderr"; exit 1 }
      if (w <= x[k, 1] || n[k] == 1) return y[k, 1]
      for (i = 2; i < n[k] && w > x[k, i]; i++) ;
      b = (y[k, i] - y[k, i - 1]) / (x[k, i] - x[k, i - 1])
      if (w > x[k, i] && b < 0) b = 0
      return y[k, i - 1] + b * (w - x[k, i - 1])
    }
    END {
      if (what == "cost") { printf "%.2f\n", at(a1, a2, a3); exit }
      best = 1
      for (w = 2; w <= cap; w++) {
        s = at("split", a1, w); m = at("merge", a2, w)
        if (a3 / w < (s > m ? s : m)) break
        best = w
      }
      print best
    }' sm.tsv
}

# ---- 2. one cross-host edge ----
p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
hosts="<host name=\"a\" address=\"127.0.0.1:$p1\"/><host name=\"b\" address=\"127.0.0.1:$p2\"/>"
cheap_graph "$N" "$hosts" ' host="a"' ' host="b"' out/edge_one.csv >edge-one.xml
cheap_graph "$N" "$hosts" ' host="a"' ' host="b"' out/edge_two.csv >edge-two.xml
bench_alternate -c "bench_same out/edge_two.csv out/edge_one.csv 'two executors'" \
  '"$bin/sf-exec" edge-one.xml' \
  '"$top/tools/sf-launch" --exec "$bin/sf-exec" --batch 1024 edge-two.xml'
t_one=${bench_med[0]} t_two=${bench_med[1]}
edge=$(mrate "$N" "$t_two")
echo "2. One cross-host edge (Beacon on executor a; Filter + FileSink on b, loopback, --batch 1024),"
echo "   $N tuples, median of $RUNS alternating runs"
printf '   one process      %8ss  %s\n' "$t_one" "$(rate "$N" "$t_one")"
printf '   two executors    %8ss  %s\n' "$t_two" "$(rate "$N" "$t_two")"
bench_figure edge "$edge" "$(mrate "$N" "$t_one")" "M tuples/s" \
  "one cross-host edge, $N tuples: Beacon on executor a, Filter + FileSink on b (loopback, batch 1024), against one process"

# ---- 3. Work at K = 2000 ----
work_graph "$WN" 2000 out/work.csv >work.xml
cpus=()
for r in $(seq "$RUNS"); do
  /usr/bin/time -f '%U %S' -o time.txt "$bin/sf-exec" work.xml || bench_die "the Work graph failed (round $r)"
  cpus+=("$(awk '{ printf "%.3f", $1 + $2 }' time.txt)")
done
work_cpu=$(bench_median "${cpus[@]}")
work_ns=$(awk -v s="$work_cpu" -v n="$WN" 'BEGIN { printf "%.0f", s / n * 1e9 }')
echo "3. Work graph at K = 2000 in one thread, $WN tuples: ${work_cpu}s of CPU, $work_ns ns per tuple"
bench_figure work2000 "$work_ns" - ns/tuple \
  "Beacon -> Work(2000) -> FileSink in one thread, $WN tuples: CPU time (user + system) per tuple, the median of $RUNS runs"

# ---- predictions ----
echo "4. The largest useful width of a region (docs/benchmarks.md, \"The scaling model\"): w channels"
echo "   of an operator of cost c per tuple outrun its serial Split or Merge once c / w < the larger"
echo "   of their costs per tuple at width w (interpolated between widths 2, 4, 8 and $CHANNELS, at most $CAP)"
printf '   %-48s %8s %8s %8s\n' region "100 ns" "1 us" "10 us"
for kind in roundrobin keyed seqpulse; do
  case $kind in
    roundrobin) sp=roundrobin mg=roundrobin what="stateless, every tuple out" ;;
    keyed) sp=hash mg=seq what="keyed, every tuple out" ;;
    seqpulse) sp=seqpulse mg=seqpulse what="may drop tuples" ;;
  esac
  row=()
  for c in 100 1000 10000; do
    w=$(model wmax "$sp" "$mg" "$c")
    row+=("$w")
    case $c in 100) label=100ns words="100 ns" ;; 1000) label=1us words="1 us" ;; *) label=10us words="10 us" ;; esac
    bench_figure "wmax.$kind.$label" "$w" - channels \
      "largest useful width of a $kind region ($what: Split $sp, Merge $mg) for an operator of $words per tuple, from the Split and Merge figures"
  done
  printf '   %-48s %8s %8s %8s\n' "$kind (Split $sp, Merge $mg)" "${row[@]}"
done

s100=$(model cost split roundrobin "$CHANNELS") m100=$(model cost merge roundrobin "$CHANNELS")
read -r t_chan t_split t_merge t_edge pred bound < <(awk -v w="$work_ns" -v c="$CHANNELS" -v h="$HOSTS" \
  -v s="$s100" -v m="$m100" -v e="$edge" 'BEGIN {
    rc = c / w * 1e3              # M tuples/s: every channel a core busy with Work
    rs = 1e3 / s; rm = 1e3 / m    # the serial Split and Merge at width c
    f = 1 - 1 / h                 # share of the channels on other hosts than the Split
    re = e / f                    # the Split thread encodes every batch to them
    p = rc; b = "the channels"
    if (rs < p) { p = rs; b = "the Split" }
    if (rm < p) { p = rm; b = "the Merge" }
    if (re < p) { p = re; b = "the cross-host edges" }
    gsub(/ /, "_", b)
    printf "%.4g %.4g %.4g %.4g %.4g %s\n", rc, rs, rm, re, p, b }')
bound=${bound//_/ }
echo "5. The Work graph at K = 2000 on $HOSTS hosts with $CHANNELS channels (roundrobin region), in M tuples/s:"
printf '   %-58s %8s\n' "channels: $CHANNELS / $work_ns ns" "$t_chan" \
  "Split roundrobin at width $CHANNELS ($s100 ns/tuple, measured)" "$t_split" \
  "Merge roundrobin at width $CHANNELS ($m100 ns/tuple, measured)" "$t_merge" \
  "cross-host edges: $edge / (1 - 1/$HOSTS) (the Split's thread sends)" "$t_edge"
echo "   predicted: $pred M tuples/s, bounded by $bound; linear scaling would be $t_chan"
bench_figure predicted "$pred" "$t_chan" "M tuples/s" \
  "Work graph at K = 2000 on $HOSTS hosts, $CHANNELS channels, predicted (bounded by $bound; Split $t_split, Merge $t_merge, edges $t_edge at width $CHANNELS) against linear scaling ($CHANNELS channels of Work)"
bench_end
