#!/usr/bin/env bash
# tests/e2e_random.sh BUILD_DIR SOURCE_DIR [COUNT [FIRST_SEED]]
#
# The promise of StreamFission on random graphs: for COUNT seeds (default 200) from FIRST_SEED
# (default 1), generate a graph with `sf-randgraph SEED` (most have several sources and fan-ins
# before, between or after regions), run it with sf-exec in a scratch directory, then rewrite it
# with `sf-xform -w W` for W = 1..4, run each rewritten graph in a fresh out/ and require the same
# output files, byte for byte. Everything runs in one process per graph
# (sf-exec without --host); at most SF_JOBS (default 2) seeds run at once.
#
# On a failure it prints the seed, the width, what differs and the full original graph, and goes
# on with the next seed; the exit status is 1 if any seed failed. Reproduce one seed with
#     bash tests/e2e_random.sh BUILD_DIR SOURCE_DIR 1 SEED
# or by hand:
#     mkdir out tables && sf-randgraph --tables $PWD/tables SEED > g.xml && sf-exec g.xml
#     (and sf-xform -w W g.xml -o p.xml ...)
#
# The graphs are made with `--tables SEED_DIR/tables`, so that some of them hold Lookups (their
# tables written there); others start with a Join of two timed Beacons, and about a quarter call
# string and time functions, and others event-time windows (tumbling, hopping and session time
# windows, stacked, sometimes after a fan-in by time; running Aggregates; count_distinct, arg_max,
# arg_min; sf-randgraph's header). Each seed's line says which ("[join]", "[lookup]",
# "[functions]", "[windows]"); at the end the counts of graphs with each, and (from 20 seeds on) a
# run without one graph of each fails.
#
# Seeds in SF_TIGHT_SEEDS (default "17": it deadlocked so once) that are in the range also run at
# the last width with `sf-exec --batch 1 --queue 1`, where every queue is full at once.
#
# Environment: SF_RANDOM_COUNT (COUNT when not given, default 200; the sanitizer pass of
# tools/test.sh runs fewer), SF_JOBS (parallel seeds, default 2), SF_WIDTHS (default "1 2 3 4"),
# SF_RUN_TIMEOUT (seconds per sf-exec run, default 30; a run normally takes well under 5, so a
# timeout is a hang), SF_KEEP=1 keeps every work directory.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR [COUNT [FIRST_SEED]]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
count=${3:-${SF_RANDOM_COUNT:-200}}
first=${4:-1}
if ! [[ $count =~ ^[0-9]+$ && $first =~ ^[0-9]+$ ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR [COUNT [FIRST_SEED]] (non-negative integers)" >&2
  exit 2
fi
source "$src/tests/lib.sh"
trap sf_cleanup EXIT
sf_need_bins "$build" sf-randgraph sf-xform sf-exec || exit 1

widths=${SF_WIDTHS:-1 2 3 4}
tight_seeds=${SF_TIGHT_SEEDS-17}
jobs=${SF_JOBS:-2}
export SF_RUN_TIMEOUT=${SF_RUN_TIMEOUT:-30}
sf_mktemp root sf-e2e-random || exit 1

# One seed, in $root/SEED; writes its report to $root/SEED.log and "ok"/"fail" to $root/SEED.status.
run_seed() { # SEED
  local seed=$1 dir=$root/$1 w rc par t0 t1 report bad=() log=$root/$1.log feats=""
  mkdir -p "$dir/out" "$dir/tables"
  {
    if ! "$build/bin/sf-randgraph" --tables "$dir/tables" "$seed" out >"$dir/graph.xml" 2>"$dir/gen.log"; then
      echo "seed $seed: FAIL  sf-randgraph failed"
      cat "$dir/gen.log"
      echo fail >"$root/$seed.status"
      return
    fi
    grep -q '<operator [^>]*kind="Join"' "$dir/graph.xml" && feats+=" join"
    grep -q '<operator [^>]*kind="Lookup"' "$dir/graph.xml" && feats+=" lookup"
    sed -n 2p "$dir/graph.xml" | grep -q 'features:.* functions' && feats+=" functions"
    sed -n 2p "$dir/graph.xml" | grep -q 'features:.* windows' && feats+=" windows"
    echo "$feats" >"$root/$seed.features"
    [[ -n $feats ]] && feats=" [${feats# }]"
    t0=$(sf_now)
    sf_exec_in "$build" "$dir" "$dir/graph.xml" "$dir/original.log"
    rc=$?
    if [[ $rc -ne 0 ]]; then
      echo "seed $seed: FAIL  the original graph: sf-exec exited $rc$([[ $rc == 124 ]] && echo " (timed out)") (work dir $dir)"
      sed 's/^/    | /' "$dir/original.log" | head -n 20
      bad+=(original)
    else
      mv "$dir/out" "$dir/expected"
      local runs=($widths) run w opts
      [[ " $tight_seeds " == *" $seed "* ]] && runs+=("${runs[-1]}:tight")
      for run in "${runs[@]}"; do
        w=${run%:tight}
        opts=()
        [[ $run == *:tight ]] && opts=(--batch 1 --queue 1)
        par=$dir/par-w$w.xml
        if ! "$build/bin/sf-xform" -w "$w" "$dir/graph.xml" -o "$par" >"$dir/xform-w$w.log" 2>&1; then
          echo "seed $seed width $w: FAIL  sf-xform failed (work dir $dir)"
          sed 's/^/    | /' "$dir/xform-w$w.log" | head -n 20
          bad+=("$w")
          continue
        fi
        rm -rf "$dir/out"
        mkdir "$dir/out"
        (cd "$dir" && timeout -k 5 "$SF_RUN_TIMEOUT" "$build/bin/sf-exec" "${opts[@]}" "$par") >"$dir/par-w$w.log" 2>&1
        rc=$?
        if [[ $rc -ne 0 ]]; then
          echo "seed $seed width $w${opts:+ ${opts[*]}}: FAIL  sf-exec exited $rc$([[ $rc == 124 ]] && echo " (timed out)") on the rewritten graph $par"
          sed 's/^/    | /' "$dir/par-w$w.log" | head -n 20
          bad+=("$run")
        elif ! report=$(sf_compare_dirs "$dir/expected" "$dir/out"); then
          mv "$dir/out" "$dir/out-w${run/:/-}"
          echo "seed $seed width $w${opts:+ ${opts[*]}}: FAIL  outputs differ (expected $dir/expected, actual $dir/out-w${run/:/-}, graph $par)"
          printf '%s\n' "$report"
          bad+=("$run")
        fi
      done
      rm -rf "$dir/out"
    fi
    t1=$(sf_now)
    if [[ ${#bad[@]} -eq 0 ]]; then
      local rows
      rows=$(cat "$dir"/expected/*.csv 2>/dev/null | wc -l)
      echo "seed $seed: OK    $(sf_elapsed "$t0" "$t1")s ($(sf_list_files "$dir/expected" | wc -l) files, $rows lines)$feats"
      echo ok >"$root/$seed.status"
      rm -rf "$dir"
    else
      echo "seed $seed: FAILED at ${bad[*]}$feats; the original graph (work dir $dir):"
      sed 's/^/    /' "$dir/graph.xml"
      echo fail >"$root/$seed.status"
    fi
  } >"$log" 2>&1
}

t_start=$(sf_now)
running=0
last=$((first + count - 1))
for ((seed = first; seed <= last; seed++)); do
  run_seed "$seed" &
  running=$((running + 1))
  if [[ $running -ge $jobs ]]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

passed=0
failed=()
njoin=0
nlookup=0
nfunc=0
nwin=0
for ((seed = first; seed <= last; seed++)); do
  cat "$root/$seed.log" 2>/dev/null
  [[ $(cat "$root/$seed.features" 2>/dev/null) == *join* ]] && njoin=$((njoin + 1))
  [[ $(cat "$root/$seed.features" 2>/dev/null) == *lookup* ]] && nlookup=$((nlookup + 1))
  [[ $(cat "$root/$seed.features" 2>/dev/null) == *functions* ]] && nfunc=$((nfunc + 1))
  [[ $(cat "$root/$seed.features" 2>/dev/null) == *windows* ]] && nwin=$((nwin + 1))
  if [[ $(cat "$root/$seed.status" 2>/dev/null) == ok ]]; then
    passed=$((passed + 1))
  else
    failed+=("$seed")
    [[ -d $root/$seed ]] && sf_keep "$root/$seed"
  fi
done
[[ ${#failed[@]} -gt 0 ]] && sf_keep "$root"
total=$(sf_elapsed "$t_start" "$(sf_now)")
echo "e2e_random: seeds $first..$last: $njoin graphs with a Join, $nlookup with a Lookup, $nfunc calling string and time functions, $nwin with event-time windows"
features_ok=1
if ((count >= 20 && (njoin == 0 || nlookup == 0 || nfunc == 0 || nwin == 0))); then
  echo "e2e_random: FAIL  $count seeds ran without a graph with a Join, a Lookup, string and time functions or event-time windows"
  features_ok=0
fi
echo "e2e_random: seeds $first..$last: $passed passed, ${#failed[@]} failed${failed:+ (seeds: ${failed[*]})}, ${total}s"
[[ ${#failed[@]} -eq 0 && $features_ok == 1 ]]
