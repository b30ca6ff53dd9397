#!/usr/bin/env bash
# tests/ckpt_ended.sh BUILD_DIR SOURCE_DIR: checkpoints go on after a source has ended. A job that
# merges a short bounded input (a file of 200 rows, read within milliseconds) with a long paced
# stream (a Beacon of 4000 tuples at 1000 a second: the job lasts 4 s) must keep taking
# checkpoints once the file is read, and a restore from one of them must bring the operators that
# finished back as finished: they neither run nor emit again. The graphs are in tests/ckpt_ended/;
# tests/ckpt_ended/expect.py writes the file and computes every graph's output without sf.
#
# A checkpoint's MANIFEST says its position P: every source's stream is cut before its tuple P.
# The file's rows are positions 0 to 199, so a checkpoint at P >= 200 was cut after the file's
# end, whenever it was taken; one at P < 200 before it.
#
# Each case runs its graph three ways: sequentially without checkpoints (the reference; its
# outputs must be expect.py's), rewritten at width W (sf-xform -w W) with a checkpoint every 0.2 s
# and killed with SIGKILL once two checkpoints at P >= 200 are complete (polled in DIR/ck; at the
# latest 2.4 s after the start, 60 % of the Beacon's schedule, which no load makes shorter), then,
# on two copies of what the kill left, `sf-exec --restore` at width W and at another width. Lines:
#   sequential          the reference run exits 0, silent, and writes what expect.py computed;
#   after-end           (fan-in cases) two checkpoints at P >= 200 completed before the kill;
#   restore wN          the restore at width N exits 0, says it restored the newest checkpoint
#                       complete at the kill ("restored checkpoint K", or "no complete checkpoint"
#                       when there was none), writes the reference's outputs byte for byte and
#                       leaves no temporary file and no checkpoint;
#   restored-K wN       (fan-in cases) that K is a checkpoint at P >= 200, after every checkpoint
#                       at P < 200 complete before the kill: it was taken after the file ended.
# The cases:
#   pos-fanin    the file and the Beacon in a fan-in by position, a sliding window per key;
#                killed at width 2, restored at 2 and 3;
#   time-fanin   the same with order="time" (both sources have event time); killed at 3,
#                restored at 3 and 2;
#   final-emits  the file through tumbling time windows that all emit at its end (its ticks come
#                every 1000, its times end at 995), merged by position with the Beacon, then a
#                running sum per key; the merged stream goes to a file too: sums emitted again
#                after the restore would show there. Killed at 2, restored at 2 and 3;
#   hosts        pos_fanin.xml on two executors, the file (and so the checkpoints' coordinator) on
#                one, the Beacon on the other (sf-launch --restart 1); the Beacon's executor killed
#                once two checkpoints cut after the file's end are complete: the restart restores
#                one of them, and the output is the sequential run's (hosts_case, below);
#   sink-ended   two pipelines that never meet, the file into one FileSink and the Beacon into
#                another: both outputs right whatever checkpoint the restore takes (a sink that
#                had finished before the checkpoint). Killed at 3, restored at 3 and 2; the
#                after-end and restored-K lines are not checked, the restore line names K.
set -uo pipefail
build=${1:?usage: ckpt_ended.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: ckpt_ended.sh BUILD_DIR SOURCE_DIR}
build=$(cd "$build" && pwd)
src=$(cd "$src" && pwd)
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec sf-launch || exit 1
B=$build/bin
if ! command -v python3 >/dev/null; then
  echo "ckpt_ended: skipped: python3, which computes the expected outputs, is missing"
  exit 77
fi

trap sf_stop_all EXIT
trap 'exit 130' INT TERM
sf_mktemp work sf-ckpt-ended || exit 1
SF_WORK=$work
SF_CASE_WIDTH=12
G=$src/tests/ckpt_ended
N_SHORT=200        # the file's rows: positions 0 .. N_SHORT - 1
INTERVAL=0.2       # seconds between checkpoints
WANT_AFTER=2       # checkpoints at P >= N_SHORT complete before the kill
FALLBACK_US=2400000 # the kill at the latest (microseconds after the start)

if ! python3 "$G/expect.py" "$work/expect" 2>"$work/expect.log"; then
  cat "$work/expect.log" >&2
  exit 1
fi

# The sequential runs of the four graphs, started at once (paced, they take little CPU), each in
# $work/GRAPH/ref; REF_PID[GRAPH] to wait for.
declare -A REF_PID
input_of() { case $1 in pos_fanin | sink_ended) echo short_id.csv ;; *) echo short_ts.csv ;; esac; }
for g in pos_fanin time_fanin final_emits sink_ended; do
  mkdir -p "$work/$g/ref"
  cp "$work/expect/$(input_of "$g")" "$work/$g/ref/short.csv"
  (cd "$work/$g/ref" && exec timeout -k 5 60 "$B/sf-exec" "$G/$g.xml") >"$work/$g/ref/run.log" 2>&1 &
  REF_PID[$g]=$!
done

# manifests DIR: "ID POSITION" of every complete checkpoint in DIR/ck, one a line (a checkpoint
# removed while it is read is left out)
manifests() {
  local m id a b p
  for m in "$1"/ck/ckpt-*/MANIFEST; do
    [[ -f $m ]] || continue
    id=${m%/MANIFEST}
    id=${id##*/ckpt-}
    p=""
    { while read -r a b; do [[ $a == position ]] && p=$b; done <"$m"; } 2>/dev/null
    [[ -n $p ]] && echo "$id $p"
  done
}

# kill_run DIR GRAPH: sf-exec on GRAPH in DIR with a checkpoint every $INTERVAL s into DIR/ck,
# killed with SIGKILL once WANT_AFTER checkpoints at positions >= N_SHORT are complete, or
# FALLBACK_US after the start. Sets KILLED (1: it was still running), AT (seconds to the kill), SEEN
# ("ID:POSITION" of every checkpoint seen complete, sorted by ID), NEWEST (the newest complete at
# the kill, "" if none), AFTER (how many seen at P >= N_SHORT), BEFORE (the newest seen at P <
# N_SHORT, 0 if none) and INCOMPLETE (the checkpoint directories without a MANIFEST at the kill:
# checkpoints begun that never completed).
kill_run() {
  local d=$1 graph=$2 tpid pid t0 id p after=0
  local -A pos=()
  (cd "$d" && exec timeout -k 5 60 "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval "$INTERVAL" "$graph") \
    >"$d/run.log" 2>&1 &
  tpid=$!
  t0=${EPOCHREALTIME/./}
  KILLED=0
  while kill -0 "$tpid" 2>/dev/null; do
    while read -r id p; do
      [[ -n $id && -z ${pos[$id]:-} ]] || continue
      pos[$id]=$p
      ((p >= N_SHORT)) && after=$((after + 1))
    done < <(manifests "$d")
    ((after >= WANT_AFTER || ${EPOCHREALTIME/./} - t0 >= FALLBACK_US)) && break
    sleep 0.01
  done
  pid=$(pgrep -P "$tpid" 2>/dev/null | head -n 1)
  [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null && KILLED=1
  AT=$(awk -v u=$((${EPOCHREALTIME/./} - t0)) 'BEGIN { printf "%.2f", u / 1e6 }')
  wait "$tpid" 2>/dev/null
  # what completed just before the kill counts too
  while read -r id p; do [[ -n $id ]] && pos[$id]=$p; done < <(manifests "$d")
  SEEN="" NEWEST="" AFTER=0 BEFORE=0
  for id in $(printf '%s\n' "${!pos[@]}" | sort -n); do
    SEEN+=" $id:${pos[$id]}"
    if ((pos[$id] >= N_SHORT)); then AFTER=$((AFTER + 1)); else BEFORE=$id; fi
  done
  SEEN=${SEEN# }
  NEWEST=$(manifests "$d" | sort -n | tail -n 1 | cut -d' ' -f1)
  INCOMPLETE=$(cd "$d" && for m in ck/ckpt-*; do [[ -d $m && ! -f $m/MANIFEST ]] && echo "${m#ck/}"; done | sort -t- -k2n | tr '\n' ' ')
  INCOMPLETE=${INCOMPLETE% }
}

# restore_at DIR WIDTH: sf-exec --restore on ../wWIDTH.xml in DIR to the end; its status in DIR/status
restore_at() {
  local d=$1 w=$2
  (cd "$d" && timeout -k 5 60 "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval "$INTERVAL" --restore \
    "../w$w.xml") >"$d/restore.log" 2>&1
  echo $? >"$d/status"
}

# run_case CASE GRAPH FANIN W1 W2 FILE...: the case as the header says. FANIN 1 checks the
# after-end and restored-K lines.
run_case() {
  local c=$1 g=$2 fanin=$3 w1=$4 w2=$5
  shift 5
  local files=("$@") cd=$work/$g f w st k pos bad left want
  local ref=$cd/ref
  for w in "$w1" "$w2"; do
    if ! "$B/sf-xform" -w "$w" "$G/$g.xml" -o "$cd/w$w.xml" 2>"$cd/xform.log"; then
      sf_bad "$c" "sf-xform -w $w failed" "$cd/xform.log"
      return
    fi
  done

  # the killed run (the reference goes on meanwhile)
  mkdir -p "$cd/kill"
  cp "$work/expect/$(input_of "$g")" "$cd/kill/short.csv"
  kill_run "$cd/kill" "../w$w1.xml"

  wait "${REF_PID[$g]}"
  st=$?
  bad=""
  for f in "${files[@]}"; do cmp -s "$work/expect/$g/$f" "$ref/$f" || bad+=" $f"; done
  if [[ $st != 0 || -s $ref/run.log ]]; then
    sf_bad "$c" "sequential: exit status $st, expected 0 and nothing on stderr" "$ref/run.log"
    return
  elif [[ -n $bad ]]; then
    sf_bad "$c" "sequential:$bad differ from what expect.py computed ($work/expect/$g)" "$ref/run.log"
    for f in $bad; do diff "$work/expect/$g/$f" "$ref/$f" | head -n 6 | sed 's/^/    /'; done
    return
  fi
  sf_ok "$c" "sequential: ${files[*]} as expect.py computed them ($(cat "${files[@]/#/$ref/}" | wc -l) lines)"

  local what="width $w1 killed at $AT s (checkpoints complete: ${SEEN:-none})" log=""
  [[ -s $cd/kill/run.log ]] && log=$cd/kill/run.log
  if [[ $KILLED != 1 ]]; then
    sf_bad "$c" "width $w1: the job ended before the kill ($AT s): nothing to restore" "$log"
    return
  fi
  if [[ $fanin == 1 ]]; then
    if ((AFTER >= WANT_AFTER)); then
      sf_ok "$c" "after-end: $what: $AFTER at positions >= $N_SHORT, cut after the file's end"
    else
      local saw="none at all in $AT s with --checkpoint-interval $INTERVAL"
      [[ -n $SEEN ]] && saw="only (id:position) $SEEN"
      if [[ -n $INCOMPLETE ]]; then
        saw+="; begun but not complete at the kill (no MANIFEST): $INCOMPLETE"
      elif [[ -z $SEEN ]]; then
        saw+=", and no ckpt-N directory in ck at the kill: none was begun"
      fi
      sf_bad "$c" "after-end: $AFTER checkpoints completed at a position >= $N_SHORT (cut after source 'short' ended: its $N_SHORT rows are positions 0-$((N_SHORT - 1))), expected $WANT_AFTER before the kill at width $w1; saw $saw" "$log"
    fi
  fi

  # two restores of what the kill left, at once: at the killed width and at the other
  local pids=()
  for w in "$w1" "$w2"; do
    rm -rf "$cd/r$w"
    cp -a "$cd/kill" "$cd/r$w"
    rm -f "$cd/r$w/run.log"
    restore_at "$cd/r$w" "$w" &
    pids+=($!)
  done
  wait "${pids[@]}"
  for w in "$w1" "$w2"; do
    local r=$cd/r$w
    st=$(cat "$r/status")
    k=$(sed -n "s/^sf-exec: restored checkpoint \([0-9]*\) from 'ck'$/\1/p" "$r/restore.log")
    if [[ -n $NEWEST ]]; then
      want="sf-exec: restored checkpoint $NEWEST from 'ck'"
    else
      want="sf-exec: no complete checkpoint in 'ck': starting from the beginning"
    fi
    bad=""
    for f in "${files[@]}"; do cmp -s "$ref/$f" "$r/$f" || bad+=" $f"; done
    left=$(cd "$r" && find . -maxdepth 1 -name '.*' -type f -printf '%P ')
    local rw="restore w$w: $what, restored at width $w"
    if [[ $st != 0 ]]; then
      sf_bad "$c" "$rw: exit status $st" "$r/restore.log"
    elif ! grep -qxF "$want" "$r/restore.log"; then
      sf_bad "$c" "$rw: no line '$want'" "$r/restore.log"
    elif [[ -n $bad ]]; then
      sf_bad "$c" "$rw:$bad differ from the sequential run's" "$r/restore.log"
      for f in $bad; do
        echo "    $f: $(wc -l <"$ref/$f") lines expected, $(wc -l <"$r/$f") written"
        diff "$ref/$f" "$r/$f" | head -n 6 | sed 's/^/      /'
      done
    elif [[ -n $left || -n $(ls -A "$r/ck" 2>/dev/null) ]]; then
      sf_bad "$c" "$rw: left behind: $left$(ls -A "$r/ck" 2>/dev/null | tr '\n' ' ')" "$r/restore.log"
    else
      if [[ -n $k ]]; then
        pos=$(manifests "$cd/kill" | awk -v k="$k" '$1 == k { print $2 }')
        sf_ok "$c" "$rw: checkpoint $k (position $pos) restored, ${files[*]} the sequential run's"
      else
        sf_ok "$c" "$rw: no checkpoint, from the beginning; ${files[*]} the sequential run's"
      fi
    fi
    [[ $fanin == 1 ]] || continue
    pos=""
    [[ -n $k ]] && pos=$(manifests "$cd/kill" | awk -v k="$k" '$1 == k { print $2 }')
    if [[ -n $k && -n $pos ]] && ((pos >= N_SHORT && k > BEFORE)); then
      sf_ok "$c" "restored-K w$w: checkpoint $k, at position $pos >= $N_SHORT: taken after the file ended"
    elif [[ -z $k ]]; then
      sf_bad "$c" "restored-K w$w: the restore took no checkpoint (it said \"$(grep -m 1 -E "^sf-exec: (restored checkpoint|no complete checkpoint)" "$r/restore.log" || tail -n 1 "$r/restore.log")\"), expected one cut after source 'short' ended (position >= $N_SHORT, id > $BEFORE); $what" \
        "$r/restore.log"
    else
      sf_bad "$c" "restored-K w$w: the restore took checkpoint $k at position ${pos:-unknown}, expected one cut after source 'short' ended (position >= $N_SHORT, id > $BEFORE); $what" \
        "$r/restore.log"
    fi
  done
}

# hosts: pos_fanin.xml at width 2 on two executors (sf-launch --restart 1, loopback), the file,
# and so the checkpoints' coordinator (the first host with a source), on h0, the Beacon on h1. Once
# the file is read the coordinator has no source running and places the positions ahead of h1's,
# which h1 reports. Two checkpoints at P >= N_SHORT complete, h1 is killed: sf-launch restarts
# both from the newest, which is cut after the file ended, and out.csv is the sequential run's.
hosts_case() {
  local c=hosts d=$work/hosts st k pos vpid lpid t0 after=0 id p
  local -A seen=()
  mkdir -p "$d"
  sf_next_ports 2 || return
  sed -e 's/<operator name="long" kind="Beacon">/<operator name="long" kind="Beacon" host="h1">/' \
    -e 's/<operator name="\(short\|keep\|perkey\|out\)" kind="\([A-Za-z]*\)">/<operator name="\1" kind="\2" host="h0">/' \
    "$G/pos_fanin.xml" >"$d/hosted.xml"
  if ! "$B/sf-xform" -w 2 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$d/hosted.xml" -o "$d/par.xml" \
    2>"$d/xform.log"; then
    sf_bad "$c" "sf-xform -w 2 --hosts failed" "$d/xform.log"
    return
  fi
  cp "$work/expect/short_id.csv" "$d/short.csv"
  (cd "$d" && exec setsid timeout -k 5 60 "$B/sf-launch" --exec "$B/sf-exec" --insecure-plaintext \
    --checkpoint-dir ck --checkpoint-interval "$INTERVAL" --restart 1 par.xml) >"$d/launch.log" 2>&1 &
  lpid=$!
  SF_GROUPS+=("$lpid")
  t0=${EPOCHREALTIME/./}
  while kill -0 "$lpid" 2>/dev/null && ((after < WANT_AFTER && ${EPOCHREALTIME/./} - t0 < FALLBACK_US)); do
    while read -r id p; do
      [[ -n $id && -z ${seen[$id]:-} ]] || continue
      seen[$id]=$p
      ((p >= N_SHORT)) && after=$((after + 1))
    done < <(manifests "$d")
    sleep 0.01
  done
  vpid=$(pgrep -f -- "sf-exec --host h1 .*par.xml" | while read -r p; do
    [[ $(readlink "/proc/$p/cwd") == "$d" ]] && echo "$p"; done | head -n 1)
  [[ -n $vpid ]] && kill -KILL "$vpid" 2>/dev/null
  # what completed between the last poll and the kill counts too (the restart may restore it)
  while read -r id p; do [[ -n $id && -z ${seen[$id]:-} ]] && seen[$id]=$p; done < <(manifests "$d")
  wait "$lpid"
  st=$?
  k=$(sed -n "s/^\[h1\] sf-exec: restored checkpoint \([0-9]*\) from '.*'$/\1/p" "$d/launch.log" | head -n 1)
  pos=${seen[$k]:-}
  if ((after < WANT_AFTER)); then
    sf_bad "$c" "$after checkpoints completed at a position >= $N_SHORT on two executors before the kill, expected $WANT_AFTER (seen: ${!seen[*]})" "$d/launch.log"
  elif [[ -z $vpid ]]; then
    sf_bad "$c" "the executor of h1 was gone before the kill" "$d/launch.log"
  elif [[ $st != 0 ]] || ! grep -q "^sf-launch: restart 1 of 1: host 'h1' failed (killed by SIGKILL)" "$d/launch.log"; then
    sf_bad "$c" "sf-launch exit status $st, or no restart naming h1" "$d/launch.log"
  elif [[ -z $k || -z $pos ]] || ((pos < N_SHORT)); then
    sf_bad "$c" "the restart restored checkpoint ${k:-none} (position ${pos:-unknown}), expected one cut after the file ended" "$d/launch.log"
  elif ! cmp -s "$work/pos_fanin/ref/out.csv" "$d/out.csv"; then
    sf_bad "$c" "out.csv differs from the sequential run's" "$d/launch.log"
  else
    sf_ok "$c" "two executors, the coordinator's source ended: checkpoints went on ($after at positions >= $N_SHORT), h1 killed, restarted from checkpoint $k (position $pos): out.csv the sequential run's"
  fi
}

run_case pos-fanin pos_fanin 1 2 3 out.csv
hosts_case
run_case time-fanin time_fanin 1 3 2 out.csv
run_case final-emits final_emits 1 2 3 merged.csv out.csv
run_case sink-ended sink_ended 0 3 2 short_out.csv long_out.csv

echo "ckpt_ended: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
