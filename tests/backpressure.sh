#!/usr/bin/env bash
# tests/backpressure.sh BUILD_DIR SOURCE_DIR
#
# Back-pressure end to end (docs/design.md, "The runtime"): a slow receiver slows its sender, and
# memory stays bounded whatever the input size. Host h0 runs a fast Beacon of SF_BP_TUPLES (default
# 100 000) tuples carrying a ~1 KB string each (~100 MB in all); host h1 runs a slow Work operator
# (SF_BP_ITERATIONS rounds per tuple, default 3000), a Functor that keeps only the id and the
# string's length, and a FileSink. Both executors run with --stats-json. The test requires:
#   - both executors exit 0 and the output has a header and exactly SF_BP_TUPLES rows, the last
#     being the last tuple with the right length;
#   - h0's peak_rss_kib (and h1's) below SF_BP_LIMIT_MIB (default 90) MiB, below the volume (an
#     executor alone takes about 17 MiB, 3.5 more since it links librdkafka and libmicrohttpd; the
#     receiver's peak ranged over 67-81 MiB on a loaded machine, where the limit was 80);
#   - the sender was held back: h0 ran for at least half as long as h1 (without back-pressure the
#     Beacon would have finished in a fraction of a second while h1 still worked).
# It prints the figures. Ports come from a random base per run. Skipped (exit 77) in a sanitizer
# build (SF_SANITIZE set), whose memory figures are not the program's.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
if [[ -n ${SF_SANITIZE:-} ]]; then
  echo "SKIP: peak memory means nothing under sanitizers (this build has SF_SANITIZE=$SF_SANITIZE: shadow memory" \
    "and freed-memory quarantine); the normal build asserts it"
  exit 77
fi
sf_need_bins "$build" sf-xform sf-exec || exit 1

tuples=${SF_BP_TUPLES:-100000}
iterations=${SF_BP_ITERATIONS:-3000}
limit_mib=${SF_BP_LIMIT_MIB:-90}
run_timeout=${SF_RUN_TIMEOUT:-120}

trap sf_stop_all EXIT
trap 'exit 130' INT TERM

sf_next_ports 2 || exit 1

sf_mktemp work sf-backpressure || exit 1

mkdir "$work/out"
pad=$(head -c 1000 /dev/zero | tr '\0' 'x')
cat >"$work/graph.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- backpressure: a fast ~1 KB-per-tuple producer on h0, a slow consumer on h1 -->
<graph xmlns="urn:streamfission:graph:1" name="backpressure">
  <schema name="Fat">
    <attr name="id"      type="int"/>
    <attr name="payload" type="string"/>
  </schema>
  <schema name="Thin">
    <attr name="id"  type="int"/>
    <attr name="len" type="int"/>
  </schema>
  <operator name="src" kind="Beacon" host="h0">
    <output stream="Fat" schema="Fat"/>
    <param name="count">$tuples</param>
    <set attr="id">seq</set>
    <set attr="payload">str(seq) + "$pad"</set>
  </operator>
  <operator name="slow" kind="Work" parallel="no" host="h1">
    <input stream="Fat"/>
    <output stream="Worked" schema="Fat"/>
    <param name="iterations">$iterations</param>
  </operator>
  <operator name="thin" kind="Functor" parallel="no" host="h1">
    <input stream="Worked"/>
    <output stream="Thin" schema="Thin"/>
    <set attr="len">len(payload)</set>
  </operator>
  <operator name="out" kind="FileSink" host="h1">
    <input stream="Thin"/>
    <param name="file">out/bp.csv</param>
  </operator>
</graph>
EOF
if ! "$build/bin/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$work/graph.xml" -o "$work/par.xml" \
  >"$work/xform.log" 2>&1; then
  sf_keep "$work"
  echo "FAIL: sf-xform failed (work dir $work)"
  sed 's/^/    | /' "$work/xform.log"
  exit 1
fi

export SF_TOKEN
SF_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
t0=$(sf_now)
start() { # HOST: starts its executor, sets LAST_PID
  (cd "$work" && exec timeout -k 5 "$run_timeout" "$build/bin/sf-exec" --host "$1" --insecure-plaintext --stats-json "$work/$1.json" \
    "$work/par.xml") >"$work/$1.log" 2>&1 &
  LAST_PID=$!
}
start h1
pid_h1=$LAST_PID
start h0
pid_h0=$LAST_PID
wait "$pid_h0"
rc0=$?
t_h0=$(sf_now)
wait "$pid_h1"
rc1=$?
t1=$(sf_now)

json_num() { # FILE KEY -> the number after "KEY":
  sed -n "s/.*\"$2\": *\([0-9.]*\).*/\1/p" "$1" | head -n 1
}

fails=()
[[ $rc0 -eq 0 ]] || fails+=("h0 exited $rc0$([[ $rc0 == 124 ]] && echo " (timed out)")")
[[ $rc1 -eq 0 ]] || fails+=("h1 exited $rc1$([[ $rc1 == 124 ]] && echo " (timed out)")")
rss0=$(json_num "$work/h0.json" peak_rss_kib 2>/dev/null)
rss1=$(json_num "$work/h1.json" peak_rss_kib 2>/dev/null)
sec0=$(json_num "$work/h0.json" seconds 2>/dev/null)
sec1=$(json_num "$work/h1.json" seconds 2>/dev/null)
rows=-1
if [[ -f $work/out/bp.csv ]]; then
  rows=$(($(wc -l <"$work/out/bp.csv") - 1))
  last=$(tail -n 1 "$work/out/bp.csv")
  lastid=$((tuples - 1))
  want_last="$lastid,$((${#pad} + ${#lastid}))"
  [[ $rows -eq $tuples ]] || fails+=("out/bp.csv has $rows rows, expected $tuples")
  [[ $last == "$want_last" ]] || fails+=("out/bp.csv ends with '$last', expected '$want_last'")
else
  fails+=("no out/bp.csv")
fi
volume_mib=$(((tuples * (${#pad} + 6)) / 1048576))
if [[ -z $rss0 || -z $rss1 || -z $sec0 || -z $sec1 ]]; then
  fails+=("missing figures in the --stats-json files (h0: rss '$rss0' s '$sec0'; h1: rss '$rss1' s '$sec1')")
else
  echo "data volume ~${volume_mib} MiB; h0 (sender) peak RSS $((rss0 / 1024)) MiB in ${sec0}s; h1 (receiver) peak RSS $((rss1 / 1024)) MiB in ${sec1}s; limit ${limit_mib} MiB"
  ((rss0 < limit_mib * 1024)) || fails+=("h0's peak RSS $((rss0 / 1024)) MiB is not below ${limit_mib} MiB")
  ((rss1 < limit_mib * 1024)) || fails+=("h1's peak RSS $((rss1 / 1024)) MiB is not below ${limit_mib} MiB")
  if ! awk -v a="$sec0" -v b="$sec1" 'BEGIN { exit !(a >= 0.5 * b) }'; then
    fails+=("the sender was not held back: h0 finished after ${sec0}s, h1 after ${sec1}s")
  fi
fi
echo "wall time $(sf_elapsed "$t0" "$t1")s (h0 done after $(sf_elapsed "$t0" "$t_h0")s)"
if [[ ${#fails[@]} -gt 0 ]]; then
  sf_keep "$work"
  echo "FAIL: back-pressure (work dir $work):"
  printf '    %s\n' "${fails[@]}"
  for h in h0 h1; do
    echo "  $h log:"
    sed 's/^/    | /' "$work/$h.log" | head -n 20
  done
  echo "backpressure: 0 passed, 1 failed"
  exit 1
fi
echo "backpressure: 1 passed, 0 failed"
