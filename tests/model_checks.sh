#!/usr/bin/env bash
# tests/model_checks.sh BUILD_DIR SOURCE_DIR [GRAPH...]
#
# A model is a promise; the runtime checks the part it can see (docs/design.md,
# "Safety rules"). Every
# SOURCE_DIR/tests/model/NAME.xml (or the named graphs) has a replica in a parallel region that
# breaks its operator's model, and NAME.err beside it holds the exact diagnostic sf-exec must stop
# the job with, naming that replica and the model attribute it broke. Two kinds of graph:
#   - an original graph (no region attribute) whose Custom operator's model lies. Run as it is in
#     one process it must fail with NAME.err's message naming the operator itself ('dup', not
#     'dup[1]' (from 'dup')): a declared model is checked outside parallel regions too; then
#     `sf-xform -w 2` of it must fail in one process, and `sf-xform -w 2 --hosts h0=...,h1=...` of it
#     must fail under tools/sf-launch on two executors;
#   - a rewritten graph written by hand (region attributes), replicating an operator that the
#     transformer would keep serial; it runs as it is in one process, and with its hosts h0 and h1
#     given fresh loopback ports on two executors.
# One process: exit status 1, stderr exactly NAME.err. Two executors: sf-launch exits 1 and the
# host running the replica named in NAME.err prints that line ("[HOST] sf-exec: error: ...").
# (Which host sf-launch's summary blames is not checked: it names the first executor to exit, and
# the other one may notice its broken edge first.)
# Either way no file, temporary or not, is left in out/, and no executor survives the run.
#
# One line per case: OK or FAIL with what differs; failures keep the work directory. Exits 1 if
# anything failed. Environment: SF_RUN_TIMEOUT (seconds per run, default 60), SF_KEEP=1.
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
run_timeout=${SF_RUN_TIMEOUT:-60}

LAUNCH_PIDS=() # every launcher leads its own process group (setsid), stopped at exit
cleanup() {
  local p
  for p in "${LAUNCH_PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  sf_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

failed=0
passed=0
fail() { # LABEL WHAT LOG WORK
  sf_keep "$4"
  printf '%-40s FAIL  %s (work dir %s)\n' "$1" "$2" "$4"
  [[ -f $3 ]] && sed 's/^/    | /' "$3" | head -n 20
  failed=$((failed + 1))
}
ok() { printf '%-40s OK\n' "$1"; passed=$((passed + 1)); }

# The files left in DIR/out, as one line ("" when none).
leftovers() { (cd "$1/out" && find . -mindepth 1 -printf '%P ' 2>/dev/null); }

# Runs GRAPH in one process in WORK; it must fail with exactly EXPECT on stderr.
expect_failure_one_process() { # LABEL WORK GRAPH EXPECT
  local label=$1 work=$2 graph=$3 expect=$4 rc left
  rm -rf "$work/out" && mkdir "$work/out"
  (cd "$work" && timeout -k 5 "$run_timeout" "$build/bin/sf-exec" "$graph") >"$work/one.out" 2>"$work/one.err"
  rc=$?
  left=$(leftovers "$work")
  if [[ $rc -ne 1 ]]; then
    fail "$label" "sf-exec exited $rc, expected 1" "$work/one.err" "$work"
  elif ! cmp -s "$expect" "$work/one.err"; then
    fail "$label" "stderr differs from $expect" "$work/one.err" "$work"
    diff "$expect" "$work/one.err" | sed 's/^/    | /' | head -n 10
  elif [[ -s $work/one.out || -n $left ]]; then
    fail "$label" "wrote to stdout or left files in out/: $left" "$work/one.out" "$work"
  else
    ok "$label"
  fi
}

# True when FILE has the line LINE, or gets it within 5 s: sf-launch's prefixing pipes may still be
# writing an executor's last lines when the launcher exits.
wait_for_line() { # LINE FILE
  local i
  for ((i = 0; i < 50; i++)); do
    grep -qxF -- "$1" "$2" && return 0
    sleep 0.1
  done
  return 1
}

# Runs PAR (hosts h0 and h1) with sf-launch in WORK; it must fail, and the host running the replica
# named in EXPECT must print EXPECT's line. Returns 2, unreported, when a port was taken meanwhile.
expect_failure_two_executors() { # LABEL WORK PAR EXPECT RETRY
  local label=$1 work=$2 par=$3 expect=$4 retry=$5 rc line replica host left pid log=$work/launch.log
  rm -rf "$work/out" && mkdir "$work/out"
  setsid timeout -k 5 "$run_timeout" bash "$launch" --exec "$build/bin/sf-exec" --workdir "$work" "$par" \
    >"$log" 2>&1 &
  pid=$!
  LAUNCH_PIDS+=("$pid")
  wait "$pid"
  rc=$?
  left=$(pgrep -f -- "sf-exec --host .* $par" | tr '\n' ' ')
  [[ -n $left ]] && sleep 1 && left=$(pgrep -f -- "sf-exec --host .* $par" | tr '\n' ' ')
  kill -KILL -- "-$pid" 2>/dev/null
  if [[ $rc -ne 0 && $retry == 1 ]] && grep -q "cannot listen on" "$log"; then return 2; fi
  line=$(head -n 1 "$expect")
  replica=$(sed -n "s/^sf-exec: error: operator '\([^']*\)'.*/\1/p" "$expect")
  host=$(grep -F "<operator name=\"$replica\"" "$par" | sed -n 's/.* host="\([^"]*\)".*/\1/p')
  if [[ -z $host ]]; then
    fail "$label" "no host for operator '$replica' in $par" "" "$work"
  elif [[ $rc -ne 1 ]]; then
    fail "$label" "sf-launch exited $rc, expected 1" "$log" "$work"
  elif ! wait_for_line "[$host] $line" "$log"; then
    fail "$label" "no line '[$host] $line'" "$log" "$work"
  elif [[ -n $left ]]; then
    fail "$label" "executors still run: pids $left" "$log" "$work"
  elif [[ -n $(leftovers "$work") ]]; then
    fail "$label" "files left in out/: $(leftovers "$work")" "$log" "$work"
  else
    ok "$label"
  fi
  return 0
}

if [[ $# -gt 0 ]]; then
  graphs=("$@")
else
  graphs=("$src"/tests/model/*.xml)
fi

for graph in "${graphs[@]}"; do
  graph=$(cd "$(dirname "$graph")" && pwd)/$(basename "$graph")
  name=$(basename "$graph" .xml)
  expect=${graph%.xml}.err
  sf_mktemp work "sf-model-$name" || exit 1
  if [[ ! -f $expect ]]; then
    fail "$name" "no $expect" "" "$work"
    continue
  fi
  if grep -q ' region="' "$graph"; then
    cp "$graph" "$work/one.xml"
    rewritten=1
  else
    rewritten=0
    # the original graph: the same check, the same message, naming the operator instead of its replica
    sed "s/^sf-exec: error: operator '\([A-Za-z_][A-Za-z0-9_]*\)\[[0-9]*\]' (from '\1'): /sf-exec: error: operator '\1': /" \
      "$expect" >"$work/original.err"
    expect_failure_one_process "$name original" "$work" "$graph" "$work/original.err"
    if ! "$build/bin/sf-xform" -w 2 "$graph" -o "$work/one.xml" >"$work/xform.log" 2>&1; then
      fail "$name" "sf-xform -w 2 failed" "$work/xform.log" "$work"
      continue
    fi
  fi
  expect_failure_one_process "$name one process" "$work" "$work/one.xml" "$expect"

  for attempt in 1 2; do
    sf_next_ports 2 || exit 1
    if [[ $rewritten == 1 ]]; then
      sed -e "s/<host name=\"h0\" address=\"[^\"]*\"/<host name=\"h0\" address=\"127.0.0.1:$P0\"/" \
          -e "s/<host name=\"h1\" address=\"[^\"]*\"/<host name=\"h1\" address=\"127.0.0.1:$P1\"/" \
          "$graph" >"$work/two.xml"
    elif ! "$build/bin/sf-xform" -w 2 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$graph" -o "$work/two.xml" \
           >"$work/xform.log" 2>&1; then
      fail "$name two executors" "sf-xform -w 2 --hosts failed" "$work/xform.log" "$work"
      break
    fi
    expect_failure_two_executors "$name two executors" "$work" "$work/two.xml" "$expect" $((attempt == 1))
    [[ $? -eq 2 ]] || break
    echo "$name: a port was taken meanwhile: again with other ports"
  done
done

echo "model_checks: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
