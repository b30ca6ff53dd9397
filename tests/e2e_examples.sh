#!/usr/bin/env bash
# tests/e2e_examples.sh BUILD_DIR SOURCE_DIR [GRAPH...]
#
# The promise of StreamFission on the example applications: for every SOURCE_DIR/graphs/*.xml (or
# the named graphs), run the original graph with sf-exec in a scratch directory holding a copy of
# graphs/data and an empty out/; then, for widths 1 to 4, rewrite it with `sf-xform -w W`, run the
# rewritten graph in a fresh out/ and require the same set of output files, each byte-identical to
# the original's. The original run must exit 0 and write non-empty files with at least one row.
#
# One line per (graph, width): OK or FAIL with timings; a failure shows the cmp/diff head and the
# path of the kept work directory. Exits 1 if anything failed.
#
# Exception:
#  - graphs/work.xml is the heavy benchmark graph; it runs at every width while one run of it takes
#    at most SF_HEAVY_SECONDS (default 20) seconds, and at widths 1 and 2 only when slower.
#
# Environment: SF_WIDTHS (default "1 2 3 4"), SF_RUN_TIMEOUT (seconds per sf-exec run, default 120),
# SF_KEEP=1 keeps every work directory.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR [GRAPH...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
shift 2
source "$src/tests/lib.sh"
trap sf_cleanup EXIT

sf_need_bins "$build" sf-xform sf-exec || exit 1

widths=${SF_WIDTHS:-1 2 3 4}
heavy_limit=${SF_HEAVY_SECONDS:-20}
export SF_GROUPED_FILES="" # every file byte for byte (fan-in is ordered by source position)

if [[ $# -gt 0 ]]; then
  graphs=("$@")
else
  graphs=("$src"/graphs/*.xml)
fi

failed=0
passed=0
t_start=$(sf_now)

fail() { # message
  echo "$*"
  failed=$((failed + 1))
}

for graph in "${graphs[@]}"; do
  graph=$(cd "$(dirname "$graph")" && pwd)/$(basename "$graph")
  name=$(basename "$graph" .xml)
  sf_mktemp work "sf-e2e-$name" || exit 1
  cp -r "$src/graphs/data" "$work/data"
  mkdir "$work/out"

  # the original graph
  t0=$(sf_now)
  sf_exec_in "$build" "$work" "$graph" "$work/original.log"
  rc=$?
  t1=$(sf_now)
  orig_secs=$(sf_elapsed "$t0" "$t1")
  problem=""
  if [[ $rc -ne 0 ]]; then
    problem="sf-exec exited $rc$([[ $rc == 124 ]] && echo " (timed out after ${SF_RUN_TIMEOUT:-120} s)")"
  elif [[ -z $(sf_list_files "$work/out") ]]; then
    problem="wrote no output file"
  else
    while IFS= read -r f; do
      if [[ ! -s $work/out/$f ]]; then
        problem="wrote an empty file out/$f"
      elif [[ $(wc -l <"$work/out/$f") -lt 2 ]]; then
        problem="wrote out/$f with a header and no rows"
      fi
    done < <(sf_list_files "$work/out")
  fi
  if [[ -n $problem ]]; then
    sf_keep "$work"
    fail "$(printf '%-10s original: FAIL  %ss  %s (work dir %s)' "$name" "$orig_secs" "$problem" "$work")"
    sed 's/^/    | /' "$work/original.log" | head -n 20
    continue
  fi
  mv "$work/out" "$work/expected"
  nfiles=$(sf_list_files "$work/expected" | wc -l)
  printf '%-10s original: ok    %ss  (%d output files)\n' "$name" "$orig_secs" "$nfiles"

  gwidths=$widths
  if [[ $name == work ]] && awk -v s="$orig_secs" -v l="$heavy_limit" 'BEGIN { exit !(s > l) }'; then
    gwidths="1 2"
    echo "$(printf '%-10s' "$name") one run takes ${orig_secs}s > ${heavy_limit}s: widths 1 and 2 only"
  fi

  for w in $gwidths; do
    par=$work/par-w$w.xml
    t0=$(sf_now)
    if ! "$build/bin/sf-xform" -w "$w" "$graph" -o "$par" >"$work/xform-w$w.log" 2>&1; then
      sf_keep "$work"
      fail "$(printf '%-10s width %d:  FAIL  sf-xform failed (work dir %s)' "$name" "$w" "$work")"
      sed 's/^/    | /' "$work/xform-w$w.log" | head -n 20
      continue
    fi
    t1=$(sf_now)
    rm -rf "$work/out"
    mkdir "$work/out"
    sf_exec_in "$build" "$work" "$par" "$work/par-w$w.log"
    rc=$?
    t2=$(sf_now)
    times="xform $(sf_elapsed "$t0" "$t1")s, run $(sf_elapsed "$t1" "$t2")s"
    if [[ $rc -ne 0 ]]; then
      sf_keep "$work"
      fail "$(printf '%-10s width %d:  FAIL  %s; sf-exec exited %d%s (work dir %s, graph %s)' "$name" "$w" "$times" \
        "$rc" "$([[ $rc == 124 ]] && echo ", timed out")" "$work" "$par")"
      sed 's/^/    | /' "$work/par-w$w.log" | head -n 20
      continue
    fi
    if report=$(sf_compare_dirs "$work/expected" "$work/out"); then
      passed=$((passed + 1))
      printf '%-10s width %d:  OK    %s\n' "$name" "$w" "$times"
    else
      mv "$work/out" "$work/out-w$w"
      sf_keep "$work"
      fail "$(printf '%-10s width %d:  FAIL  %s; outputs differ (expected %s, actual %s, graph %s)' "$name" "$w" \
        "$times" "$work/expected" "$work/out-w$w" "$par")"
      printf '%s\n' "$report"
    fi
  done
  rm -rf "$work/out"
done

total=$(sf_elapsed "$t_start" "$(sf_now)")
echo "e2e_examples: $passed passed, $failed failed, ${total}s"
[[ $failed -eq 0 ]]
