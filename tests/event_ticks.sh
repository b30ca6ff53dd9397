#!/usr/bin/env bash
# tests/event_ticks.sh BUILD_DIR SOURCE_DIR
#
# Event-time ticks (docs/language.md, "Event time") through whole runs of sf-exec, on
# tests/distributed/ticks_fanin.xml: two Beacons with `time` and `tick` (periods 100 and 250, times
# that go back now and then), a fan-in, a Filter and sf_tickstamp (libsf_test_ops.so), which
# writes into every tuple the latest tick it received. Cases:
#   seq:       the sequential output equals the one awk works out here from the language's rules
#              (a source's tick ⌊clock / P⌋·P before the tuple that reaches it, floor toward
#              −infinity; a fan-in's tick the smaller of its inputs' latest, an ended input not
#              counting), byte for byte;
#   w1..w4:    rewritten by sf-xform -w W (the Filter and sf_tickstamp in one region with a
#              seqpulse Merge: --explain says so), the same bytes: every channel gets every tick,
#              before the tuples after it;
#   ckpt:      width 3 with a checkpoint every 10 ms: the same bytes;
#   stats:     --stats-json gives each operator's current tick: "final" at the end for every
#              operator the final ticks reached (the sink included);
#   time, time-w3: the fan-in with order="time": the output in the order awk works out (by time,
#              a tick before a tuple, then the input listed first; an input's final tick last),
#              sequentially and at width 3;
#   time-ckpt: with checkpoints (a cut recording the inputs between their barriers), the same bytes;
#   time-idle: the same with input b paced (2000 a second: the fan-in waits on a live input that
#              idles): the same bytes;
#   restore:   width 2 with checkpoints, killed (SIGKILL) once a checkpoint is complete, then
#              --restore at width 3 from a checkpoint ("restored checkpoint K"): the same bytes
#              (the sources' clocks come back from the checkpoint, so the restored job emits the
#              same ticks; the region's Split, which numbers ticks too, its counters).
#   window-restore: a keyed tumbling time window with lateness (some tuples late) in a region,
#              killed at width 2 once a checkpoint is complete, restored at width 3: the
#              sequential run's windows, byte for byte, and the replicas' late counts add up
#              to the sequential run's (the windows' state, clock and late tuples come back
#              through key groups).
#   socket-time-w1, socket-time-w2: a SocketSource with `time` and `tick` (rows sent by sf-tcp,
#              times going back beyond the lateness and jumping by several periods) into a keyed
#              tumbling time window, sequentially and at width 2 (in a region, --explain says so):
#              the windows and the late count equal what python3 works out here;
#   stats-late: --stats of that window unpaced: 'late N' and 'tick final' in its summary line and
#              the warning naming the first late tuple, as python3 works them out here;
#   max-time, max-time-file: a tuple at time INT64_MAX (a Beacon's; a FileSource's with onerror =
#              skip) fails the job with the exact message naming the source and the tuple, and no
#              output; max-time-1: at INT64_MAX - 1 the windows and late count python3 works out;
#   tick-emit, tick-emit-w2, tick-emit-w3: a Custom operator that emits at ticks
#              (sf_tick_counts: per key, the tuples since the last tick, in no key order), keyed
#              with punct="consumes": the ordering service puts what each tick makes it emit in
#              key order, as python3 works out here (skipped without python3); rewritten at
#              widths 2 and 3 it is in a region (--explain says so) and writes the same bytes.
# The same graph runs on three executors in tests/e2e_distributed.sh.
# Every case prints one line, OK or FAIL; failures keep the work directory. SF_KEEP=1 keeps it.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec sf-tcp || exit 1
B=$build/bin
trap sf_cleanup EXIT
sf_mktemp work sf-ticks || exit 1
export SF_LIBRARY_PATH=$build/lib/streamfission

SF_PASSED=0 SF_FAILED=0 SF_CASE_WIDTH=14 SF_WORK=$work

graph=$src/tests/distributed/ticks_fanin.xml
cd "$work" || exit 1
mkdir -p out

# The expected output, from the rules alone.
awk '
function floordiv(t, p,   q) { q = int(t / p); if (q * p > t) q--; return q * p }
BEGIN {
  NONE = -1e30; INF = 1e30
  cnt[0] = 3000; cnt[1] = 2000; per[0] = 100; per[1] = 250
  last[0] = NONE; last[1] = NONE; cur = NONE
  print "side,n,ts,tick"
  for (p = 0; p < 3000; p++)
    for (s = 0; s < 2; s++) {          # the fan-in: by position, then in the order listed
      if (p >= cnt[s]) continue
      ts = s == 0 ? p * 7 - (p % 5 == 4 ? 30 : 0) - 50 : p * 11 - (p % 4 == 3 ? 60 : 0)
      k = floordiv(ts, per[s])         # the clock only rises: so does its tick
      if (k > last[s]) last[s] = k
      m = last[0] < last[1] ? last[0] : last[1]
      if (m > cur) cur = m
      if (p % 3 != 1) printf "%d,%d,%d,%d\n", s, p, ts, cur == NONE ? -1 : cur
      if (p == cnt[s] - 1) last[s] = INF # its final tick: it no longer holds the fan-in back
    }
}' >expect.csv

if "$B/sf-exec" --stats-json stats.json "$graph" 2>seq.log && cmp -s expect.csv out/ticks.csv; then
  sf_ok seq "$(($(wc -l <expect.csv) - 1)) rows as worked out"
else
  sf_bad seq "the sequential output differs from the expected one" seq.log
  diff expect.csv out/ticks.csv | head -n 10
fi

# every operator the final ticks reached says so; the sources and the sink are among them
finals=$(grep -o '"name": "[a-z]*", "kind": "[A-Za-z]*"[^}]*"tick": "final"' stats.json | cut -d'"' -f4 | tr '\n' ' ')
if [[ $finals == "a b mix keep stamp sink " ]]; then
  sf_ok stats "current tick final for: $finals"
else
  sf_bad stats "expected the tick final for 'a b mix keep stamp sink', got '$finals'" stats.json
fi

for w in 1 2 3 4; do
  "$B/sf-xform" -w "$w" --explain "$graph" >"w$w.xml" 2>"w$w.explain"
  rm -f out/ticks.csv
  if [[ $w -gt 1 ]] && ! grep -q " keep: parallel in region r1 (width $w, split roundrobin, merge seqpulse)" "w$w.explain"; then
    sf_bad "w$w" "--explain does not put keep in a seqpulse region of width $w" "w$w.explain"
  elif [[ $w -gt 1 ]] && ! grep -q " stamp: parallel in region r1 (width $w" "w$w.explain"; then
    sf_bad "w$w" "--explain does not put stamp in region r1" "w$w.explain"
  elif "$B/sf-exec" "w$w.xml" 2>"w$w.log" && cmp -s expect.csv out/ticks.csv; then
    sf_ok "w$w" "the sequential bytes"
  else
    sf_bad "w$w" "the output at width $w differs" "w$w.log"
  fi
done

rm -rf out/ticks.csv ck
if "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.01 w3.xml 2>ckpt.log && cmp -s expect.csv out/ticks.csv; then
  sf_ok ckpt "the sequential bytes with checkpoints every 10 ms"
else
  sf_bad ckpt "the output with checkpoints differs" ckpt.log
fi

# time: the same fan-in merged by event time (order="time"): the head with the smallest time goes
# first (a tick's value, a tuple's ts; a tick before a tuple, then the input listed first), and an
# input's final tick (+infinity) goes last, so the fan-in's tick is held by the input that ended
sed 's|<input stream="A B"/>|<input stream="A B" order="time"/>|' "$graph" >timed.xml
awk '
function floordiv(t, p,   q) { q = int(t / p); if (q * p > t) q--; return q * p }
BEGIN {
  NONE = -1e30; INF = 1e30
  cnt[0] = 3000; cnt[1] = 2000; per[0] = 100; per[1] = 250
  for (s = 0; s < 2; s++) {           # each input: its ticks and tuples, in its own order
    m = 0; last = NONE
    for (p = 0; p < cnt[s]; p++) {
      ts = s == 0 ? p * 7 - (p % 5 == 4 ? 30 : 0) - 50 : p * 11 - (p % 4 == 3 ? 60 : 0)
      k = floordiv(ts, per[s])
      if (k > last) { last = k; kind[s, m] = "tick"; key[s, m] = k; m++ }
      kind[s, m] = "tuple"; key[s, m] = ts; num[s, m] = p; m++
    }
    kind[s, m] = "tick"; key[s, m] = INF; m++
    len[s] = m; at[s] = 0; latest[s] = NONE
  }
  cur = NONE
  print "side,n,ts,tick"
  while (at[0] < len[0] || at[1] < len[1]) {
    best = -1
    for (s = 0; s < 2; s++) {
      if (at[s] >= len[s]) continue
      i = at[s]
      if (best < 0 || key[s, i] < key[best, at[best]] || (key[s, i] == key[best, at[best]] && kind[s, i] == "tick" && kind[best, at[best]] != "tick")) best = s
    }
    i = at[best]++
    if (kind[best, i] == "tick") {
      latest[best] = key[best, i]
      m = latest[0] < latest[1] ? latest[0] : latest[1]
      if (m > cur) cur = m
    } else if (num[best, i] % 3 != 1)
      printf "%d,%d,%d,%d\n", best, num[best, i], key[best, i], cur == NONE ? -1 : cur
  }
}' >expect-time.csv
rm -f out/ticks.csv
if "$B/sf-exec" timed.xml 2>time.log && cmp -s expect-time.csv out/ticks.csv; then
  sf_ok time "$(($(wc -l <expect-time.csv) - 1)) rows in time order as worked out"
else
  sf_bad time "the time-ordered fan-in's output differs from the expected one" time.log
  diff expect-time.csv out/ticks.csv | head -n 10
fi
"$B/sf-xform" -w 3 timed.xml >timed3.xml
rm -f out/ticks.csv
if "$B/sf-exec" timed3.xml 2>time3.log && cmp -s expect-time.csv out/ticks.csv; then
  sf_ok time-w3 "the same bytes at width 3"
else
  sf_bad time-w3 "the time-ordered fan-in's output at width 3 differs" time3.log
fi
rm -rf out/ticks.csv ck
if "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.01 timed.xml 2>time-ck.log && cmp -s expect-time.csv out/ticks.csv &&
  [[ ! -s time-ck.log ]]; then
  sf_ok time-ckpt "with checkpoints (its cut records the inputs between their barriers): the same bytes"
else
  sf_bad time-ckpt "the time-ordered fan-in with checkpoints differs or complained" time-ck.log
fi

# time-idle: the same with input b paced (2000 tuples a second), so that the fan-in waits for it
# with nothing at its head time and again while a races ahead: the same bytes (the rule waits
# for every input that has not ended, so its output does not depend on their speeds)
awk '/<operator name="b" kind="Beacon">/ { print; print "    <param name=\"rate\">2000</param>"; next } { print }' \
  timed.xml >timed-idle.xml
rm -f out/ticks.csv
if grep -q '<param name="rate">2000</param>' timed-idle.xml && "$B/sf-exec" timed-idle.xml 2>time-idle.log &&
  cmp -s expect-time.csv out/ticks.csv; then
  sf_ok time-idle "input b paced (it idles between its tuples): the same bytes"
else
  sf_bad time-idle "the time-ordered fan-in with a paced input differs" time-idle.log
fi

# kill_after_checkpoint GRAPH LOG SECONDS: runs GRAPH with a checkpoint every 50 ms into ck and
# SIGKILLs it SECONDS after the first checkpoint is complete (or after 3 s without one)
kill_after_checkpoint() {
  "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.05 "$1" 2>"$2" &
  local pid=$!
  for _ in $(seq 1 300); do
    [[ -n $(find ck -name MANIFEST 2>/dev/null) ]] && break
    sleep 0.01
  done
  sleep "$3"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

# restore: the same graph paced (each Beacon emits its tuples over about a second), killed once a
# checkpoint is complete, restored at another width
sed 's|<param name="count">\([0-9]*\)</param>|<param name="count">\1</param><param name="rate">\1</param>|' \
  "$graph" >paced.xml
"$B/sf-xform" -w 2 paced.xml >p2.xml && "$B/sf-xform" -w 3 paced.xml >p3.xml
rm -rf out/ticks.csv ck
kill_after_checkpoint p2.xml kill.log 0.1
if [[ -z $(find ck -name MANIFEST 2>/dev/null) ]]; then
  sf_bad restore "no checkpoint was complete at the kill" kill.log
elif [[ -f out/ticks.csv ]]; then
  sf_bad restore "the job ended before the kill: nothing to restore" kill.log
elif "$B/sf-exec" --checkpoint-dir ck --restore p3.xml 2>restore.log && cmp -s expect.csv out/ticks.csv; then
  # (and from a checkpoint: the region's Split, which gave the ticks numbers of their own, takes
  # its counters back)
  if grep -q "^sf-exec: restored checkpoint [0-9]* from 'ck'$" restore.log; then
    sf_ok restore "killed at width 2, restored at width 3 from a checkpoint: the sequential bytes"
  else
    sf_bad restore "the restore used no checkpoint" restore.log
  fi
else
  sf_bad restore "the restored output differs" restore.log
fi

# window-restore: a keyed time window (with lateness, so some tuples are late) in a region, paced;
# killed at width 2 once a checkpoint is complete, restored at width 3: the sequential bytes, and
# the late count of the sequential run
cat >win.xml <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="win">
  <schema name="T"><attr name="k" type="int"/><attr name="ts" type="int"/><attr name="v" type="int"/></schema>
  <schema name="W"><attr name="k" type="int"/><attr name="wend" type="int"/><attr name="n" type="int"/>
    <attr name="s" type="int"/></schema>
  <operator name="src" kind="Beacon"><output stream="S" schema="T"/>
    <param name="count">3000</param><param name="rate">3000</param>
    <param name="time">ts</param><param name="tick">100</param>
    <set attr="k">seq % 7</set><set attr="ts">seq * 7 - (seq % 5 == 4 ? 300 : 0)</set><set attr="v">seq</set>
  </operator>
  <operator name="win" kind="Aggregate"><input stream="S"/><output stream="A" schema="W"/>
    <param name="partitionBy">k</param><param name="window">tumbling time 500</param>
    <param name="lateness">30</param>
    <set attr="wend">window_end()</set><set attr="n">count()</set><set attr="s">sum(v)</set>
  </operator>
  <operator name="sink" kind="FileSink"><input stream="A"/><param name="file">out/win.csv</param></operator>
</graph>
EOF
rm -rf out/win.csv ck
"$B/sf-exec" --stats-json win-seq.json win.xml 2>win-seq.log && cp out/win.csv win-expect.csv
"$B/sf-xform" -w 2 win.xml >win2.xml && "$B/sf-xform" -w 3 win.xml >win3.xml
rm -rf out/win.csv
kill_after_checkpoint win2.xml wkill.log 0.2
late_seq=$(grep -o '"late": [0-9]*' win-seq.json | head -n 1)
if [[ ! -s win-expect.csv || $late_seq == '"late": 0' || -z $late_seq ]]; then
  sf_bad window-restore "the sequential run made no windows or no late tuples ($late_seq)" win-seq.log
elif [[ -z $(find ck -name MANIFEST 2>/dev/null) || -f out/win.csv ]]; then
  sf_bad window-restore "no checkpoint was complete at the kill, or the job ended first" wkill.log
elif "$B/sf-exec" --checkpoint-dir ck --restore --stats-json win-r.json win3.xml 2>wrestore.log &&
  cmp -s win-expect.csv out/win.csv; then
  late_r=$(grep -o '"late": [0-9]*' win-r.json | awk '{ s += $2 } END { print "\"late\": " s }')
  if [[ $late_r == "$late_seq" ]]; then
    sf_ok window-restore "killed at width 2, restored at width 3: the sequential windows ($late_seq)"
  else
    sf_bad window-restore "the replicas' late tuples add up to $late_r, not $late_seq" win-r.json
  fi
else
  sf_bad window-restore "the restored windows differ" wrestore.log
fi

# socket-time: a SocketSource with `time` and `tick` (its clock hooks into the same emit as every
# source's) into a keyed tumbling time window with lateness, sequentially and at width 2: the
# windows and the late count python3 works out from the rules
cat >sock-gen.py <<'PY'
import sys
# rows k,ts,v: times that go back now and then, by more than the lateness (late tuples), and a
# jump of 4000 (empty windows; the clock moves by several periods at once)
def rows():
    for seq in range(2000):
        yield seq % 5, seq * 7 - (300 if seq % 6 == 5 else 0) + (4000 if seq >= 1000 else 0), seq
if sys.argv[1] == "input":
    print("k,ts,v")
    for k, ts, v in rows():
        print(f"{k},{ts},{v}")
else:  # tumbling time 500, lateness 30, tick 100
    P, SIZE, L = 100, 500, 30
    wins, clock, cur, late = {}, None, None, 0
    out = ["k,wend,n,s"]
    def tick(t):  # what tick t closes (None: the final tick), by window end then key
        for end, k in sorted(w for w in wins if t is None or w[0] + L <= t):
            n, s = wins.pop((end, k))
            out.append(f"{k},{end},{n},{s}")
    for k, ts, v in rows():
        clock = ts if clock is None else max(clock, ts)
        t = clock // P * P
        if cur is None or t > cur:
            cur = t
            tick(t)
        end = ts // SIZE * SIZE + SIZE
        if end + L <= cur:
            late += 1
            continue
        n, s = wins.get((end, k), (0, 0))
        wins[(end, k)] = (n + 1, s + v)
    tick(None)
    print("\n".join(out))
    print(late, file=sys.stderr)
PY
if ! command -v python3 >/dev/null; then
  echo "socket-time    SKIP  python3 is missing"
else
  python3 sock-gen.py input >sock-in.csv
  python3 sock-gen.py expect >sock-expect.csv 2>sock-late.txt
  for w in 1 2; do
    sf_next_ports 1 || exit 1
    cat >"sock$w.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="ticks_socket">
  <schema name="T"><attr name="k" type="int"/><attr name="ts" type="int"/><attr name="v" type="int"/></schema>
  <schema name="W"><attr name="k" type="int"/><attr name="wend" type="int"/><attr name="n" type="int"/>
    <attr name="s" type="int"/></schema>
  <operator name="src" kind="SocketSource"><output stream="S" schema="T"/>
    <param name="listen">127.0.0.1:$P0</param><param name="time">ts</param><param name="tick">100</param>
  </operator>
  <operator name="win" kind="Aggregate"><input stream="S"/><output stream="A" schema="W"/>
    <param name="partitionBy">k</param><param name="window">tumbling time 500</param>
    <param name="lateness">30</param>
    <set attr="wend">window_end()</set><set attr="n">count()</set><set attr="s">sum(v)</set>
  </operator>
  <operator name="sink" kind="FileSink"><input stream="A"/><param name="file">out/sock.csv</param></operator>
</graph>
XML
    "$B/sf-xform" -w "$w" --explain "sock$w.xml" >"sock-run$w.xml" 2>"sock$w.explain"
    rm -f out/sock.csv
    (exec timeout -k 5 30 "$B/sf-exec" --stats-json "sock$w.json" "sock-run$w.xml" 2>"sock$w.log") &
    pid=$!
    timeout 30 "$B/sf-tcp" send "127.0.0.1:$P0" <sock-in.csv 2>"sock-client$w.log"
    wait "$pid"
    st=$?
    late=$(grep -o '"late": [0-9]*' "sock$w.json" 2>/dev/null | awk '{ s += $2 } END { print s + 0 }')
    if [[ $w == 2 ]] && ! grep -q " win: parallel in region r1 (width 2, split hash on 'k', merge seqpulse)" sock2.explain; then
      sf_bad "socket-time-w$w" "--explain does not put win in a hashed region of width 2" sock2.explain
    elif [[ $st == 0 ]] && cmp -s sock-expect.csv out/sock.csv && [[ $late == "$(cat sock-late.txt)" ]]; then
      sf_ok "socket-time-w$w" "$(($(wc -l <sock-expect.csv) - 1)) windows and $late late tuples as worked out"
    else
      sf_bad "socket-time-w$w" "exit $st, late $late (expected $(cat sock-late.txt)), or the windows differ" "sock$w.log"
      diff sock-expect.csv out/sock.csv | head -n 10
    fi
  done
fi

# stats-late: what --stats prints of a time window: its late tuples and its current tick in the
# summary line, and the warning naming the first late tuple, as python3 works them out from the
# rules (win.xml unpaced)
sed 's|<param name="rate">3000</param>||' win.xml >win-fast.xml
if ! command -v python3 >/dev/null; then
  echo "stats-late     SKIP  python3 is missing"
else
  python3 - >stats-expect.txt <<'PY'
# tumbling time 500, lateness 30, tick 100: a tuple is late when its window's end + 30 <= the
# latest tick, the tick floor(clock / 100) * 100 sent before the tuple that reaches it
late, first, clock = 0, None, None
for seq in range(3000):
    k, ts, v = seq % 7, seq * 7 - (300 if seq % 5 == 4 else 0), seq
    clock = ts if clock is None else max(clock, ts)
    tick = clock // 100 * 100
    if (ts // 500 + 1) * 500 + 30 <= tick:
        late += 1
        first = first or f"(k={k}, ts={ts}, v={v})"
print(f"sf-exec: warning: operator 'win': {late} late tuples dropped (event time behind the windows' end + lateness); the first: {first}")
print(f"win late {late} tick final")
PY
  rm -f out/win.csv
  "$B/sf-exec" --stats win-fast.xml 2>stats-late.log
  got=$(grep "^sf-exec: warning: operator 'win'" stats-late.log)
  got+=$'\n'$(sed -n 's/^  \(win\) .*  \(late [0-9]*\)  \(tick final\)$/\1 \2 \3/p' stats-late.log)
  if [[ $got == "$(cat stats-expect.txt)" ]]; then
    sf_ok stats-late "--stats: $(tail -n 1 stats-expect.txt), the warning names the first late tuple"
  else
    sf_bad stats-late "--stats does not say what python3 works out: $(tr '\n' '|' <stats-expect.txt)" stats-late.log
  fi
fi

# tick-emit: a keyed Custom operator emitting at ticks, its emissions put in key order by the
# runtime (the operator emits them last-come key first), sequentially and replicated
cat >tc.xml <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="tickcounts">
  <schema name="T"><attr name="key" type="int"/><attr name="ts" type="int"/></schema>
  <schema name="C"><attr name="key" type="int"/><attr name="n" type="int"/><attr name="tick" type="int"/></schema>
  <operator name="src" kind="Beacon"><output stream="S" schema="T"/>
    <param name="count">3000</param><param name="time">ts</param><param name="tick">50</param>
    <set attr="key">(seq * 7 + seq / 11) % 13</set><set attr="ts">seq * 3 - (seq % 7 == 6 ? 20 : 0)</set>
  </operator>
  <operator name="counts" kind="Custom"><input stream="S"/><output stream="C" schema="C"/>
    <library path="libsf_test_ops.so" symbol="sf_tick_counts"/>
    <model state="partitioned" keys="key" selectivity="atmostone" punct="consumes"/>
  </operator>
  <operator name="sink" kind="FileSink"><input stream="C"/><param name="file">out/tc.csv</param></operator>
</graph>
EOF
if ! command -v python3 >/dev/null; then
  echo "tick-emit      SKIP  python3 is missing"
else
  python3 - >tc-expect.csv <<'PY'
# The rules alone: the source's tick floor(clock / 50) * 50 before the tuple that reaches it, the
# final tick (INT64_MAX) at the end; at each tick, per key seen since the last one, its count, in
# key order (docs/design.md, "Sub-positions, ticks and time": the ordering service).
P, FINAL = 50, 2**63 - 1
counts, clock, last = {}, None, None
print("key,n,tick")
def tick(t):
    for k in sorted(counts):
        print(f"{k},{counts[k]},{t}")
    counts.clear()
for seq in range(3000):
    ts = seq * 3 - (20 if seq % 7 == 6 else 0)
    clock = ts if clock is None else max(clock, ts)
    t = clock // P * P
    if last is None or t > last:
        tick(t)
        last = t
    key = (seq * 7 + seq // 11) % 13
    counts[key] = counts.get(key, 0) + 1
tick(FINAL)
PY
  rm -f out/tc.csv
  if "$B/sf-exec" tc.xml 2>tc.log && cmp -s tc-expect.csv out/tc.csv; then
    sf_ok tick-emit "$(($(wc -l <tc-expect.csv) - 1)) rows as worked out, in key order at each tick"
  else
    sf_bad tick-emit "the sequential output differs from the expected one" tc.log
    diff tc-expect.csv out/tc.csv | head -n 10
  fi
  for w in 2 3; do
    rm -f out/tc.csv
    "$B/sf-xform" -w "$w" --explain tc.xml >"tc$w.xml" 2>"tc$w.explain"
    if ! grep -q " counts: parallel in region r1 (width $w, split hash on 'key', merge seqpulse)" "tc$w.explain"; then
      sf_bad "tick-emit-w$w" "--explain does not put counts in a hashed seqpulse region of width $w" "tc$w.explain"
    elif "$B/sf-exec" "tc$w.xml" 2>"tc$w.log" && cmp -s tc-expect.csv out/tc.csv; then
      sf_ok "tick-emit-w$w" "in a region of width $w: the same bytes"
    else
      sf_bad "tick-emit-w$w" "the output at width $w differs" "tc$w.log"
      diff tc-expect.csv out/tc.csv | head -n 10
    fi
  done
fi

# max-time, max-time-file: a tuple at time INT64_MAX, whose tick (period 1 divides it) would be
# the final tick's, fails the job naming the source and the tuple (a Beacon; a FileSource with
# onerror = skip, whose row parsed), and the sink writes nothing; max-time-1: at INT64_MAX - 1
# the job runs, its windows and late count as python3 works them out here.
maxgraph() { # FILE SOURCE-XML TS: times 0, 1, TS, 3, tick 1, into tumbling time 10
  cat >"$1" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="maxtime">
  <schema name="T"><attr name="ts" type="int"/></schema>
  <schema name="W"><attr name="n" type="int"/><attr name="start" type="int"/></schema>
  <operator name="src" kind="$2"><output stream="S" schema="T"/>
    <param name="time">ts</param><param name="tick">1</param>$3
  </operator>
  <operator name="win" kind="Aggregate"><input stream="S"/><output stream="O" schema="W"/>
    <param name="window">tumbling time 10</param>
    <set attr="n">count()</set><set attr="start">window_start()</set>
  </operator>
  <operator name="sink" kind="FileSink"><input stream="O"/><param name="file">out/max.csv</param></operator>
</graph>
XML
}
beacon_max() { echo "<param name=\"count\">4</param><set attr=\"ts\">seq == 2 ? $1 : seq</set>"; }
MAXMSG="sf-exec: error: operator 'src': tuple (ts=9223372036854775807): time 'ts' = 9223372036854775807 stands for the end of the stream; the largest time a tuple may have is 9223372036854775806"
maxgraph max.xml Beacon "$(beacon_max 9223372036854775807)"
printf 'ts\n0\n1\n9223372036854775807\n3\n' >max-in.csv
maxgraph max-file.xml FileSource '<param name="file">max-in.csv</param><param name="onerror">skip</param>'
for c in max max-file; do
  rm -f out/max.csv
  "$B/sf-exec" "$c.xml" 2>"$c.log"
  st=$?
  if [[ $st -eq 1 && $(cat "$c.log") == "$MAXMSG" && ! -e out/max.csv ]]; then
    sf_ok "${c/max/max-time}" "refused with the exact message naming src and the tuple, no output"
  else
    sf_bad "${c/max/max-time}" "exit $st, or not exactly the refusal, or an output was written" "$c.log"
  fi
done
if ! command -v python3 >/dev/null; then
  echo "max-time-1     SKIP  python3 is missing"
else
  python3 - >max1-expect.txt <<'PY'
# The rules: the tick floor(clock / 1) * 1 before each tuple that raises the clock; a window
# [k*10, k*10 + 10) closes at the first tick >= its end; a tuple whose window closed is late; the
# final tick emits what is left (by window start).
TIMES = [0, 1, 2**63 - 2, 3]
wins, clock, late, out = {}, None, 0, ["n,start"]
def close(t):
    for start in sorted(wins):
        if t is None or start + 10 <= t:
            out.append(f"{wins.pop(start)},{start}")
for ts in TIMES:
    if clock is None or ts > clock:
        clock = ts
        close(clock)
    start = ts // 10 * 10
    if start + 10 <= clock:
        late += 1
        continue
    wins[start] = wins.get(start, 0) + 1
close(None)
print("\n".join(out))
print(f"late {late}")
PY
  maxgraph max1.xml Beacon "$(beacon_max 9223372036854775806)"
  rm -f out/max.csv
  "$B/sf-exec" --stats max1.xml 2>max1.log
  st=$?
  { cat out/max.csv; sed -n 's/^  win .*  \(late [0-9]*\)  tick final$/\1/p' max1.log; } >max1-got.txt 2>/dev/null
  if [[ $st -eq 0 ]] && cmp -s max1-expect.txt max1-got.txt; then
    sf_ok max-time-1 "time INT64_MAX - 1 runs: $(tr '\n' ' ' <max1-expect.txt)as worked out"
  else
    sf_bad max-time-1 "exit $st, or not what python3 works out: $(tr '\n' '|' <max1-expect.txt)" max1.log
    diff max1-expect.txt max1-got.txt | head -n 10
  fi
fi

echo "event_ticks: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED -eq 0 ]]
