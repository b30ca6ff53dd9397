#!/usr/bin/env bash
# tests/e2e_distributed.sh BUILD_DIR SOURCE_DIR [GRAPH...]
#
# The promise of StreamFission across processes: for every SOURCE_DIR/graphs/*.xml and
# SOURCE_DIR/tests/distributed/*.xml (graphs made for a case the examples miss), or the named
# graphs, run the original graph with one sf-exec in a scratch directory holding in data/ a copy
# of graphs/data and of tests/distributed/data, and an empty out/; then, for widths 1 to 4,
# rewrite it with
#     sf-xform -w W --hosts h0=127.0.0.1:P0,h1=127.0.0.1:P1,h2=127.0.0.1:P2
# run it with tools/sf-launch (three sf-exec processes exchanging tuples over gRPC with mutual TLS,
# the job's own CA and certificates, on loopback) in a
# fresh out/, and require the same set of output files, each byte-identical to the original's.
# When BUILD_DIR/bin/sf-randgraph exists, the same is done for SF_DIST_SEEDS random graphs
# (default: seeds 1 to 15), each at width 2, 3 or 4 (2 + SEED % 3): `sf-randgraph --pin-hosts 3
# SEED`, graphs with several sources and fan-ins whose serial operators are pinned to h0, h1 or h2
# at random, so that the inputs of a fan-in and the streams around regions cross executors; made
# with `--tables WORK/tables`, some hold Lookups (their tables there), others start with a Join
# and others with event-time windows (sf-randgraph's header): a seed's line says which, and from
# 10 seeds on a run without one graph with a Join, one with a Lookup and one with event-time
# windows fails.
#
# tests/distributed/runs_across_hosts.xml runs once more at width 2 with `sf-launch --batch 16`
# (batches to other hosts of at most 16 items, where operators pass runs of 256 tuples), and at
# width 3 with `--batch 7` (runs end part of the way into a batch).
#
# After each distributed run no executor of that run may still be alive and no temporary file may
# be left in out/ (the set of files is compared, dot files included).
#
# One line per case: OK or FAIL with timings; a failure shows what differs or the launcher's log
# and keeps the work directory (its path is printed). Exits 1 if anything failed.
#
# Ports: a random base per run below the ephemeral range (lib.sh, or SF_PORT_BASE), three fresh
# ports per case, each checked free with ss, so parallel ctest runs do not collide; a run that fails
# because a port was taken between the check and the bind is retried once with other ports.
#
# Environment: SF_WIDTHS (default "1 2 3 4"), SF_DIST_SEEDS (default "1 2 ... 15"; "" for none),
# SF_RUN_TIMEOUT (seconds per run, default 120), SF_KEEP=1 keeps every work directory.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR [GRAPH...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
shift 2
source "$src/tests/lib.sh"

sf_need_bins "$build" sf-xform sf-exec || exit 1
launch=$src/tools/sf-launch
[[ -r $launch ]] || { echo "error: $launch is missing" >&2; exit 1; }

widths=${SF_WIDTHS:-1 2 3 4}
seeds=${SF_DIST_SEEDS-$(seq -s ' ' 1 15)}
run_timeout=${SF_RUN_TIMEOUT:-120}
export SF_GROUPED_FILES="" # every file byte for byte (fan-in is ordered by source position)

# Every launcher runs in its own process group (setsid), so that the exit trap can stop whatever a
# failed or interrupted run left behind.
LAUNCH_PIDS=()
cleanup() {
  local p
  for p in "${LAUNCH_PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
  sleep 0.2
  for p in "${LAUNCH_PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  sf_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

failed=0
passed=0
t_start=$(sf_now)
fail() { echo "$*"; failed=$((failed + 1)); }
launch_opts=() # more options for sf-launch (the --batch 16 case)

# Runs PAR (a rewritten graph) with sf-launch in WORK, writing to a fresh WORK/out, and compares
# with WORK/expected. LABEL names the case in the report line; LOG gets the launcher's output.
# With RETRY=1, a run that failed only because a port was taken meanwhile returns 2 unreported.
run_distributed() { # LABEL WORK PAR LOG XFORM_SECS RETRY
  local label=$1 work=$2 par=$3 log=$4 xsecs=$5 retry=${6:-0} t0 t1 rc times report left
  rm -rf "$work/out"
  mkdir "$work/out"
  t0=$(sf_now)
  setsid timeout -k 5 "$run_timeout" bash "$launch" --exec "$build/bin/sf-exec" "${launch_opts[@]}" --workdir "$work" "$par" \
    >"$log" 2>&1 &
  local pid=$!
  LAUNCH_PIDS+=("$pid")
  wait "$pid"
  rc=$?
  t1=$(sf_now)
  times="xform ${xsecs}s, run $(sf_elapsed "$t0" "$t1")s"
  left=$(pgrep -f -- "sf-exec --host .* $par" | tr '\n' ' ')
  if [[ -n $left ]]; then
    sleep 1
    left=$(pgrep -f -- "sf-exec --host .* $par" | tr '\n' ' ')
  fi
  kill -KILL -- "-$pid" 2>/dev/null
  if [[ $rc -ne 0 && $retry == 1 && -z $left ]] && grep -q "cannot listen on" "$log"; then
    echo "$(printf '%-22s' "$label") (a port was taken meanwhile: again with other ports)"
    return 2
  fi
  if [[ $rc -ne 0 ]]; then
    sf_keep "$work"
    fail "$(printf '%-22s FAIL  %s; sf-launch exited %d%s (work dir %s, graph %s)' "$label" "$times" "$rc" \
      "$([[ $rc == 124 ]] && echo ", timed out after ${run_timeout}s")" "$work" "$par")"
    sed 's/^/    | /' "$log" | head -n 30
    return 1
  fi
  if [[ -n $left ]]; then
    sf_keep "$work"
    fail "$(printf '%-22s FAIL  %s; sf-launch exited 0 but executors still run: pids %s (graph %s)' "$label" \
      "$times" "$left" "$par")"
    return 1
  fi
  if report=$(sf_compare_dirs "$work/expected" "$work/out"); then
    passed=$((passed + 1))
    printf '%-22s OK    %s\n' "$label" "$times"
    return 0
  fi
  local keep=$work/out-$(basename "$par" .xml)
  rm -rf "$keep"
  mv "$work/out" "$keep"
  sf_keep "$work"
  fail "$(printf '%-22s FAIL  %s; outputs differ (expected %s, actual %s, graph %s, log %s)' "$label" "$times" \
    "$work/expected" "$keep" "$par" "$log")"
  printf '%s\n' "$report"
  return 1
}

# Runs GRAPH in one process in WORK (out/ -> expected/). Returns 1 (reported) when it fails.
run_original() { # LABEL WORK GRAPH
  local label=$1 work=$2 graph=$3 t0 t1 rc problem="" f secs
  rm -rf "$work/out"
  mkdir "$work/out"
  t0=$(sf_now)
  SF_RUN_TIMEOUT=$run_timeout sf_exec_in "$build" "$work" "$graph" "$work/original.log"
  rc=$?
  t1=$(sf_now)
  secs=$(sf_elapsed "$t0" "$t1")
  if [[ $rc -ne 0 ]]; then
    problem="sf-exec exited $rc$([[ $rc == 124 ]] && echo " (timed out)")"
  elif [[ -z $(sf_list_files "$work/out") ]]; then
    problem="wrote no output file"
  fi
  if [[ -n $problem ]]; then
    sf_keep "$work"
    fail "$(printf '%-22s FAIL  %ss  %s (work dir %s)' "$label" "$secs" "$problem" "$work")"
    sed 's/^/    | /' "$work/original.log" | head -n 20
    return 1
  fi
  mv "$work/out" "$work/expected"
  printf '%-22s ok    %ss  (%d output files)\n' "$label" "$secs" "$(sf_list_files "$work/expected" | wc -l)"
}

# Rewrites GRAPH for width W onto three loopback hosts and runs it. LABEL names the case.
xform_and_run() { # LABEL WORK GRAPH W
  local label=$1 work=$2 graph=$3 w=$4 par t0 t1 attempt rc
  par=$work/par-w$w.xml
  for attempt in 1 2; do
    sf_next_ports 3 || { fail "$label FAIL  no free ports"; return 1; }
    t0=$(sf_now)
    if ! "$build/bin/sf-xform" -w "$w" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" "$graph" \
      -o "$par" >"$work/xform-w$w.log" 2>&1; then
      sf_keep "$work"
      fail "$(printf '%-22s FAIL  sf-xform failed (work dir %s)' "$label" "$work")"
      sed 's/^/    | /' "$work/xform-w$w.log" | head -n 20
      return 1
    fi
    t1=$(sf_now)
    run_distributed "$label" "$work" "$par" "$work/launch-w$w.log" "$(sf_elapsed "$t0" "$t1")" $((attempt == 1))
    rc=$?
    [[ $rc -eq 2 ]] || return $rc
  done
}

if [[ $# -gt 0 ]]; then
  graphs=("$@")
else
  graphs=("$src"/graphs/*.xml "$src"/tests/distributed/*.xml)
fi

for graph in "${graphs[@]}"; do
  graph=$(cd "$(dirname "$graph")" && pwd)/$(basename "$graph")
  name=$(basename "$graph" .xml)
  work=$(sf_mktemp "sf-dist-$name") || exit 1
  SF_TMPDIRS+=("$work") # sf_mktemp ran in a $(...) subshell: register it here
  cp -r "$src/graphs/data" "$work/data"
  cp "$src"/tests/distributed/data/* "$work/data/"
  run_original "$name original" "$work" "$graph" || continue
  for w in $widths; do
    xform_and_run "$name width $w" "$work" "$graph" "$w"
  done
done

# Small batches between hosts: runs_across_hosts again with sf-launch --batch 16, where a run of
# 256 tuples must travel as several batches
if [[ $# -eq 0 ]]; then
  graph=$src/tests/distributed/runs_across_hosts.xml
  work=$(sf_mktemp "sf-dist-batch16") || exit 1
  SF_TMPDIRS+=("$work")
  mkdir -p "$work/data"
  if run_original "runs_across_hosts original" "$work" "$graph"; then
    launch_opts=(--batch 16)
    xform_and_run "runs_across_hosts width 2 --batch 16" "$work" "$graph" 2
    # and batches of 7, which the runs (the Beacon's 256, the Filter's kept rows) do not fill
    # evenly: a run to another host ends part of the way into a batch, the next one fills it up
    launch_opts=(--batch 7)
    xform_and_run "runs_across_hosts width 3 --batch 7" "$work" "$graph" 3
    launch_opts=()
  fi
fi

njoin=0 nlookup=0 nwin=0 nseeds=0
if [[ -n $seeds && -x $build/bin/sf-randgraph ]]; then
  for seed in $seeds; do
    work=$(sf_mktemp "sf-dist-seed$seed") || exit 1
    SF_TMPDIRS+=("$work") # sf_mktemp ran in a $(...) subshell: register it here
    mkdir -p "$work/tables"
    nseeds=$((nseeds + 1))
    if ! "$build/bin/sf-randgraph" --pin-hosts 3 --tables "$work/tables" "$seed" out >"$work/graph.xml" 2>"$work/gen.log"; then
      sf_keep "$work"
      fail "$(printf '%-22s FAIL  sf-randgraph failed (work dir %s)' "seed $seed" "$work")"
      continue
    fi
    feats=""
    grep -q '<operator [^>]*kind="Join"' "$work/graph.xml" && feats+=" join" && njoin=$((njoin + 1))
    grep -q '<operator [^>]*kind="Lookup"' "$work/graph.xml" && feats+=" lookup" && nlookup=$((nlookup + 1))
    sed -n 2p "$work/graph.xml" | grep -q 'features:.* windows' && feats+=" windows" && nwin=$((nwin + 1))
    [[ -n $feats ]] && echo "seed $seed: [${feats# }]"
    run_original "seed $seed original" "$work" "$work/graph.xml" || continue
    w=$((2 + seed % 3))
    xform_and_run "seed $seed width $w" "$work" "$work/graph.xml" "$w"
  done
  echo "e2e_distributed: $nseeds random graphs, $njoin with a Join, $nlookup with a Lookup, $nwin with event-time windows"
  if ((nseeds >= 10 && (njoin == 0 || nlookup == 0 || nwin == 0))); then
    fail "e2e_distributed: FAIL  $nseeds random graphs without one with a Join, one with a Lookup or one with event-time windows"
  fi
elif [[ -n $seeds ]]; then
  echo "(no $build/bin/sf-randgraph: random graphs skipped)"
fi

total=$(sf_elapsed "$t_start" "$(sf_now)")
echo "e2e_distributed: $passed passed, $failed failed, ${total}s"
[[ $failed -eq 0 ]]
