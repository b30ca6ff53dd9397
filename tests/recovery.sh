#!/usr/bin/env bash
# tests/recovery.sh: checkpoints and recovery, by fault injection. The graph (tests/recovery/ckpt.xml)
# has a fan-in of two sources, a seqpulse region with a Dedup and a sliding-window Aggregate keyed by
# user, a key change and a shuffle into a tumbling Aggregate keyed by bucket, and a Custom operator
# with snapshot callbacks (sf_sessionize) keyed by user. Every case compares the recovered outputs
# with the sequential run's, byte for byte.
#
#   kill-N:     sf-exec at width W with checkpoints every 0.1 s, killed (SIGKILL) at a random moment,
#               then `sf-exec --restore` at width W2 (the same, or another: keyed state moves between
#               channels) runs to the end: exit 0, "restored checkpoint K" (or, killed before the first
#               one completed, "no complete checkpoint"), and the output of the uninterrupted run.
#   dist-N:     three executors (sf-launch --restart 3, loopback), one chosen at random killed
#               (SIGKILL) at a random moment: the restart line naming it, exit 0, the same outputs.
#   twice:      killed twice, restored twice.
#   damaged:    the newest checkpoint's snapshot is corrupted: the restore says it skips it, uses the
#               one before, and the output is still the sequential one.
#   unusable:   the newest complete checkpoint is sound to its CRC but cannot be used (sf-snapedit
#               rewrites one field and the CRC): an operator's snapshot cut short, a source's position
#               not the checkpoint's, a Split's counter near 2^64, a Merge expecting a sequence number
#               its Split never assigned; each, on a copy of the killed job's directory, is named in a
#               warning, the one before is restored, and the output is the sequential one.
#   planted:    a symbolic link planted at a sink's temporary name after the kill is never written
#               through: the restore fails naming it, and the file it leads to keeps its bytes.
#   fresh:      a run without --restore ignores and removes what an earlier run left.
#   foreign:    a directory holding another tool's files under sf's names (ckpt-1000/model.bin, a
#               symbolic link ckpt-7 to another directory) is refused, naming them, and nothing is
#               removed; once they are gone the job runs and removes only its own (ckpt-backup/
#               and ckpt-list.txt stay); --remove-checkpoints refuses a checkpoint holding another
#               file, naming it.
#   job:        a checkpoint directory is one job's: killed at width 1, the job's checkpoints are
#               refused by name to the same graph with an operator changed (peruser's max(v) made
#               min(v), firsts' partitionBy "user item" made "user") and to another graph (the
#               graph renamed), with or without --restore, nothing removed; the real job restores
#               at width 2 and, while it runs (stopped by SIGSTOP once restored), a second job given
#               the same directory is refused, naming the first's pid; the first then completes
#               (SIGCONT) with the sequential output.
#   refused:    a job refusing checkpoints at start-up (a FileSink rolling by seconds) leaves no
#               checkpoint directory behind when it made it.
#   commit:     a job that committed its outputs and stopped before it had removed its checkpoints
#               (the cleanup failed on a foreign ckpt-999999, the renames of out.csv and of the last
#               part then undone by hand, as a kill between them leaves them): --restore says exactly
#               that the job had completed, renames what was left, removes the checkpoints and the
#               commit record, exit 0, every output byte-identical to what the job had published.
#   regions:    a graph with width hints (tests/recovery/regions.xml) whose Splits and Merges are
#               named after other regions at -w 1 than at -w 3 (r1.split is one region's, then
#               another's), killed once a checkpoint is complete at one width and restored at the
#               other, both ways: exit 0, "restored checkpoint K", the sequential run's output.
#   rr:         a roundrobin region (its Split deals runs of 16 tuples) killed once a checkpoint is
#               complete at width 2 and restored at 3, and the other way: the sequential output.
#   missed:     a graph whose fan-ins drop barriers (tests/recovery/missed.xml: one fed by a
#               time-ordered fan-in, and one fed twice by it, once through a Filter that passes
#               nothing) runs with checkpoints every 0.02 s, sequential and at width 2, to the end
#               (it hung before) with the output of a run without checkpoints.
#   missed-end: a fan-in that dropped checkpoint 1's barrier and finished while it was still the
#               one requested (tests/recovery/missed_end.xml) writes no part of it: killed once a
#               checkpoint is complete, the restore from it completes with the output of a run
#               without checkpoints (before, checkpoint 1 completed with the fan-in "finished", and
#               the restore failed when a tuple reached it).
#   join-hosts: a checkpoint taken on h0 and h1 with a Join replicated, restored at -w 1 where the
#               Join is serial on h0 (tests/recovery/join_hosts.xml): both executors refuse it and
#               start from the beginning, with the sequential output (before, h1 restored its source
#               from it while h0 started afresh: a wrong output and exit 0).
#   no-dir:     --restore without --checkpoint-dir is a usage error.
#
# SF_RECOVERY_RUNS (default 24; 8 under sanitizers) and SF_RECOVERY_DIST_RUNS (default 20; 3) set how
# many kill-N and dist-N cases run; SF_RECOVERY_SEED the random seed.
set -uo pipefail
build=${1:?usage: recovery.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: recovery.sh BUILD_DIR SOURCE_DIR}
build=$(cd "$build" && pwd)
src=$(cd "$src" && pwd)
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec sf-snapedit || exit 1
B=$build/bin

trap sf_stop_all EXIT
trap 'exit 130' INT TERM
sf_mktemp work sf-recovery || exit 1
SF_WORK=$work
SF_CASE_WIDTH=10

runs=${SF_RECOVERY_RUNS:-24}
dist_runs=${SF_RECOVERY_DIST_RUNS:-20}
RANDOM=${SF_RECOVERY_SEED:-$$}
count=1500000
if [[ -n ${SF_SANITIZE:-} ]]; then # sanitizers run several times slower: fewer, shorter runs
  count=300000
  runs=${SF_RECOVERY_RUNS:-8}
  dist_runs=${SF_RECOVERY_DIST_RUNS:-3}
fi

sed "s/COUNT/$count/" "$src/tests/recovery/ckpt.xml" >"$work/seq.xml"
for w in 1 2 3; do
  if ! "$B/sf-xform" -w "$w" "$work/seq.xml" -o "$work/w$w.xml" 2>"$work/xform.log"; then
    cat "$work/xform.log" >&2
    exit 1
  fi
done
mkdir -p "$work/ref"
if ! (cd "$work/ref" && timeout -k 5 300 "$B/sf-exec" ../seq.xml) >"$work/ref.log" 2>&1; then
  echo "error: the sequential run failed:" >&2
  cat "$work/ref.log" >&2
  exit 1
fi
ref=$work/ref/out.csv

# check_output CASE DIR WHAT: DIR's outputs (out.csv, sessions.csv, the parts b-*.csv) equal the
# sequential run's, and no hidden file is left (with checkpoints a sink's temporary files have fixed
# names, so not even a run killed before its first checkpoint leaves one once the job completes), nor
# a checkpoint (the completed job removes them).
check_output() {
  local c=$1 d=$2 what=$3 left
  left=$(cd "$d" && find . -maxdepth 1 -name '.*' -type f -printf '%P ')

  if ! cmp -s "$ref" "$d/out.csv"; then
    sf_bad "$c" "$what: out.csv differs from the sequential run's" "$d/run.log" "$d/restore.log"
  elif ! cmp -s "$work/ref/sessions.csv" "$d/sessions.csv"; then
    sf_bad "$c" "$what: sessions.csv (the Custom operator's) differs from the sequential run's" "$d/restore.log"
  elif [[ $(cd "$d" && ls b-*.csv | tr '\n' ' ') != "$(cd "$work/ref" && ls b-*.csv | tr '\n' ' ')" ]] ||
    ! cat "$d"/b-*.csv | cmp -s - <(cat "$work/ref"/b-*.csv); then
    sf_bad "$c" "$what: the rolled parts b-*.csv differ from the sequential run's" "$d/restore.log"
  elif [[ -n $left ]]; then
    sf_bad "$c" "$what: files left behind: $left" "$d/restore.log"
  elif [[ -n $(ls -A "$d/ck" 2>/dev/null) ]]; then
    sf_bad "$c" "$what: the completed job left checkpoints: $(ls "$d/ck")" "$d/restore.log"
  else
    sf_ok "$c" "$what"
  fi
}

# start_killed DIR WIDTH DELAY_MS: sf-exec on wWIDTH.xml in DIR with checkpoints every 0.1 s, killed
# with SIGKILL after DELAY_MS ms; KILLED=1 when it was still running then.
start_killed() {
  local d=$1 w=$2 ms=$3 pid
  (cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 "../w$w.xml") >>"$d/run.log" 2>&1 &
  pid=$!
  sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
  KILLED=0
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null && KILLED=1
  fi
  wait "$pid" 2>/dev/null
}

# restore DIR WIDTH: sf-exec --restore on wWIDTH.xml in DIR to the end; its status in ST.
restore() {
  local d=$1 w=$2
  (cd "$d" && timeout -k 5 300 "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 --restore "../w$w.xml") \
    >"$d/restore.log" 2>&1
  ST=$?
}

widths=(1 2 3)
for ((i = 1; i <= runs; i++)); do
  c=kill-$i
  d=$work/$c
  mkdir -p "$d"
  w=${widths[RANDOM % 3]}
  w2=$w
  ((RANDOM % 2)) && w2=${widths[RANDOM % 3]}
  ms=$((100 + RANDOM % 1000))
  start_killed "$d" "$w" "$ms"
  if [[ $KILLED == 0 ]]; then
    # it finished first: the plain run's output must be right (and the job's checkpoints gone)
    : >"$d/restore.log"
    check_output "$c" "$d" "width $w, finished before the kill at $ms ms"
    continue
  fi
  restore "$d" "$w2"
  what="width $w killed at $ms ms, restored at width $w2"
  if [[ $ST != 0 ]]; then
    sf_bad "$c" "$what: exit status $ST" "$d/restore.log"
  elif grep -qxF "sf-exec: the job in 'ck' had completed (every sink committed its output): nothing to restore" "$d/restore.log"; then
    # the kill landed after every sink had committed, during the clean-up: the output is whole
    check_output "$c" "$d" "$what (killed after the commit: nothing to restore)"
  elif ! grep -qE "^sf-exec: (restored checkpoint [0-9]+ from 'ck'|no complete checkpoint in 'ck': starting from the beginning)$" "$d/restore.log"; then
    sf_bad "$c" "$what: no line saying what it restored" "$d/restore.log"
  else
    k=$(sed -n "s/^sf-exec: restored checkpoint \([0-9]*\) .*/\1/p" "$d/restore.log")
    if [[ -n $k ]]; then what+=" (checkpoint $k)"; else what+=" (no checkpoint yet: from the beginning)"; fi
    check_output "$c" "$d" "$what"
  fi
done

# dist-N: three executors on loopback (sf-launch --restart 3), one of them, at random, killed with
# SIGKILL at a random moment: sf-launch says it restarts every executor, exit 0, the outputs are the
# sequential run's
hosts=(h0 h1 h2)
for ((i = 1; i <= dist_runs; i++)); do
  c=dist-$i
  d=$work/$c
  mkdir -p "$d"
  sf_next_ports 3 || exit 1
  w=$((2 + RANDOM % 2))
  if ! "$B/sf-xform" -w "$w" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" "$work/seq.xml" \
    -o "$d/par.xml" 2>"$d/xform.log"; then
    sf_bad "$c" "sf-xform failed" "$d/xform.log"
    continue
  fi
  (cd "$d" && exec setsid timeout -k 5 300 bash "$src/tools/sf-launch" --exec "$B/sf-exec" --insecure-plaintext \
    --checkpoint-dir ck --checkpoint-interval 0.1 --restart 3 par.xml) >"$d/launch.log" 2>&1 &
  lpid=$!
  SF_GROUPS+=("$lpid")
  victim=${hosts[RANDOM % 3]}
  ms=$((300 + RANDOM % 1500))
  sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
  vpid=$(pgrep -f -- "sf-exec --host $victim .*par.xml" | while read -r p; do
    [[ $(readlink "/proc/$p/cwd") == "$d" ]] && echo "$p"; done | head -n 1)
  killed=0
  [[ -n $vpid ]] && kill -KILL "$vpid" 2>/dev/null && killed=1
  wait "$lpid"
  ST=$?
  what="width $w on 3 executors, $victim killed at $ms ms"
  [[ $killed == 0 ]] && what="width $w on 3 executors, finished before the kill at $ms ms"
  if [[ $ST != 0 ]]; then
    sf_bad "$c" "$what: sf-launch exit status $ST" "$d/launch.log"
  elif [[ $killed == 1 ]] && ! grep -q "^sf-launch: restart 1 of 3: host '$victim' failed (killed by SIGKILL); restarting every executor from the latest complete checkpoint$" "$d/launch.log"; then
    sf_bad "$c" "$what: no restart line naming $victim" "$d/launch.log"
  elif ! cmp -s "$ref" "$d/out.csv" || ! cmp -s "$work/ref/sessions.csv" "$d/sessions.csv"; then
    sf_bad "$c" "$what: the outputs differ from the sequential run's" "$d/launch.log"
  elif [[ -n $(ls -A "$d/ck" 2>/dev/null) ]]; then
    sf_bad "$c" "$what: the completed job left checkpoints: $(ls "$d/ck")" "$d/launch.log"
  else
    k=$(grep -m1 -o "restored checkpoint [0-9]*" "$d/launch.log")
    grep -q "no complete checkpoint" "$d/launch.log" && k="no checkpoint yet: from the beginning"
    sf_ok "$c" "$what${k:+, $k}"
  fi
done

# twice: killed, restored and killed again, restored to the end
c=twice
d=$work/$c
mkdir -p "$d"
start_killed "$d" 2 700
(cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 --restore ../w3.xml) >"$d/run2.log" 2>&1 &
pid=$!
sleep 0.6
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
restore "$d" 2
if [[ $ST != 0 ]]; then
  sf_bad "$c" "exit status $ST" "$d/run2.log" "$d/restore.log"
else
  check_output "$c" "$d" "killed at width 2, restored at 3 and killed, restored at 2"
fi

# damaged: the newest complete checkpoint's first snapshot gets a flipped byte
c=damaged
d=$work/$c
mkdir -p "$d"
# killed as soon as two checkpoints are complete (a fixed moment was too late once the job got
# faster: it had ended, and removed its checkpoints, before the kill)
complete() { (cd "$d/ck" 2>/dev/null && for k in ckpt-*; do [[ -f $k/MANIFEST ]] && echo "${k#ckpt-}"; done | sort -n); }
(cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 ../w2.xml) >>"$d/run.log" 2>&1 &
pid=$!
for ((i = 0; i < 1000; i++)); do
  [[ $(complete | wc -l) -ge 2 ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
newest=$(complete | tail -n 1)
older=$(complete | tail -n 2 | head -n 1)
if [[ -z $newest || $newest == "$older" ]]; then
  sf_bad "$c" "the job ended, or 10 s passed, before two checkpoints were complete" "$d/run.log"
else
  snap=$d/ck/ckpt-$newest/out.snap
  printf '\xff' | dd of="$snap" bs=1 seek=20 conv=notrunc status=none
  restore "$d" 2
  want1="sf-exec: warning: checkpoint $newest in 'ck' cannot be used ('out.snap' fails its CRC); trying an older one"
  want2="sf-exec: restored checkpoint $older from 'ck'"
  if [[ $ST != 0 ]]; then
    sf_bad "$c" "exit status $ST" "$d/restore.log"
  elif [[ $(grep -vE "^sf-exec: warning: checkpoint [0-9]+ in 'ck' cannot be used \(no manifest: it never completed\); trying an older one$" "$d/restore.log" | head -n 2) != "$want1"$'\n'"$want2" ]]; then
    # (checkpoints after the newest complete one were still being written at the kill: named, skipped)
    sf_bad "$c" "expected the lines '$want1' and '$want2'" "$d/restore.log"
  else
    check_output "$c" "$d" "a corrupted snapshot in checkpoint $newest: skipped, named, $older used"
  fi
fi

# unusable: a checkpoint sound to its CRC that a restore cannot use: named, the one before restored
c=unusable
d=$work/$c
mkdir -p "$d"
(cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 ../w2.xml) >>"$d/run.log" 2>&1 &
pid=$!
for ((i = 0; i < 1000; i++)); do
  [[ $(complete | wc -l) -ge 2 ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
newest=$(complete | tail -n 1)
older=$(complete | tail -n 2 | head -n 1)
# unusable_case NAME OP EDIT VALUE WHY: OP's snapshot in the newest checkpoint edited; the restore
# names it with WHY and restores the one before
unusable_case() {
  local name=$1 op=$2 edit=$3 value=$4 why=$5 e=$work/$c-$1
  rm -rf "$e"
  cp -a "$d" "$e"
  if ! "$B/sf-snapedit" "$e/ck" "$newest" "$op" "$edit" "$value" 2>"$e/restore.log"; then
    sf_bad "$c-$name" "sf-snapedit failed" "$e/restore.log"
    return
  fi
  restore "$e" 2
  local want1="sf-exec: warning: checkpoint $newest in 'ck' cannot be used ($why); trying an older one"
  local want2="sf-exec: restored checkpoint $older from 'ck'"
  if [[ $ST != 0 ]]; then
    sf_bad "$c-$name" "exit status $ST" "$e/restore.log"
  elif [[ $(grep -vE "^sf-exec: warning: checkpoint [0-9]+ in 'ck' cannot be used \(no manifest: it never completed\); trying an older one$" "$e/restore.log" | head -n 2) != "$want1"$'\n'"$want2" ]]; then
    sf_bad "$c-$name" "expected the lines '$want1' and '$want2'" "$e/restore.log"
  else
    check_output "$c-$name" "$e" "$op's $edit $value in checkpoint $newest: named, $older restored"
  fi
}
if [[ -z $newest || $newest == "$older" ]]; then
  sf_bad "$c" "the job ended, or 10 s passed, before two checkpoints were complete" "$d/run.log"
else
  unusable_case cut 'peruser[1]' state-cut 5 "operator 'peruser[1]' cannot restore its snapshot: snapshot truncated or malformed"
  # a source's position is not its checkpoint's
  at=$(sed -n 's/^position //p' "$d/ck/ckpt-$newest/MANIFEST")
  unusable_case position left pos 12345 "'left.snap' is at position 12345, its checkpoint at $at"
  # a Split's counter near 2^64 (it would wrap: every Merge below would wait for good)
  unusable_case split-wrap r1.split state-u64 0:0xfffffffffffffffb \
    "operator 'r1.split' cannot restore its snapshot: its counters cannot be: a counter is past 2^62"
  # a Merge expecting a sequence number its region's Split never assigned
  next=$("$B/sf-snapedit" "$d/ck" "$newest" r1.split get-state-u64 0)
  unusable_case merge-ahead 'r2.merge[0]' next-seq $((next + 1000)) \
    "'r2.merge[0].snap' cannot be: it expects sequence number $((next + 1000)), its Split 'r1.split' assigns $next next"
fi

# planted: killed once a checkpoint is complete; the sink's temporary file is replaced by a link
# to another file, bigger than the checkpoint's length (a restore that followed it would cut it)
c=planted
d=$work/$c
mkdir -p "$d"
(cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 ../w2.xml) >>"$d/run.log" 2>&1 &
pid=$!
for ((i = 0; i < 1000; i++)); do
  [[ $(complete | wc -l) -ge 1 ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [[ -z $(complete) || ! -f $d/.out.csv.sf-part ]]; then
  sf_bad "$c" "the job ended, or 10 s passed, before a checkpoint was complete" "$d/run.log"
else
  mv "$d/.out.csv.sf-part" "$d/aside"
  head -c $(($(stat -c %s "$d/aside") + 100000)) /dev/zero | tr '\0' v >"$d/victim.txt"
  cp "$d/victim.txt" "$work/planted-victim.ref"
  ln -s victim.txt "$d/.out.csv.sf-part"
  restore "$d" 2
  want="sf-exec: error: operator 'out': cannot create a temporary file in '.' for 'out.csv': './.out.csv.sf-part' is a symbolic link"
  if [[ $ST != 1 ]]; then
    sf_bad "$c" "exit status $ST, expected 1" "$d/restore.log"
  elif ! grep -qxF -- "$want" "$d/restore.log"; then
    sf_bad "$c" "no line '$want'" "$d/restore.log"
  elif ! cmp -s "$d/victim.txt" "$work/planted-victim.ref"; then
    sf_bad "$c" "the file the link leads to was written through it" "$d/restore.log"
  elif [[ -e $d/out.csv ]]; then
    sf_bad "$c" "out.csv was written" "$d/restore.log"
  else
    sf_ok "$c" "a link planted at the sink's temporary name: refused, its file untouched"
  fi
  rm -f "$d/victim.txt" "$work/planted-victim.ref"
fi

# fresh: without --restore, an earlier run's checkpoints are not used, and go
c=fresh
d=$work/$c
mkdir -p "$d"
start_killed "$d" 2 800
(cd "$d" && timeout -k 5 300 "$B/sf-exec" --checkpoint-dir ck ../w2.xml) >"$d/restore.log" 2>&1
ST=$?
if [[ $ST != 0 || -s $d/restore.log ]]; then
  sf_bad "$c" "exit status $ST or output on stderr" "$d/restore.log"
else
  check_output "$c" "$d" "a fresh run ignores the killed run's checkpoints and removes them"
fi

# foreign: only what sf wrote is ever removed, and a directory holding something else under sf's
# names is refused
c=foreign
d=$work/$c
mkdir -p "$d/ck/ckpt-1000" "$d/ck/ckpt-backup" "$d/elsewhere"
sed "s/COUNT/2000/" "$src/tests/recovery/ckpt.xml" >"$d/small.xml"
echo weights >"$d/ck/ckpt-1000/model.bin"
echo db >"$d/ck/ckpt-backup/important.db"
echo list >"$d/ck/ckpt-list.txt"
echo mine >"$d/elsewhere/keep.snap"
ln -s ../elsewhere "$d/ck/ckpt-7"
foreign_run() { # ARGS...: sf-exec in $d with ARGS; its status in ST, its stderr in $d/run.log
  (cd "$d" && timeout -k 5 120 "$B/sf-exec" "$@") >"$d/run.log" 2>&1
  ST=$?
}
intact() { [[ $(cat "$d/ck/ckpt-backup/important.db" "$d/ck/ckpt-list.txt" "$d/elsewhere/keep.snap" 2>&1) == $'db\nlist\nmine' ]]; }
refused() { # WHY: exit 1 and exactly the refusal naming WHY
  [[ $ST == 1 && $(cat "$d/run.log") == "sf-exec: error: the checkpoint directory 'ck' is not only sf-exec's: $1; move it away or use another directory" ]]
}
foreign_run --checkpoint-dir ck small.xml
if ! refused "'ck/ckpt-1000' holds 'model.bin', which sf-exec did not write" || [[ $(cat "$d/ck/ckpt-1000/model.bin") != weights ]] || ! intact; then
  sf_bad "$c" "ckpt-1000/model.bin: exit status $ST, expected 1, the refusal naming it and every file kept" "$d/run.log"
else
  rm -r "$d/ck/ckpt-1000"
  foreign_run --checkpoint-dir ck --restore small.xml
  if ! refused "'ck/ckpt-7' is a symbolic link" || ! intact || [[ ! -L $d/ck/ckpt-7 ]]; then
    sf_bad "$c" "a link ckpt-7: exit status $ST, expected 1, the refusal naming it and every file kept" "$d/run.log"
  else
    rm "$d/ck/ckpt-7"
    foreign_run --checkpoint-dir ck --checkpoint-interval 0.01 small.xml
    left=$(cd "$d/ck" && ls -A | tr '\n' ' ')
    if [[ $ST != 0 || -s $d/run.log ]] || ! intact || [[ $left != "ckpt-backup ckpt-list.txt " ]]; then
      sf_bad "$c" "once they are gone: exit status $ST (expected 0, nothing on stderr), left in ck: $left" "$d/run.log"
    else
      mkdir "$d/ck/ckpt-3"
      echo n >"$d/ck/ckpt-3/notes.txt"
      foreign_run --checkpoint-dir ck --remove-checkpoints small.xml
      want="sf-exec: error: the checkpoints in 'ck' were not removed: 'ck/ckpt-3' holds 'notes.txt', which sf-exec did not write"
      if [[ $ST != 1 || $(cat "$d/run.log") != "$want" || ! -f $d/ck/ckpt-3/notes.txt ]]; then
        sf_bad "$c" "--remove-checkpoints: exit status $ST, expected 1, '$want', notes.txt kept" "$d/run.log"
      else
        sf_ok "$c" "another tool's files and links under sf's names refused and kept; only sf's files removed"
      fi
    fi
  fi
fi

# job: a directory is one job's
c=job
d=$work/$c
mkdir -p "$d" "$d/second"
sed 's|<set attr="peak">max(v)</set>|<set attr="peak">min(v)</set>|' "$work/w1.xml" >"$work/changed-agg.xml"
sed 's|<param name="partitionBy">user item</param>|<param name="partitionBy">user</param>|' "$work/w1.xml" >"$work/changed-key.xml"
sed 's|<graph xmlns="urn:streamfission:graph:1" name="ckpt">|<graph xmlns="urn:streamfission:graph:1" name="other">|' \
  "$work/w1.xml" >"$work/other.xml"
job_bad() { sf_bad "$c" "$1" "$d/run.log" "$d/try.log"; }
try() { # GRAPH ARGS...: sf-exec on $work/GRAPH in $d with ARGS and ck; its status in ST, stderr in $d/try.log
  local graph=$1
  shift
  (cd "$d" && timeout -k 5 120 "$B/sf-exec" --checkpoint-dir ck "$@" "../$graph") >"$d/try.log" 2>&1
  ST=$?
}
# the refusal (the newest checkpoints, still being written at the kill, are named and skipped first)
refusal() { grep -vE "^sf-exec: warning: checkpoint [0-9]+ in 'ck' cannot be used \(no manifest: it never completed\); trying an older one$" "$d/try.log"; }
(cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 ../w1.xml) >>"$d/run.log" 2>&1 &
pid=$!
for ((i = 0; i < 1000; i++)); do
  [[ $(complete | wc -l) -ge 2 ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
newest=$(complete | tail -n 1)
before=$(cd "$d/ck" && find . | sort | md5sum)
# the newest checkpoint directory (complete or not) that says what its graph is: its manifest or a
# snapshot (a directory the kill left empty, or holding only temporary files, says nothing)
top=$(cd "$d/ck" && for n in $(ls -d ckpt-* | sed 's/ckpt-//' | sort -n -r); do
  compgen -G "ckpt-$n/MANIFEST" >/dev/null || compgen -G "ckpt-$n/*.snap" >/dev/null && { echo "$n"; break; }
done)
named=""
[[ -f $d/ck/ckpt-$top/MANIFEST ]] && named=" ('ckpt')"
want_agg="sf-exec: error: checkpoint $newest in 'ck' cannot be restored: operator 'peruser' changed since it was taken (its kind, parameters, expressions or schemas differ); nothing restored or removed (without --restore the job starts afresh)"
want_other="sf-exec: error: cannot use the checkpoint directory 'ck': it holds checkpoint $top of another graph$named (nothing restored or removed)"
if [[ -z $newest ]]; then
  job_bad "no checkpoint was complete before the job ended or 10 s passed"
elif try changed-agg.xml --restore; [[ $ST != 1 || $(refusal) != "$want_agg" ]]; then
  job_bad "max(v) made min(v): exit status $ST, expected 1 and '$want_agg'"
elif try changed-key.xml --restore; [[ $ST != 1 || $(refusal) != "${want_agg/\'peruser\'/\'firsts\'}" ]]; then
  job_bad "firsts' partitionBy changed: exit status $ST, expected 1 and '${want_agg/\'peruser\'/\'firsts\'}'"
elif try other.xml; [[ $ST != 1 || $(cat "$d/try.log") != "$want_other" ]]; then
  job_bad "another graph, fresh: exit status $ST, expected 1 and '$want_other'"
elif try other.xml --restore; [[ $ST != 1 || $(cat "$d/try.log") != "$want_other" ]]; then
  job_bad "another graph, --restore: exit status $ST, expected 1 and '$want_other'"
elif [[ $(cd "$d/ck" && find . | sort | md5sum) != "$before" ]]; then
  job_bad "the refused runs changed the checkpoint directory"
else
  # the job itself restores (at width 2); a second job given its directory meanwhile is refused.
  # The restored job is stopped (SIGSTOP) once it has restored, holding its lock, while the second
  # one is tried: the rest of its input may take less time than a second sf-exec takes to start
  (cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.1 --restore ../w2.xml) >"$d/restore.log" 2>&1 &
  pid=$!
  for ((i = 0; i < 1000; i++)); do
    grep -q "^sf-exec: restored checkpoint" "$d/restore.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  kill -STOP "$pid" 2>/dev/null
  (cd "$d/second" && timeout -k 5 120 "$B/sf-exec" --checkpoint-dir "$d/ck" ../../w1.xml) >"$d/try.log" 2>&1
  ST=$?
  running=no
  kill -0 "$pid" 2>/dev/null && running=yes
  kill -CONT "$pid" 2>/dev/null
  want_lock="sf-exec: error: cannot use the checkpoint directory '$d/ck': it is in use by another job (pid $pid on '$(hostname)')"
  wait "$pid"
  ST2=$?
  if [[ $running == no ]]; then
    job_bad "the restored job ended before the second one was tried"
  elif [[ $ST != 1 || $(cat "$d/try.log") != "$want_lock" ]]; then
    job_bad "a second job on a directory in use: exit status $ST, expected 1 and '$want_lock'"
  elif [[ $ST2 != 0 ]]; then
    job_bad "the restored job: exit status $ST2"
  else
    check_output "$c" "$d" "refused to a changed operator and another graph by name, locked against a second job"
  fi
fi

# refused: a job that refuses checkpoints leaves no directory it made
c=refused
d=$work/$c
mkdir -p "$d"
sed -e "s/COUNT/2000/" -e 's|<param name="roll">tuples 500</param>|<param name="roll">seconds 5</param>|' \
  "$src/tests/recovery/ckpt.xml" >"$d/g.xml"
(cd "$d" && timeout -k 5 120 "$B/sf-exec" --checkpoint-dir newck g.xml) >"$d/run.log" 2>&1
ST=$?
want="sf-exec: error: operator 'parts': parameter 'roll' = 'seconds' closes parts at times a restarted job cannot repeat: with checkpoints, roll by 'tuples N' or 'bytes N'"
if [[ $ST != 1 || $(cat "$d/run.log") != "$want" ]]; then
  sf_bad "$c" "exit status $ST, expected 1 and '$want'" "$d/run.log"
elif [[ -e $d/newck ]]; then
  sf_bad "$c" "the refused job left its checkpoint directory: $(ls -A "$d/newck" | tr '\n' ' ')" "$d/run.log"
else
  sf_ok "$c" "checkpoints refused at start-up: exit 1, the message, no directory left"
fi

# commit: a job that committed and then stopped before its checkpoints were gone (a kill while it
# removed them, or between its sinks' renames) is complete: a restore says so, finishes the renames
# and the cleanup, and changes no output. The state is made without a kill: a followed file (the
# job ends with SIGTERM's drain) and, once a checkpoint is complete, a foreign ckpt-999999 that
# makes the cleanup fail; then the file and the last part are put back under their temporary names
c=commit
d=$work/$c
mkdir -p "$d"
cp "$src/tests/recovery/commit.xml" "$d/"
echo "k,v" >"$d/in.csv"
(cd "$d" && exec timeout -k 5 300 "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.05 commit.xml) >"$d/run.log" 2>&1 &
pid=$!
rows=0
add_rows() { # N: N more rows appended to in.csv
  local j
  for ((j = 0; j < $1; j++, rows++)); do echo "$rows,$((rows * 7 % 13))"; done >>"$d/in.csv"
}
# rows until a checkpoint past row 650 is complete (the source read that far: 3 parts at least),
# then 100 more (the drain may drop some)
past() { cat "$d"/ck/ckpt-*/MANIFEST 2>/dev/null | awk '$1 == "position" && $2 >= 650 { f = 1 } END { exit !f }'; }
while ! past && kill -0 "$pid" 2>/dev/null; do
  add_rows 20
  sleep 0.01
done
mkdir "$d/ck/ckpt-999999"
echo other >"$d/ck/ckpt-999999/other.bin"
add_rows 100
kill -TERM "$pid"
wait "$pid"
ST=$?
want="sf-exec: warning: checkpoints in 'ck' not removed: 'ck/ckpt-999999' holds 'other.bin', which sf-exec did not write"
mkdir -p "$d/saved"
parts=$(cd "$d" && ls p-*.csv 2>/dev/null | tr '\n' ' ')
if [[ $ST != 0 || $(cat "$d/run.log") != "$want" ]]; then
  sf_bad "$c" "the run: exit status $ST, expected 0 and only '$want'" "$d/run.log"
elif [[ ! -f $d/out.csv || $(wc -w <<<"$parts") -lt 3 ]]; then
  sf_bad "$c" "the run published no out.csv or fewer than 3 parts ($parts)" "$d/run.log"
else
  cp "$d"/out.csv "$d"/p-*.csv "$d/saved/"
  rm -r "$d/ck/ckpt-999999"
  last=$(cd "$d" && ls p-*.csv | tail -n 1)
  mv "$d/out.csv" "$d/.out.csv.sf-part"
  mv "$d/$last" "$d/.$last.sf-part"
  (cd "$d" && timeout -k 5 120 "$B/sf-exec" --restore --checkpoint-dir ck commit.xml) >"$d/restore.log" 2>&1
  ST=$?
  want="sf-exec: the job in 'ck' had completed (every sink committed its output): nothing to restore"
  if [[ $ST != 0 || $(cat "$d/restore.log") != "$want" ]]; then
    sf_bad "$c" "the restore: exit status $ST, expected 0 and only '$want'" "$d/restore.log"
  elif [[ $(cd "$d" && ls -A | grep -v '^\(commit.xml\|in.csv\|run.log\|restore.log\|saved\|ck\)$' | tr '\n' ' ') != "out.csv $parts" ]]; then
    sf_bad "$c" "the restore left $(cd "$d" && ls -A | tr '\n' ' '), expected out.csv $parts beside the job's files" "$d/restore.log"
  elif ! (cd "$d" && for f in out.csv $parts; do cmp -s "saved/$f" "$f" || exit 1; done); then
    sf_bad "$c" "the restore changed the outputs" "$d/restore.log"
  elif [[ -n $(ls -A "$d/ck") ]]; then
    sf_bad "$c" "the restore left in ck: $(ls -A "$d/ck" | tr '\n' ' ')" "$d/restore.log"
  else
    sf_ok "$c" "committed, then stopped before its cleanup and between its renames: the restore says the job had completed, renames the rest, removes the checkpoints"
  fi
fi

# Runs GRAPH (relative to DIR) in DIR with checkpoints every 0.05 s into DIR/ck, SIGKILLs it once a
# checkpoint is complete (or it ended), and sets k to the newest complete checkpoint ("" if none).
kill_after_checkpoint() { # DIR GRAPH [INTERVAL (default 0.05)]
  local d=$1 graph=$2 pid newest=""
  (cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval "${3:-0.05}" "$graph") >"$d/run.log" 2>&1 &
  pid=$!
  while [[ -z $newest ]] && kill -0 "$pid" 2>/dev/null; do
    newest=$(cd "$d" && compgen -G "ck/ckpt-*/MANIFEST" | head -n 1)
    sleep 0.01
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  k=$(cd "$d/ck" 2>/dev/null && for m in ckpt-*/MANIFEST; do [[ -f $m ]] && echo "${m%/MANIFEST}"; done | sed 's/ckpt-//' | sort -n | tail -n 1)
}

# regions: Splits and Merges are matched by where they sit, not by their region's number: with
# width hints the names r1.split and r1.merge are other operators' at -w 1 than at -w 3 (checked
# first: the case would mean nothing otherwise); killed once a checkpoint is complete at one width,
# restored at the other, both ways
c=regions
rcount=1000000
[[ -n ${SF_SANITIZE:-} ]] && rcount=300000
mkdir -p "$work/regions/ref"
sed "s/COUNT/$rcount/" "$src/tests/recovery/regions.xml" >"$work/regions/seq.xml"
gen_ops() { grep -o '<operator name="r[0-9]*\.\(split\|merge\)" kind="[A-Za-z]*"[^>]* origin="[^"]*"' "$1" | sed 's/ host="[^"]*"//'; }
if ! "$B/sf-xform" -w 1 "$work/regions/seq.xml" -o "$work/regions/w1.xml" 2>"$work/regions/xform.log" ||
  ! "$B/sf-xform" -w 3 "$work/regions/seq.xml" -o "$work/regions/w3.xml" 2>>"$work/regions/xform.log" ||
  ! (cd "$work/regions/ref" && timeout -k 5 300 "$B/sf-exec" ../seq.xml) >>"$work/regions/xform.log" 2>&1; then
  sf_bad "$c" "sf-xform or the sequential run failed" "$work/regions/xform.log"
elif [[ $(gen_ops "$work/regions/w1.xml" | grep -c 'name="r1\.') != 2 ||
  -n $(gen_ops "$work/regions/w1.xml" | grep -F -x -f - <(gen_ops "$work/regions/w3.xml")) ]]; then
  sf_bad "$c" "the graphs at -w 1 and -w 3 do not give r1.split and r1.merge to different operators"
else
  for dir in "3 1" "1 3"; do
    set -- $dir
    d=$work/regions/k$1
    mkdir -p "$d"
    kill_after_checkpoint "$d" "../w$1.xml"
    (cd "$d" && timeout -k 5 300 "$B/sf-exec" --restore --checkpoint-dir ck --checkpoint-interval 0.05 "../w$2.xml") >"$d/restore.log" 2>&1
    ST=$?
    bad=$(grep -v -x -e "sf-exec: restored checkpoint $k from 'ck'" \
      -e "sf-exec: warning: checkpoint [0-9]* in 'ck' cannot be used (no manifest: it never completed); trying an older one" "$d/restore.log")
    if [[ -z $k ]]; then
      sf_bad "$c" "width $1: no checkpoint was complete at the kill" "$d/run.log"
    elif [[ $ST != 0 || -n $bad ]] || ! grep -q -x "sf-exec: restored checkpoint $k from 'ck'" "$d/restore.log"; then
      sf_bad "$c" "width $1 killed after checkpoint $k, restored at $2: exit status $ST, expected 0 and 'sf-exec: restored checkpoint $k from 'ck''" "$d/restore.log"
    elif ! cmp -s "$work/regions/ref/out.csv" "$d/out.csv"; then
      sf_bad "$c" "width $1 killed after checkpoint $k, restored at $2: out.csv differs from the sequential run's" "$d/restore.log"
    elif [[ -n $(ls -A "$d/ck") || -n $(cd "$d" && find . -maxdepth 1 -name '.*' -type f) ]]; then
      sf_bad "$c" "width $1 killed after checkpoint $k, restored at $2: files left behind" "$d/restore.log"
    else
      sf_ok "$c" "width $1 killed after checkpoint $k, restored at $2 (r1.split and r1.merge another region's there): output right"
    fi
  done
fi

# rr: a roundrobin region deals and merges runs of 16 tuples, counted from the start: killed once
# a checkpoint is complete at one width and restored at another, the Split and the Merge go on from
# the same count (the checkpoint's position is rarely a multiple of 16). Its Beacon's rate makes
# the job last a second however fast the build is, so a checkpoint completes before it ends (under
# ASan the job once ended before its first checkpoint completed)
c=rr
mkdir -p "$work/rr/ref"
cat >"$work/rr/seq.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="rr">
  <schema name="E"><attr name="id" type="int"/><attr name="v" type="int"/></schema>
  <operator name="src" kind="Beacon">
    <output stream="A" schema="E"/>
    <param name="count">$rcount</param>
    <param name="rate">$rcount</param>
    <set attr="id">seq</set>
    <set attr="v">rand(seq) % 1000</set>
  </operator>
  <operator name="f" kind="Functor">
    <input stream="A"/>
    <output stream="B" schema="E"/>
    <set attr="v">v * 7 + id % 13</set>
  </operator>
  <operator name="out" kind="FileSink">
    <input stream="B"/>
    <param name="file">out.csv</param>
  </operator>
</graph>
XML
if ! "$B/sf-xform" -w 2 "$work/rr/seq.xml" -o "$work/rr/w2.xml" 2>"$work/rr/xform.log" ||
  ! "$B/sf-xform" -w 3 "$work/rr/seq.xml" -o "$work/rr/w3.xml" 2>>"$work/rr/xform.log" ||
  ! grep -q '<param name="order">roundrobin</param>' "$work/rr/w3.xml" ||
  ! (cd "$work/rr/ref" && timeout -k 5 300 "$B/sf-exec" ../seq.xml) >>"$work/rr/xform.log" 2>&1; then
  sf_bad "$c" "sf-xform (a roundrobin region expected) or the sequential run failed" "$work/rr/xform.log"
else
  for dir in "2 3" "3 2"; do
    set -- $dir
    d=$work/rr/k$1
    mkdir -p "$d"
    kill_after_checkpoint "$d" "../w$1.xml"
    (cd "$d" && timeout -k 5 120 "$B/sf-exec" --restore --checkpoint-dir ck "../w$2.xml") >"$d/restore.log" 2>&1
    ST=$?
    if [[ -z $k ]]; then
      sf_bad "$c" "width $1: no checkpoint was complete at the kill" "$d/run.log"
    elif [[ $ST != 0 ]] || ! grep -q -x "sf-exec: restored checkpoint $k from 'ck'" "$d/restore.log"; then
      sf_bad "$c" "width $1 killed after checkpoint $k, restored at $2: exit status $ST, expected 0 and 'sf-exec: restored checkpoint $k from 'ck''" "$d/restore.log"
    elif ! cmp -s "$work/rr/ref/out.csv" "$d/out.csv"; then
      sf_bad "$c" "width $1 killed after checkpoint $k, restored at $2: out.csv differs from the sequential run's" "$d/restore.log"
    else
      sf_ok "$c" "roundrobin region, width $1 killed after checkpoint $k, restored at $2: output right"
    fi
  done
fi

# missed: fan-ins that drop barriers (tests/recovery/missed.xml) run to the end with checkpoints
# every 0.02 s, sequential and at width 2, with the output of a run without checkpoints
c=missed
d=$work/$c
mkdir -p "$d/ref"
cp "$src/tests/recovery/missed.xml" "$d/"
if ! "$B/sf-xform" -w 2 "$d/missed.xml" -o "$d/missed-w2.xml" 2>"$d/xform.log"; then
  sf_bad "$c" "sf-xform -w 2 failed" "$d/xform.log"
elif ! (cd "$d/ref" && timeout -k 5 60 "$B/sf-exec" ../missed.xml) >"$d/ref.log" 2>&1; then
  sf_bad "$c" "the run without checkpoints failed" "$d/ref.log"
else
  for g in missed missed-w2; do
    rm -rf "$d/run"
    mkdir -p "$d/run"
    (cd "$d/run" && timeout -k 5 60 "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.02 "../$g.xml") \
      >"$d/$g.log" 2>&1
    ST=$?
    if [[ $ST != 0 ]]; then
      sf_bad "$c" "$g.xml with checkpoints every 0.02 s exited $ST$([[ $ST == 124 || $ST == 137 ]] && echo " (hung: stopped after 60 s)")" "$d/$g.log"
    elif [[ -s $d/$g.log ]]; then
      sf_bad "$c" "$g.xml with checkpoints printed something" "$d/$g.log"
    elif ! cmp -s "$d/ref/out.csv" "$d/run/out.csv"; then
      sf_bad "$c" "$g.xml with checkpoints: out.csv differs from the run without" "$d/$g.log"
    else
      sf_ok "$c" "$g.xml: fan-ins that drop barriers, checkpoints every 0.02 s: completed, the output of a run without"
    fi
  done
fi

# missed-end: an operator that dropped a barrier and then finished writes no part of that
# checkpoint (tests/recovery/missed_end.xml): killed once a checkpoint is complete, the restore
# from it completes with the output of a run without checkpoints
c=missed-end
d=$work/$c
mkdir -p "$d/ref" "$d/run"
cp "$src/tests/recovery/missed_end.xml" "$d/"
if ! (cd "$d/ref" && timeout -k 5 60 "$B/sf-exec" ../missed_end.xml) >"$d/ref.log" 2>&1; then
  sf_bad "$c" "the run without checkpoints failed" "$d/ref.log"
else
  kill_after_checkpoint "$d/run" ../missed_end.xml 1
  (cd "$d/run" && timeout -k 5 60 "$B/sf-exec" --restore --checkpoint-dir ck --checkpoint-interval 1 ../missed_end.xml) \
    >"$d/restore.log" 2>&1
  ST=$?
  if [[ -z $k ]]; then
    sf_bad "$c" "the job ended before any checkpoint was complete" "$d/run/run.log"
  elif [[ $ST != 0 || $(cat "$d/restore.log") != "sf-exec: restored checkpoint $k from 'ck'" ]]; then
    sf_bad "$c" "killed after checkpoint $k: the restore exited $ST, expected 0 and only 'sf-exec: restored checkpoint $k from 'ck''" "$d/restore.log"
  elif ! cmp -s "$d/ref/out.csv" "$d/run/out.csv"; then
    sf_bad "$c" "killed after checkpoint $k and restored: out.csv differs from the run without checkpoints" "$d/restore.log"
  else
    sf_ok "$c" "a fan-in that dropped checkpoint 1's barrier finished first: killed after checkpoint $k, restored, the output of a run without"
  fi
fi

# join-hosts: a checkpoint taken with a Join replicated over h0 and h1, restored at -w 1 where it is
# serial on h0 (tests/recovery/join_hosts.xml, its left source pinned to h1): both executors refuse
# it and start from the beginning, with the output of the sequential run
c=join-hosts
d=$work/$c
mkdir -p "$d/ref/out" "$d/run/out"
cp "$src/tests/recovery/join_hosts.xml" "$d/"
sf_next_ports 2 || exit 1
hosts="h0=127.0.0.1:$P0,h1=127.0.0.1:$P1"
if ! "$B/sf-xform" -w 2 --hosts "$hosts" "$d/join_hosts.xml" -o "$d/run/w2.xml" 2>"$d/xform.log" ||
  ! "$B/sf-xform" -w 1 --hosts "$hosts" "$d/join_hosts.xml" -o "$d/run/w1.xml" 2>>"$d/xform.log"; then
  sf_bad "$c" "sf-xform failed" "$d/xform.log"
elif ! (cd "$d/ref" && timeout -k 5 60 "$B/sf-exec" ../join_hosts.xml) >"$d/ref.log" 2>&1; then
  sf_bad "$c" "the sequential run failed" "$d/ref.log"
else
  (cd "$d/run" && exec setsid timeout -k 5 60 bash "$src/tools/sf-launch" --exec "$B/sf-exec" --insecure-plaintext \
    --checkpoint-dir ck --checkpoint-interval 0.2 w2.xml) >"$d/launch.log" 2>&1 &
  lpid=$!
  SF_GROUPS+=("$lpid")
  for ((i = 0; i < 6000; i++)); do # (30 s at most)
    kill -0 "$lpid" 2>/dev/null && [[ ! -f $d/run/ck/ckpt-1/MANIFEST ]] || break
    sleep 0.005
  done
  vpid=$(pgrep -f -- "sf-exec --host h1 .*w2.xml" | while read -r p; do
    [[ $(readlink "/proc/$p/cwd") == "$d/run" ]] && echo "$p"; done | head -n 1)
  [[ -n $vpid ]] && kill -KILL "$vpid" 2>/dev/null
  wait "$lpid"
  ST=$?
  (cd "$d/run" && timeout -k 5 60 bash "$src/tools/sf-launch" --exec "$B/sf-exec" --insecure-plaintext --restore \
    --checkpoint-dir ck --checkpoint-interval 0.2 w1.xml) >"$d/restore.log" 2>&1
  RST=$?
  refused="sf-exec: warning: checkpoint 1 in '$d/run/ck' cannot be used (Join 'j' was replicated when it was taken and is serial now (restore it at a width where it is replicated)); trying an older one"
  afresh="sf-exec: no complete checkpoint in '$d/run/ck': starting from the beginning"
  # each executor refuses checkpoint 1 and starts afresh; one that reads the directory after the
  # coordinator (h1, its Beacon's host) started afresh and removed the checkpoints finds none
  lines_ok=1
  for h in h0 h1; do
    got=$(grep -F "[$h] " "$d/restore.log")
    [[ $got == "[$h] $refused"$'\n'"[$h] $afresh" || $got == "[$h] $afresh" ]] || lines_ok=0
  done
  [[ $(grep -c . "$d/restore.log") == $(grep -c '^\[h[01]\] ' "$d/restore.log") ]] || lines_ok=0
  if [[ -z $vpid || $ST != 1 ]]; then
    sf_bad "$c" "the run at -w 2 was not killed after checkpoint 1 (sf-launch exited $ST)" "$d/launch.log"
  elif [[ $RST != 0 || $lines_ok == 0 ]]; then
    sf_bad "$c" "the restore at -w 1: exit $RST, expected 0 and on h0 and h1 exactly: $refused / $afresh (or, the checkpoints removed first by the coordinator's fresh start, only the second)" "$d/restore.log"
  elif ! cmp -s "$d/ref/out/pairs.csv" "$d/run/out/pairs.csv"; then
    sf_bad "$c" "the restore at -w 1: out/pairs.csv differs from the sequential run's" "$d/restore.log"
  else
    sf_ok "$c" "a replicated Join's checkpoint restored at -w 1 on two executors: both refuse it, start afresh, output right"
  fi
fi

# no-dir: usage
c=no-dir
out=$("$B/sf-exec" --restore "$work/w2.xml" 2>&1)
ST=$?
want=$'sf-exec: --restore needs --checkpoint-dir\nTry \'sf-exec --help\' for more information.'
if [[ $ST == 2 && $out == "$want" ]]; then
  sf_ok "$c" "--restore without --checkpoint-dir: exit 2, the usage message"
else
  printf '%s\n' "$out" >"$work/no-dir.log"
  sf_bad "$c" "exit status $ST, expected 2 and '$want'" "$work/no-dir.log"
fi

echo "recovery: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
