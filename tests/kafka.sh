#!/usr/bin/env bash
# tests/kafka.sh BUILD_DIR SOURCE_DIR
#
# KafkaSource (docs/language.md, "KafkaSource") against librdkafka's mock cluster: sf-kafka-mock
# (tests/tools/kafka_mock.c) starts 3 brokers on loopback with the topics a case needs, and records
# are produced with chosen partitions and CreateTime timestamps by `sf-kafka-mock produce` (kcat
# cannot set a timestamp). What is verified is against the mock's brokers, which speak the Kafka
# protocol but are not Kafka (tests/README says what that leaves out). Cases:
#   mock:      the cluster prints its bootstrap address; `kcat -L` lists 3 brokers and the topic's
#              3 partitions; rows produced with `kcat -P -p 1` come back from `kcat -C` in partition
#              1, and the tool's producer puts each row in its partition with its timestamp;
#   record:    the cluster's --record file has a line per batch those producers appended, its
#              offsets the ones kcat reads, without a transaction or producer id;
#   order:     ROWS rows (keys, ints, timestamps with ties across partitions, fields with commas and
#              quotes) in 3 partitions; KafkaSource (end = high-watermark) -> FileSink writes them
#              exactly in the order the docs promise (the heads of the partitions merged by
#              timestamp, ties by partition number), computed independently here in Python;
#   keyed-wN:  KafkaSource -> Aggregate (partitionBy key, sliding 3) -> FileSink, sequentially
#              and rewritten at width 3 (sf-xform -w 3), equals byte for byte the same graph over a
#              FileSource reading the rows in that order; keyed-hosts: at width 3 on three
#              executors (sf-xform --hosts, sf-launch on loopback) too;
#   time:      a topic whose record timestamps run against the rows' `ts`: with `time` = ts the
#              source merges by ts (and an event-time window over it gives the FileSource graph's
#              output), without it by the timestamps;
#   partitions, start, latest: `partitions` = "2,0", `start` = "offsets 1:5" and `start` =
#              `latest` read what they say; offset-range: an offset outside a partition's is refused;
#   count:     `count` = 10 ends the source after the first 10 rows of that order;
#   broker-down: broker 1 taken down for a second mid-run (sf-kafka-mock's "down 1", "up 1" on
#              its stdin): the job waits for librdkafka to reconnect, exits 0 with the same output,
#              and librdkafka's warnings about it name the operator;
#   restore:   a job with checkpoints killed with SIGKILL once checkpoint 2 is complete, then
#              `--restore`d (at width 3) after 3 more records were produced, writes byte for byte
#              the uninterrupted run's output (the ends of its partitions are the checkpoint's),
#              and says which checkpoint it took;
#   restore-bad: a checkpoint whose next offset of partition 0 is beyond it (sf-snapedit) is
#              not used, the warning saying why, and the job starts from the beginning; nor one
#              whose snapshot is cut short;
#   live:      `end` = `never` reads what is there, then rows produced while it runs, until SIGTERM
#              drains it (exit 0, every row out);
#   live-idle: `end` = `never` over 3 partitions, partition 1 empty (idle): the 300 rows of the
#              others come out merged by timestamp (order.py), then rows produced into one of them
#              alone, then the other, then a row with the oldest timestamp into partition 1, last,
#              each batch waited for on standard output (the old rule waited for partition 1);
#   unknown-topic, unreachable, bad-record, skip, bad-param: exact messages naming the operator
#              (librdkafka's own log lines come through the executor's log as warnings naming it);
#   json-order, json-keyed: the orders topic's rows as JSON objects (members shuffled, members the
#              schema lacks, blanks) with format = json: byte for byte the csv topic's output, and
#              through the keyed graph at width 3 the FileSource graph's;
#   json-bad-N, json-skip: a record at offset N that does not parse (a wrong type, a member
#              missing or null, an array, invalid JSON, an int beyond int64, a second value): the
#              exact error; with onerror = skip the exact warning and the good rows;
#   sink-wN:   FileSource -> Functor -> KafkaSink (key = key) sequentially and at width 3: read
#              back with kcat, each record's key is its row's, each key in one partition, and each
#              partition holds the rows of its keys in order, once;
#   roundtrip: those records read by a KafkaSource come in the order computed from their CreateTime
#              timestamps as kcat shows them (ties by partition);
#   sink-restore: an at-least-once KafkaSink job killed with SIGKILL after checkpoint 2 and restored at width 3:
#              every row in the topic, in order per partition once repeats are dropped (at-least-
#              once: the repeats are counted), and the sink's at-least-once warning;
#   sink-key-expr: key = key + ":" + str(ts): each record's key is what Python computes from its
#              row, in the partition of its murmur2 hash (Java's partitioner, computed here), each
#              partition the rows of its keys in order, once; sink-key-fault: a key expression
#              dividing by zero on a tuple fails the job with the exact message naming it;
#   deny-source, deny-sink: a topic the brokers do not authorize: the exact message;
#   sink-unknown, sink-param: an unknown topic's exact message; sf-xform refuses a delivery
#              that is neither mode, an empty transactional_id and a key expression naming no
#              attribute (exact file:line:column diagnostic);
#   sink-eo-end: delivery = exactly-once without checkpoints: one transaction, committed at the
#              end; a read_committed consumer gets each record once, in order per partition;
#   sink-eo-ckpt: with checkpoints every 20 ms (exactly-once by default), the same, in several
#              transactions (committed views: committed_view, from the mock's record);
#   sink-eo-stall: killed while the commit of checkpoint 1's transaction hangs (EndTxn failing
#              for a while): the restore from checkpoint 1 says that transaction was not committed
#              and writes it again; the committed view holds every row once;
#   sink-eo-fence: a second job with the same transactional_id fences the first, whose next
#              commit fails with the exact message; every row is in the committed view;
#   sink-eo-kill: SIGKILLs at random moments, each run restored at another width, until one
#              completes: the committed view holds every row once, in order per partition;
#   txn-client: `sf-kafka-mock txn` (a transactional producer driven from stdin) commits, flushes
#              and aborts, answering each; the record file has its InitProducerId, batches and
#              EndTxns in order;
#   txn-view:  `sf-kafka-mock txn` (a transactional producer) commits, aborts, commits after the
#              abort and leaves a transaction open by a crash, interleaved in 3 partitions with
#              records written without a transaction: `kcat -C -X isolation.level=read_committed`
#              shows exactly the committed and non-transactional records in offset order, and the
#              view tests/kafka/committed_view.py computes from the --record file and what
#              read_uncommitted shows (all of them) is the same;
#   txn-fence: a producer whose transactional id a second one initialised is fenced (its commit
#              answered _FENCED, its open records never show); after a crash, a restarted
#              producer of the same id: its predecessor's open records stay invisible (also to a
#              read_committed consumer assigned at their offset), its own committed ones show;
#              read_committed equals committed_view.py's view. What transactions do here is what
#              sf-kafka-mock makes of the mock's traffic (tests/tools/kafka_mock_wire.c), not
#              a real broker's;
#   sink-json: KafkaSink format = json, key = key: Python's json reads each value as an object of
#              the schema's attributes in order, each the row of its key, as sink-w1 checks;
#   sink-json-values: doubles of random bits and the special ones, ints to the limits, strings of
#              control characters, quotes and UTF-8, written as JSON beside a FileSink's CSV of the
#              same tuples: Python's json reads the input's values back, the numbers with the CSV
#              writer's text but for the documented exceptions (NaN, infinities, -0, integers of
#              2^63 and more); json-roundtrip: those records read by a KafkaSource (format = json)
#              give the FileSink's bytes;
#   example:   graphs/kafka/totals.xml (its topics renamed) at width 2 writes the running totals the
#              README shows;
#   throughput: tuples/s through KafkaSource -> FileSink beside FileSource -> FileSink over the
#              same rows (printed, not checked).
# Reads SF_KAFKA_ROWS (rows of the big topic, default 60000).
set -uo pipefail
B=$(cd "$1" && pwd)/bin
S=$2
. "$S/tests/lib.sh"
sf_need_bins "$1" sf-exec sf-xform sf-launch sf-kafka-mock sf-snapedit || exit 1
command -v kcat >/dev/null || { echo "error: kcat is missing (tools/setup.sh installs it)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "error: python3 is missing" >&2; exit 1; }
trap sf_stop_all EXIT
sf_mktemp W sf-kafka
SF_WORK=$W
ROWS=${SF_KAFKA_ROWS:-60000}
export SF_RUN_TIMEOUT=${SF_RUN_TIMEOUT:-120}

# ---- the cluster: stdin from a FIFO this script holds open (closing it ends the cluster) ----
mkfifo "$W/mock.in"
"$B/sf-kafka-mock" --record "$W/mock.rec" --unknown nosuch --deny secret txnc:3 txnv:3 txnf:3 orders:3 big:3 rev:3 live:3 stream:3 bad:1 sink1:3 sink3:3 sinkk:3 eoend:3 eockpt:3 eokill:3 eostall:3 eofence:3 tp:3 exorders:3 extotals:3 jorders:3 jbad:1 jsink:3 jdbl:1 sinkx:3 idle:3 <"$W/mock.in" >"$W/mock.addr" 2>"$W/mock.err" &
MOCK=$!
exec {MOCKFD}>"$W/mock.in"
for _ in $(seq 400); do [[ -s $W/mock.addr ]] && break; sleep 0.05; done # (a loaded machine: seconds)
A=$(head -n 1 "$W/mock.addr")
if [[ ! $A =~ ^127\.0\.0\.1:[0-9]+(,127\.0\.0\.1:[0-9]+){2}$ ]]; then
  sf_bad mock "sf-kafka-mock printed '$A', not 3 loopback brokers" "$W/mock.err"
  exit 1
fi

meta=$(kcat -b "$A" -L -t orders 2>&1)
if grep -q '3 brokers:' <<<"$meta" && grep -q 'topic "orders" with 3 partitions' <<<"$meta"; then
  printf 'x1\nx2\n' | kcat -b "$A" -P -t live -p 1 2>"$W/kcat.err"
  printf '2 777 y1\n0 778 y2\n' | "$B/sf-kafka-mock" produce "$A" live 2>>"$W/kcat.err"
  got=$(kcat -b "$A" -C -t live -e -q -f '%p %o %s\n' 2>>"$W/kcat.err" | sort)
  ts=$(kcat -b "$A" -C -t live -p 2 -e -q -f '%T %s\n' 2>>"$W/kcat.err")
  if [[ $got == $'0 0 y2\n1 0 x1\n1 1 x2\n2 0 y1' && $ts == "777 y1" ]]; then
    sf_ok mock "3 brokers at $A; kcat -P -p 1 and the tool's producer (partition, timestamp) read back by kcat -C"
  else
    sf_bad mock "kcat read back '$got' / '$ts'" "$W/kcat.err"
  fi
  # --record: a line per batch appended, its offsets those kcat reads, no transaction, no producer id
  recd=$(awk '$1 == "produce" && $5 == "topic=live" {
      split($6, p, "="); split($7, o, "="); split($8, n, "=")
      if ($2 != "txn=-" || $3 != "pid=-1" || $9 != "transactional=0") print "bad: " $0
      for (i = 0; i < n[2]; i++) print p[2], o[2] + i }' "$W/mock.rec" | sort)
  if [[ $recd == "$(cut -d ' ' -f 1,2 <<<"$got")" ]]; then
    sf_ok record "--record: a line per appended batch of kcat's and the tool's producers, their offsets those kcat reads"
  else
    sf_bad record "the record file's batches of 'live' give '$recd'" "$W/mock.rec"
  fi
else
  sf_bad mock "kcat -L: $meta"
fi

# ---- the rows: partition, timestamp, value; and the order the docs promise ----
# gen.py TOPIC_ROWS MODE N: writes the producer's lines (PARTITION TIMESTAMP VALUE) to TOPIC_ROWS,
# MODE "fwd" (timestamp = ts) or "rev" (timestamp = 10^6 - ts)
cat >"$W/gen.py" <<'EOF'
import random, sys
out, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rnd = random.Random(23)
clock = [0, 0, 0]
keys = ['k%d' % i for i in range(7)] + ['a,b', 'say "hi"']
with open(out, 'w') as f:
    for i in range(n):
        p = rnd.randrange(3)
        clock[p] += rnd.choice([0, 0, 1, 2, 3, 5])  # non-decreasing per partition, ties across them
        ts = 1000 + clock[p] + (rnd.randrange(4) if rnd.random() < 0.1 else 0)  # a few out of order
        key = rnd.choice(keys)
        field = '"' + key.replace('"', '""') + '"' if (',' in key or '"' in key) else key
        stamp = ts if mode == 'fwd' else 10**6 - ts
        f.write('%d %d %s,%d,%d\n' % (p, stamp, field, i, ts))
EOF
# order.py TOPIC_ROWS BY [PARTS] [START] [COUNT]: the source's output (with a header), BY "stamp"
# (record timestamp) or "ts" (the time attribute): per partition the rows in produce order; then
# repeatedly the head of smallest time, ties by partition number
cat >"$W/order.py" <<'EOF'
import csv, io, sys
rows, by = sys.argv[1], sys.argv[2]
parts = [int(x) for x in sys.argv[3].split()] if len(sys.argv) > 3 and sys.argv[3] else [0, 1, 2]
start = dict(tuple(int(y) for y in x.split(':')) for x in sys.argv[4].split(',')) if len(sys.argv) > 4 and sys.argv[4] else {}
count = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] else 0
per = {p: [] for p in parts}
for line in open(rows):
    p, stamp, value = line.rstrip('\n').split(' ', 2)
    p = int(p)
    if p not in per: continue
    rec = next(csv.reader(io.StringIO(value)))
    per[p].append(((int(stamp) if by == 'stamp' else int(rec[2])), rec))
at = {p: start.get(p, 0) for p in parts}
out = csv.writer(sys.stdout, lineterminator='\n')
out.writerow(['key', 'n', 'ts'])
emitted = 0
while not count or emitted < count:
    heads = [(per[p][at[p]][0], p) for p in parts if at[p] < len(per[p])]
    if not heads: break
    t, p = min(heads)
    out.writerow(per[p][at[p]][1])
    at[p] += 1
    emitted += 1
EOF
python3 "$W/gen.py" "$W/orders.rows" fwd 3000 && python3 "$W/gen.py" "$W/big.rows" fwd "$ROWS" &&
  python3 "$W/gen.py" "$W/rev.rows" rev 2000 || { sf_bad gen "gen.py failed"; exit 1; }
for t in orders big rev; do
  "$B/sf-kafka-mock" produce "$A" $t <"$W/$t.rows" 2>"$W/produce-$t.log" || { sf_bad produce "$t" "$W/produce-$t.log"; exit 1; }
done

# graph FILE NAME SOURCE_PARAMS [BODY]: SOURCE_PARAMS are the source's <param> lines (a kind="K"
# attribute first: KafkaSource or FileSource); BODY the operators after it, reading stream Rows
# (default: a FileSink of Rows to out.csv)
graph() {
  local file=$1 name=$2 kind=$3 params=$4 body=${5:-}
  [[ -n $body ]] || body='<operator name="out" kind="FileSink"><input stream="Rows"/><param name="file">out.csv</param></operator>'
  cat >"$file" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="$name">
  <schema name="Row">
    <attr name="key" type="string"/>
    <attr name="n"   type="int"/>
    <attr name="ts"  type="int"/>
  </schema>
  <schema name="Sum">
    <attr name="key" type="string"/>
    <attr name="total" type="int"/>
    <attr name="last" type="int"/>
  </schema>
  <operator name="src" kind="$kind">
    <output stream="Rows" schema="Row"/>
    $params
  </operator>
  $body
</graph>
EOF
}
kafka_params() { # TOPIC [MORE PARAM LINES]
  echo "<param name=\"brokers\">$A</param><param name=\"topic\">$1</param>${2:-}"
}
HW='<param name="end">high-watermark</param>'
# wait_ckpt MANIFEST PID: waits (10 s at most) until that checkpoint's MANIFEST exists, or PID ended
wait_ckpt() {
  for _ in $(seq 2000); do
    [[ -f $1 ]] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.005
  done
  return 1
}
KEYED='<operator name="agg" kind="Aggregate"><input stream="Rows"/><output stream="Sums" schema="Sum"/>
  <param name="partitionBy">key</param><param name="window">sliding 3</param>
  <set attr="total">sum(n)</set><set attr="last">max(ts)</set></operator>
  <operator name="out" kind="FileSink"><input stream="Sums"/><param name="file">out.csv</param></operator>'

# run CASE DIR GRAPH [WIDTH] [SF-EXEC OPTIONS...]: sf-xform (at WIDTH, default 1) and sf-exec in
# DIR; 0 when both exit 0, else a FAIL line
run() {
  local c=$1 d=$2 g=$3 w=${4:-1}
  shift 4 2>/dev/null || shift $#
  mkdir -p "$d"
  if ! "$B/sf-xform" -w "$w" "$g" -o "$d/x.xml" 2>"$d/xform.log"; then
    sf_bad "$c" "sf-xform -w $w failed" "$d/xform.log"
    return 1
  fi
  (cd "$d" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" "$@" x.xml) >"$d/run.log" 2>&1
  local st=$?
  if [[ $st != 0 ]]; then
    sf_bad "$c" "sf-exec exited $st" "$d/run.log"
    return 1
  fi
}
# quiet LOG: LOG's lines but librdkafka's warning that the mock's brokers are too old to be asked
# not to create topics (every run against the mock gives it)
quiet() { grep -v "^sf-exec: warning: operator 'src': librdkafka warning AUTOCREATE: " "$1"; }
same() { # CASE EXPECTED ACTUAL WHAT
  if cmp -s "$2" "$3"; then
    sf_ok "$1" "$4"
  else
    sf_bad "$1" "$4: output differs ($(diff "$2" "$3" | head -n "${SF_DIFF_LINES:-10}" | tr '\n' ' '))" "$(dirname "$3")/run.log"
  fi
}

# ---- order ----
python3 "$W/order.py" "$W/orders.rows" stamp >"$W/orders.expected"
graph "$W/order.xml" korder KafkaSource "$(kafka_params orders "$HW")"
if run order "$W/order" "$W/order.xml" 1; then
  if [[ -n $(quiet "$W/order/run.log") ]]; then
    sf_bad order "sf-exec said something" "$W/order/run.log"
  else
    same order "$W/orders.expected" "$W/order/out.csv" "3000 rows of 3 partitions in the documented order (merged by timestamp, ties by partition)"
  fi
fi

# ---- keyed, sequential and width 3, against a FileSource over the same rows in that order ----
cp "$W/orders.expected" "$W/orders.csv"
graph "$W/keyed-file.xml" kkeyed FileSource "<param name=\"file\">$W/orders.csv</param>" "$KEYED"
graph "$W/keyed.xml" kkeyed KafkaSource "$(kafka_params orders "$HW")" "$KEYED"
if run keyed-ref "$W/keyed-ref" "$W/keyed-file.xml" 1; then
  for w in 1 3; do
    run keyed-w$w "$W/keyed-w$w" "$W/keyed.xml" $w &&
      same keyed-w$w "$W/keyed-ref/out.csv" "$W/keyed-w$w/out.csv" \
        "KafkaSource -> Aggregate (partitionBy key) at width $w = the FileSource graph, $(($(wc -l <"$W/keyed-ref/out.csv") - 1)) rows"
  done
  # on three executors (sf-launch, loopback): the same bytes
  if sf_next_ports 3; then
    d=$W/keyed-hosts
    mkdir -p "$d/dist"
    if "$B/sf-xform" -w 3 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" "$W/keyed.xml" -o "$d/x.xml" 2>"$d/xform.log" &&
      (cd "$d" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-launch" --workdir dist x.xml) >"$d/run.log" 2>&1; then
      same keyed-hosts "$W/keyed-ref/out.csv" "$d/dist/out.csv" "the keyed graph at width 3 on three executors (sf-launch) = the FileSource graph"
    else
      sf_bad keyed-hosts "sf-xform --hosts or sf-launch failed" "$d/xform.log" "$d/run.log"
    fi
  fi
fi

# ---- time: merged by the time attribute, not the timestamps ----
python3 "$W/order.py" "$W/rev.rows" ts >"$W/rev-ts.expected"
python3 "$W/order.py" "$W/rev.rows" stamp >"$W/rev-stamp.expected"
graph "$W/rev-ts.xml" krevts KafkaSource "$(kafka_params rev "$HW<param name=\"time\">ts</param>")"
graph "$W/rev-stamp.xml" krevstamp KafkaSource "$(kafka_params rev "$HW")"
if run time "$W/rev-ts" "$W/rev-ts.xml" 1 && run time "$W/rev-stamp" "$W/rev-stamp.xml" 1; then
  if cmp -s "$W/rev-ts.expected" "$W/rev-ts/out.csv" && cmp -s "$W/rev-stamp.expected" "$W/rev-stamp/out.csv" &&
    ! cmp -s "$W/rev-ts.expected" "$W/rev-stamp.expected"; then
    sf_ok time "with time = ts merged by ts, without by the record timestamps (which run the other way)"
  else
    sf_bad time "outputs differ from the orders computed" "$W/rev-ts/run.log"
  fi
fi
TW='<operator name="win" kind="Aggregate"><input stream="Rows"/><output stream="Sums" schema="Sum"/>
  <param name="partitionBy">key</param><param name="window">tumbling time 50</param><param name="lateness">10</param>
  <set attr="total">count()</set><set attr="last">window_end()</set></operator>
  <operator name="out" kind="FileSink"><input stream="Sums"/><param name="file">out.csv</param></operator>'
cp "$W/rev-ts.expected" "$W/rev-ts.csv"
graph "$W/win-file.xml" kwin FileSource "<param name=\"file\">$W/rev-ts.csv</param><param name=\"time\">ts</param>" "$TW"
graph "$W/win.xml" kwin KafkaSource "$(kafka_params rev "$HW<param name=\"time\">ts</param>")" "$TW"
if run time-window "$W/win-ref" "$W/win-file.xml" 1 && run time-window "$W/win-w3" "$W/win.xml" 3; then
  same time-window "$W/win-ref/out.csv" "$W/win-w3/out.csv" "an event-time window over time = ts at width 3 = the FileSource graph's"
fi

# ---- partitions, start, count ----
python3 "$W/order.py" "$W/orders.rows" stamp "0 2" >"$W/parts.expected"
graph "$W/parts.xml" kparts KafkaSource "$(kafka_params orders "$HW<param name=\"partitions\">2,0</param>")"
run partitions "$W/parts" "$W/parts.xml" 1 && same partitions "$W/parts.expected" "$W/parts/out.csv" "partitions = '2,0' reads partitions 0 and 2"
python3 "$W/order.py" "$W/orders.rows" stamp "" "1:5" >"$W/start.expected"
graph "$W/start.xml" kstart KafkaSource "$(kafka_params orders "$HW<param name=\"start\">offsets 1:5</param>")"
run start "$W/start" "$W/start.xml" 1 && same start "$W/start.expected" "$W/start/out.csv" "start = 'offsets 1:5': partition 1 from offset 5, the others from the earliest"
graph "$W/latest.xml" klatest KafkaSource "$(kafka_params orders "$HW<param name=\"start\">latest</param>")"
run latest "$W/latest" "$W/latest.xml" 1 && [[ $(cat "$W/latest/out.csv") == key,n,ts ]] &&
  sf_ok latest "start = latest, end = high-watermark: nothing (the header alone)"
python3 "$W/order.py" "$W/orders.rows" stamp "" "" 10 >"$W/count.expected"
graph "$W/count.xml" kcount KafkaSource "$(kafka_params orders "<param name=\"count\">10</param>")"
run count "$W/count" "$W/count.xml" 1 && same count "$W/count.expected" "$W/count/out.csv" "count = 10 (end never): the first 10 rows, then the end"

# ---- restore: SIGKILL once checkpoint 2 is complete, --restore at width 3 ----
python3 "$W/order.py" "$W/big.rows" stamp >"$W/big.csv"
SLOW='<operator name="slow" kind="Work"><input stream="Rows"/><output stream="Slow" schema="Row"/><param name="iterations">3000</param></operator>'
BIGKEYED=${KEYED//stream=\"Rows\"/stream=\"Slow\"}
graph "$W/big.xml" kbig KafkaSource "$(kafka_params big "$HW")" "$SLOW $BIGKEYED"
if run restore-ref "$W/big-ref" "$W/big.xml" 1; then
  # a broker taken down for a second while the job reads (sf-kafka-mock's "down 1" / "up 1")
  d=$W/broker-down
  mkdir -p "$d"
  "$B/sf-xform" -w 1 "$W/big.xml" -o "$d/x.xml"
  t0=$(sf_now)
  (cd "$d" && exec timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" x.xml) >"$d/run.log" 2>&1 &
  pid=$!
  for _ in $(seq 400); do [[ -n $(find "$d" -name '.out.csv*' -size +8k 2>/dev/null) ]] && break; sleep 0.01; done
  echo "down 1" >&$MOCKFD
  sleep 1
  echo "up 1" >&$MOCKFD
  wait $pid
  st=$?
  if [[ $st != 0 ]]; then
    sf_bad broker-down "exit $st" "$d/run.log"
  elif ! grep -q "^sf-exec: warning: operator 'src': librdkafka " "$d/run.log"; then
    sf_bad broker-down "librdkafka said nothing about the broker down" "$d/run.log"
  else
    same broker-down "$W/big-ref/out.csv" "$d/out.csv" "broker 1 down for 1 s mid-run: librdkafka reconnects, exit 0 after $(sf_elapsed "$t0" "$(sf_now)") s, the same output; its warnings name the operator"
  fi
  d=$W/big-kill
  mkdir -p "$d"
  "$B/sf-xform" -w 1 "$W/big.xml" -o "$d/w1.xml" && "$B/sf-xform" -w 3 "$W/big.xml" -o "$d/w3.xml"
  (cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.05 w1.xml) >"$d/run1.log" 2>&1 & # killed below
  pid=$!
  wait_ckpt "$d/ck/ckpt-2/MANIFEST" $pid
  kill -KILL $pid 2>/dev/null
  wait $pid 2>/dev/null
  killed=$?
  # records produced while the job is down, past the high watermark it started with: not read
  printf '0 2000000000 late,1,2000000000\n1 2000000000 late,2,2000000000\n2 2000000000 late,3,2000000000\n' | "$B/sf-kafka-mock" produce "$A" big 2>/dev/null
  (cd "$d" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" --checkpoint-dir ck --restore w3.xml) >"$d/run.log" 2>&1
  st=$?
  said=$(grep -o "sf-exec: restored checkpoint [0-9]* from 'ck'" "$d/run.log")
  if [[ $killed != 137 ]]; then
    sf_bad restore "the job ended ($killed) before checkpoint 2 was complete: raise SF_KAFKA_ROWS" "$d/run1.log"
  elif [[ $st != 0 || -z $said ]]; then
    sf_bad restore "--restore exited $st, said '$said'" "$d/run.log"
  else
    same restore "$W/big-ref/out.csv" "$d/out.csv" "killed with SIGKILL after checkpoint 2, 3 records produced, --restore at width 3 ($said): the uninterrupted output byte for byte (its ends kept)"
  fi
fi

# ---- a checkpoint whose offsets the topic does not hold, and one cut short: refused ----
d=$W/restore-bad
mkdir -p "$d"
"$B/sf-xform" -w 1 "$W/big.xml" -o "$d/w1.xml"
(cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.05 w1.xml) >"$d/run1.log" 2>&1 & # killed below
pid=$!
wait_ckpt "$d/ck/ckpt-1/MANIFEST" $pid
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
killed=$?
if [[ $killed != 137 ]]; then
  sf_bad restore-bad "the job ended ($killed) before checkpoint 1 was complete" "$d/run1.log"
else
  # a later checkpoint may have completed between the poll and the kill: as if killed right after 1
  for c in "$d"/ck/ckpt-*; do [[ ${c##*/ckpt-} -gt 1 ]] && rm -rf "$c"; done
  cp -a "$d/ck" "$d/ck-cut"
  # the snapshot: u64 partitions, then per partition i64 number, next offset, end: partition 0's
  # next offset is the u64 at byte 16
  "$B/sf-snapedit" "$d/ck" 1 src state-u64 16:99999999 >"$d/edit.log" 2>&1
  (cd "$d" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" --checkpoint-dir ck --restore w1.xml) >"$d/run.log" 2>&1
  st=$?
  hi0=$(($(grep -c '^0 ' "$W/big.rows") + 1)) # and the late one
  want="sf-exec: warning: checkpoint 1 in 'ck' cannot be used (operator 'src' cannot restore its snapshot: partition 0 of topic 'big' holds offsets 0 to $((hi0 - 1)), the checkpoint goes on from offset 99999999 (records removed since, or another topic of that name?)); trying an older one"
  "$B/sf-snapedit" "$d/ck-cut" 1 src state-cut 20 >>"$d/edit.log" 2>&1
  (cd "$d" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" --checkpoint-dir ck-cut --restore w1.xml) >"$d/run-cut.log" 2>&1
  st2=$?
  start="sf-exec: no complete checkpoint in 'ck': starting from the beginning"
  if [[ $st != 0 ]] || ! grep -qxF "$want" "$d/run.log" || ! grep -qxF "$start" "$d/run.log"; then
    sf_bad restore-bad "exit $st, expected: $want" "$d/edit.log" "$d/run.log"
  elif [[ $st2 != 0 ]] || ! grep -qxF "sf-exec: warning: checkpoint 1 in 'ck-cut' cannot be used (operator 'src' cannot restore its snapshot: snapshot truncated or malformed); trying an older one" "$d/run-cut.log"; then
    sf_bad restore-bad "a snapshot cut to 20 bytes: exit $st2" "$d/run-cut.log"
  else
    sf_ok restore-bad "a checkpoint going on from an offset partition 0 does not hold, and one cut short, are not used (exact warnings); the job starts from the beginning"
  fi
fi

# ---- live: end = never, rows produced while it runs, SIGTERM drains ----
d=$W/live
mkdir -p "$d"
graph "$W/live.xml" klive KafkaSource "$(kafka_params stream "<param name=\"partitions\">0</param>")"
"$B/sf-xform" -w 1 "$W/live.xml" -o "$d/x.xml"
(cd "$d" && exec timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" x.xml) >"$d/run.log" 2>&1 &
pid=$!
printf '0 100 late,1,100\n0 101 later,2,101\n' | "$B/sf-kafka-mock" produce "$A" stream 2>/dev/null
for _ in $(seq 400); do (($(cat "$d"/.out.csv* 2>/dev/null | wc -l) >= 3)) && break; sleep 0.025; done
sleep 0.3
kill -TERM $pid
wait $pid
st=$?
if [[ $st == 0 && $(cat "$d/out.csv" 2>/dev/null) == $'key,n,ts\nlate,1,100\nlater,2,101' ]]; then
  sf_ok live "end = never: rows produced while it ran came out; SIGTERM drained it (exit 0)"
elif [[ $st == 0 ]]; then
  sf_bad live "output: $(tr '\n' ' ' <"$d/out.csv" 2>/dev/null)" "$d/run.log"
else
  sf_bad live "exit $st" "$d/run.log"
fi

# ---- live-idle: end = never, partition 1 of 3 stays empty while rows flow in the others ----
# A: 300 rows in partitions 0 and 2 (timestamps with ties across them) before the job starts; the
# job must emit them all, merged (partition 1, idle, holds nothing back), then B (20 rows into
# partition 2 alone), then C (20 rows into partition 0), each waited for; then D, one row into
# partition 1 with an older timestamp than all: it comes last, after what was emitted before it
# arrived. SIGTERM drains: exit 0, and the output is A merged (order.py), B, C, D.
cat >"$W/idle.py" <<'EOF'
import random, sys
rnd = random.Random(5)
clock = {0: 0, 2: 0}
with open(sys.argv[1], 'w') as a:
    for i in range(300):
        p = rnd.choice([0, 2])
        clock[p] += rnd.choice([0, 1, 2])
        a.write('%d %d a%d,%d,%d\n' % (p, 1000 + clock[p], p, i, 1000 + clock[p]))
for name, p, base in (('B', 2, 5000), ('C', 0, 6000)):
    with open(sys.argv[2] + name, 'w') as f:
        for i in range(20): f.write('%d %d %s%d,%d,%d\n' % (p, base + i, name, p, i, base + i))
EOF
python3 "$W/idle.py" "$W/idleA.rows" "$W/idle" && "$B/sf-kafka-mock" produce "$A" idle <"$W/idleA.rows" 2>/dev/null
python3 "$W/order.py" "$W/idleA.rows" stamp "0 2" >"$W/idle.expected"
for x in B C; do cut -d' ' -f3 "$W/idle$x" >>"$W/idle.expected"; done
echo "D1,0,1" >>"$W/idle.expected"
d=$W/live-idle
mkdir -p "$d"
# (FileSink writes a regular file only at its end, standard output as rows come)
graph "$W/idle.xml" kidle KafkaSource "$(kafka_params idle)" \
  '<operator name="out" kind="FileSink"><input stream="Rows"/><param name="file">-</param></operator>'
"$B/sf-xform" -w 1 "$W/idle.xml" -o "$d/x.xml"
(cd "$d" && exec timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" x.xml) >"$d/out.csv" 2>"$d/run.log" &
pid=$!
out_rows() { wc -l <"$d/out.csv"; } # the header and the rows written so far
until_rows() { # N: waits (10 s at most) until N rows are out
  for _ in $(seq 400); do (($(out_rows) >= $1 + 1)) && return 0; sleep 0.025; done
  return 1
}
idle_ok=until_rows
if until_rows 300; then
  "$B/sf-kafka-mock" produce "$A" idle <"$W/idleB" 2>/dev/null
  if until_rows 320; then
    "$B/sf-kafka-mock" produce "$A" idle <"$W/idleC" 2>/dev/null
    if until_rows 340; then
      echo "1 1 D1,0,1" | "$B/sf-kafka-mock" produce "$A" idle 2>/dev/null
      until_rows 341 || idle_ok="D (partition 1)"
    else idle_ok="C (partition 0)"; fi
  else idle_ok="B (partition 2)"; fi
else idle_ok="A (partitions 0 and 2)"; fi
sleep 0.2
kill -TERM $pid
wait $pid
st=$?
if [[ $idle_ok != until_rows ]]; then
  sf_bad live-idle "the rows $idle_ok did not come out within 10 s ($(($(out_rows) - 1)) rows out)" "$d/run.log"
elif [[ $st != 0 ]]; then
  sf_bad live-idle "exit $st after SIGTERM" "$d/run.log"
else
  same live-idle "$W/idle.expected" "$d/out.csv" "end = never, partition 1 empty: 300 rows of partitions 0 and 2 merged, then rows into 2 alone, into 0 alone, and a late one into 1 (last), each out as it came; SIGTERM drained"
fi

# ---- errors ----
err_case() { # CASE GRAPH EXPECTED-ERROR-LINE [SF-EXEC OPTIONS...]
  local c=$1 g=$2 want=$3 d=$W/$1
  shift 3
  mkdir -p "$d"
  "$B/sf-xform" -w 1 "$g" -o "$d/x.xml" 2>"$d/xform.log" || { sf_bad "$c" "sf-xform failed" "$d/xform.log"; return; }
  (cd "$d" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" "$@" x.xml) >"$d/run.log" 2>&1
  local st=$? got
  got=$(grep '^sf-exec: error: ' "$d/run.log")
  if [[ $st == 1 && $got == "$want" ]]; then
    sf_ok "$c" "exit 1: $want"
  else
    sf_bad "$c" "exit $st, error '$got', expected '$want'" "$d/run.log"
  fi
}
graph "$W/range.xml" krange KafkaSource "$(kafka_params orders "<param name=\"start\">offsets 2:5000</param>")"
n2=$(grep -c '^2 ' "$W/orders.rows")
err_case offset-range "$W/range.xml" \
  "sf-exec: error: operator 'src': parameter 'start': partition 2 of topic 'orders' holds offsets 0 to $((n2 - 1)) (its next record gets $n2), not 5000"
graph "$W/unknown.xml" kunknown KafkaSource "$(kafka_params nosuch "$HW")"
err_case unknown-topic "$W/unknown.xml" "sf-exec: error: operator 'src': topic 'nosuch' does not exist on the Kafka brokers '$A'"
sf_next_ports 1
graph "$W/unreach.xml" kunreach KafkaSource "<param name=\"brokers\">127.0.0.1:$P0</param><param name=\"topic\">orders</param>"
err_case unreachable "$W/unreach.xml" \
  "sf-exec: error: operator 'src': cannot reach any Kafka broker of '127.0.0.1:$P0' within 1500 ms (--connect-timeout)" \
  --connect-timeout 1500
if grep -q "^sf-exec: warning: operator 'src': librdkafka error FAIL: .*127.0.0.1:$P0.*Connection refused" "$W/unreachable/run.log"; then
  sf_ok unreach-log "librdkafka's log lines come through the executor's log, naming the operator"
else
  sf_bad unreach-log "no librdkafka warning naming operator 'src' and the connection refused" "$W/unreachable/run.log"
fi
printf '0 1 a,1,1\n0 2 b,x2,2\n0 3 c,3\n0 4 d,4,4\n' | "$B/sf-kafka-mock" produce "$A" bad 2>/dev/null
graph "$W/bad.xml" kbad KafkaSource "$(kafka_params bad "$HW")"
err_case bad-record "$W/bad.xml" "sf-exec: error: operator 'src': topic 'bad' partition 0 offset 1: error: field 'n': 'x2' is not an int"
graph "$W/skip.xml" kskip KafkaSource "$(kafka_params bad "$HW<param name=\"onerror\">skip</param>")"
if run skip "$W/skip" "$W/skip.xml" 1; then
  want="sf-exec: warning: operator 'src': skipped 2 malformed records of topic 'bad' (the first: partition 0 offset 1: field 'n': 'x2' is not an int)"
  if [[ $(quiet "$W/skip/run.log") == "$want" && $(cat "$W/skip/out.csv") == $'key,n,ts\na,1,1\nd,4,4' ]]; then
    sf_ok skip "onerror = skip: 2 records dropped, the exact warning, the others out"
  else
    sf_bad skip "output or warning differs" "$W/skip/run.log" "$W/skip/out.csv"
  fi
fi
# ---- format = json: the orders topic as JSON objects, through the same graphs ----
# json_rows.py ROWS: ROWS's lines (PARTITION TIMESTAMP CSV-ROW) with each row as a JSON object of
# key, n, ts, its members in a random order, now and then with members the schema does not have
# and blanks around the tokens
cat >"$W/json_rows.py" <<'EOF'
import csv, io, json, random, sys
rnd = random.Random(7)
for line in open(sys.argv[1]):
    p, stamp, value = line.rstrip('\n').split(' ', 2)
    key, n, ts = next(csv.reader(io.StringIO(value)))
    members = [('key', key), ('n', int(n)), ('ts', int(ts))]
    if rnd.random() < 0.2: members.append(('extra', [1, {'a': None, 'n': 'x'}]))
    if rnd.random() < 0.1: members.append(('N', 1.5))
    rnd.shuffle(members)
    sep = (', ', ': ') if rnd.random() < 0.3 else (',', ':')
    print(p, stamp, json.dumps(dict(members), separators=sep, ensure_ascii=rnd.random() < 0.5))
EOF
python3 "$W/json_rows.py" "$W/orders.rows" >"$W/jorders.rows" &&
  "$B/sf-kafka-mock" produce "$A" jorders <"$W/jorders.rows" 2>"$W/produce-jorders.log" || sf_bad json-produce "jorders" "$W/produce-jorders.log"
JSON='<param name="format">json</param>'
graph "$W/json-order.xml" kjorder KafkaSource "$(kafka_params jorders "$HW$JSON")"
run json-order "$W/json-order" "$W/json-order.xml" 1 &&
  same json-order "$W/order/out.csv" "$W/json-order/out.csv" "format = json: the 3000 rows as JSON objects (members shuffled, extra ones) = the csv topic's output, byte for byte"
graph "$W/json-keyed.xml" kkeyed KafkaSource "$(kafka_params jorders "$HW$JSON")" "$KEYED"
run json-keyed "$W/json-keyed" "$W/json-keyed.xml" 3 &&
  same json-keyed "$W/keyed-ref/out.csv" "$W/json-keyed/out.csv" "format = json through Aggregate (partitionBy key) at width 3 = the csv FileSource graph"
# records that do not parse: each one's exact message (onerror = stop, start at its offset), then
# onerror = skip over them all
cat >"$W/jbad.rows" <<'EOF'
0 1 {"key":"a","n":1,"ts":1}
0 2 {"key":"b","n":"2","ts":2}
0 3 {"key":"c","n":3}
0 4 [1,2,3]
0 5 {"key":"d","n":4,"ts":4,}
0 6 {"key":null,"n":5,"ts":5}
0 7 {"key":"e","n":6,"ts":6,"more":true}
0 8 {"key":"f","n":7.5,"ts":7}
0 9 {"key":"g","n":9223372036854775808,"ts":8}
0 10 {"key":"h","n":8,"ts":8} {}
0 11 {"key":"i\u00e9","n":9,"ts":9}
EOF
"$B/sf-kafka-mock" produce "$A" jbad <"$W/jbad.rows" 2>/dev/null
jbad_why=('' "member 'n': \"2\" is not an int" "member 'ts' is missing" "the record's value is an array, not a JSON object"
  "the record's value is not valid JSON (unexpected character at byte offset 24)" "member 'key' is null" ''
  "member 'n': 7.5 is not an int" "member 'n' is an integer beyond the range of an int"
  "the record's value is not valid JSON (unexpected character at byte offset 25)")
for o in 1 2 3 4 5 7 8 9; do
  graph "$W/jbad$o.xml" kjbad KafkaSource "$(kafka_params jbad "$HW$JSON<param name=\"start\">offsets 0:$o</param>")"
  err_case json-bad-$o "$W/jbad$o.xml" "sf-exec: error: operator 'src': topic 'jbad' partition 0 offset $o: error: ${jbad_why[$o]}"
done
graph "$W/jskip.xml" kjskip KafkaSource "$(kafka_params jbad "$HW$JSON<param name=\"onerror\">skip</param>")"
if run json-skip "$W/json-skip" "$W/jskip.xml" 1; then
  want="sf-exec: warning: operator 'src': skipped 8 malformed records of topic 'jbad' (the first: partition 0 offset 1: member 'n': \"2\" is not an int)"
  if [[ $(quiet "$W/json-skip/run.log") == "$want" && $(cat "$W/json-skip/out.csv") == $'key,n,ts\na,1,1\ne,6,6\ni\xc3\xa9,9,9' ]]; then
    sf_ok json-skip "format = json, onerror = skip: 8 records dropped, the exact warning, the others out (a member the schema lacks ignored, \\u00e9 as UTF-8)"
  else
    sf_bad json-skip "output or warning differs" "$W/json-skip/run.log" "$W/json-skip/out.csv"
  fi
fi
graph "$W/badparam.xml" kbadparam KafkaSource "$(kafka_params orders "<param name=\"end\">eventually</param><param name=\"start\">offsets 1-5</param>")"
"$B/sf-xform" --check "$W/badparam.xml" >"$W/badparam.log" 2>&1
if grep -q "parameter 'end' of operator 'src' must be 'high-watermark' or 'never', got 'eventually'" "$W/badparam.log" &&
  grep -q "parameter 'start' of operator 'src' must be 'earliest', 'latest' or 'offsets P:O,...' (P a partition, O an offset), got 'offsets 1-5'" "$W/badparam.log"; then
  sf_ok bad-param "sf-xform refuses a bad 'end' and 'start' with their messages"
else
  sf_bad bad-param "sf-xform's messages differ" "$W/badparam.log"
fi

# ---- KafkaSink: at-least-once, keyed ----
# check_sink.py EXPECTED_CSV RECORDS MODE: RECORDS is kcat's '%p<TAB>%k<TAB>%s' of a topic; every
# record's key is its row's key, each key in one partition, and per partition the values are the
# expected rows of its keys in order (MODE "once"), or (MODE "dups") the same once repeats are
# dropped; every row is there. Prints how many records were repeats.
cat >"$W/check_sink.py" <<'EOF'
import csv, io, sys
exp_rows = [line for line in open(sys.argv[1]).read().split('\n')[1:] if line]
key_of = lambda row: next(csv.reader(io.StringIO(row)))[0]
got, part_of_key = {}, {}
for line in open(sys.argv[2]).read().split('\n'):
    if not line: continue
    p, k, v = line.split('\t', 2)
    if k != key_of(v): sys.exit('record %r has key %r' % (v, k))
    if part_of_key.setdefault(k, p) != p: sys.exit('key %r in partitions %s and %s' % (k, part_of_key[k], p))
    got.setdefault(p, []).append(v)
dups = 0
for p, vals in got.items():
    want = [r for r in exp_rows if part_of_key.get(key_of(r)) == p]
    if sys.argv[3] == 'dups':
        seen, firsts = set(), []
        for v in vals:
            if v in seen: dups += 1
            else: seen.add(v); firsts.append(v)
        vals = firsts
    if vals != want:
        at = next((i for i, (a, b) in enumerate(zip(vals, want)) if a != b), min(len(vals), len(want)))
        sys.exit('partition %s: %d records, %d expected, first difference at %d' % (p, len(vals), len(want), at))
missing = [r for r in exp_rows if key_of(r) not in part_of_key]
if missing: sys.exit('%d rows missing, the first %r' % (len(missing), missing[0]))
print(dups)
EOF
consume() { kcat -b "$A" -C -t "$1" -e -q -f '%p\t%k\t%s\n'; }
# commits TOPIC: how many transactions that wrote TOPIC committed (the mock's record)
commits() {
  awk -v t="topic=$1" '$1 == "produce" && $0 ~ " " t " " && / transactional=1/ { split($3, p, "="); pid[p[2]] = 1 }
    $1 == "end_txn" && / result=commit error=NO_ERROR/ { split($3, p, "="); if (p[2] in pid) n++ }
    END { print n + 0 }' "$W/mock.rec"
}
# committed_view TOPIC: what a read_committed consumer of a real broker gets, as consume prints it,
# per partition in offset order: computed by tests/kafka/committed_view.py from what the mock's
# brokers recorded (--record) and every record they hold (read_uncommitted); fails (after a
# message) unless kcat reading read_committed gets the same
committed_view() {
  local all py rc
  all=$(kcat -b "$A" -C -t "$1" -e -q -X isolation.level=read_uncommitted -f '%p %o %p\t%k\t%s\n' 2>/dev/null |
    sort -k1,1n -k2,2n)
  py=$(python3 "$S/tests/kafka/committed_view.py" "$W/mock.rec" "$1" <<<"$all") || return 1
  rc=$(kcat -b "$A" -C -t "$1" -e -q -X isolation.level=read_committed -f '%p %o %p\t%k\t%s\n' 2>/dev/null |
    sort -k1,1n -k2,2n)
  if [[ $py != "$rc" ]]; then
    echo "committed_view: read_committed differs from committed_view.py's view of topic $1" >&2
    return 1
  fi
  [[ -z $py ]] || cut -d ' ' -f 3- <<<"$py"
}
SINK_FILE="<param name=\"file\">$W/orders.csv</param>"
for w in 1 3; do
  graph "$W/sink$w.xml" ksink$w FileSource "$SINK_FILE" \
    "<operator name=\"f\" kind=\"Functor\"><input stream=\"Rows\"/><output stream=\"Out\" schema=\"Row\"/><set attr=\"n\">n</set></operator>
     <operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Out\"/><param name=\"brokers\">$A</param><param name=\"topic\">sink$w</param><param name=\"key\">key</param></operator>"
  if run sink-w$w "$W/sink-w$w" "$W/sink$w.xml" $w; then
    consume sink$w >"$W/sink-w$w/records" 2>"$W/sink-w$w/kcat.err"
    if why=$(python3 "$W/check_sink.py" "$W/orders.csv" "$W/sink-w$w/records" once 2>&1) &&
      [[ -z $(quiet "$W/sink-w$w/run.log" | grep -v "^sf-exec: warning: operator 'out': librdkafka warning AUTOCREATE: ") ]]; then
      sf_ok sink-w$w "FileSource -> Functor (width $w) -> KafkaSink key = key: $(wc -l <"$W/sink-w$w/records") records, each key in one partition, in order, once"
    else
      sf_bad sink-w$w "$why" "$W/sink-w$w/run.log"
    fi
  fi
done
# what the sink wrote, read back by a KafkaSource: the order computed from kcat's timestamps
kcat -b "$A" -C -t sink1 -e -q -f '%p %T %s\n' >"$W/sink1.rows" 2>/dev/null
python3 "$W/order.py" "$W/sink1.rows" stamp >"$W/sink1.expected"
graph "$W/back.xml" kback KafkaSource "$(kafka_params sink1 "$HW")"
run roundtrip "$W/back" "$W/back.xml" 1 &&
  same roundtrip "$W/sink1.expected" "$W/back/out.csv" "KafkaSink's records read back by a KafkaSource in the order of their CreateTime (from kcat), ties by partition"
# kill -9 after checkpoint 2 and --restore: every row there, in order per partition, repeats allowed
graph "$W/sinkk.xml" ksinkk FileSource "<param name=\"file\">$W/big.csv</param>" \
  "$SLOW <operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Slow\"/><param name=\"brokers\">$A</param><param name=\"topic\">sinkk</param><param name=\"key\">key</param><param name=\"delivery\">at-least-once</param></operator>"
d=$W/sink-kill
mkdir -p "$d"
"$B/sf-xform" -w 1 "$W/sinkk.xml" -o "$d/w1.xml" && "$B/sf-xform" -w 3 "$W/sinkk.xml" -o "$d/w3.xml"
(cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.05 --stats w1.xml) >"$d/run1.log" 2>&1 & # killed below
pid=$!
wait_ckpt "$d/ck/ckpt-2/MANIFEST" $pid
sleep 0.03 # records acknowledged after the checkpoint: written again by the restore
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
killed=$?
(cd "$d" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" --checkpoint-dir ck --restore w3.xml) >"$d/run.log" 2>&1
st=$?
warn="sf-exec: warning: operator 'out': writes topic 'sinkk' at-least-once: after a restore, the records written since the checkpoint are written again"
if [[ $killed != 137 ]]; then
  sf_bad sink-restore "the job ended ($killed) before checkpoint 2 was complete" "$d/run1.log"
elif [[ $st != 0 ]] || ! grep -qxF "$warn" "$d/run.log"; then
  sf_bad sink-restore "--restore exited $st (or without the at-least-once warning)" "$d/run.log"
else
  consume sinkk >"$d/records" 2>/dev/null
  if dups=$(python3 "$W/check_sink.py" "$W/big.csv" "$d/records" dups 2>&1); then
    sf_ok sink-restore "SIGKILL after checkpoint 2, --restore at width 3 ($(grep -o "restored checkpoint [0-9]*" "$d/run.log")): all $ROWS rows in the topic in order per partition, $dups written twice (at-least-once)"
  else
    sf_bad sink-restore "$dups" "$d/run.log"
  fi
fi
# key = an expression: each record's key is key + ":" + str(ts) of its row, computed here; its
# partition the one Java's partitioner gives it (murmur2, positive, modulo 3); each partition the
# rows of its keys in order, once
cat >"$W/check_keys.py" <<'EOF'
import csv, io, sys
def murmur2(data):  # Kafka's Utils.murmur2
    m, n = 0x5bd1e995, len(data)
    h = (0x9747b28c ^ n) & 0xffffffff
    for i in range(0, n - n % 4, 4):
        k = int.from_bytes(data[i:i + 4], 'little')
        k = (k * m) & 0xffffffff
        k ^= k >> 24
        k = (k * m) & 0xffffffff
        h = ((h * m) & 0xffffffff) ^ k
    tail = data[n - n % 4:]
    if len(tail) == 3: h ^= tail[2] << 16
    if len(tail) >= 2: h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * m) & 0xffffffff
    h ^= h >> 13
    h = (h * m) & 0xffffffff
    return h ^ (h >> 15)
rows = [line for line in open(sys.argv[1]).read().split('\n')[1:] if line]
key_of = lambda row: (lambda f: f[0] + ':' + f[2])(next(csv.reader(io.StringIO(row))))
got = {}
for line in open(sys.argv[2]).read().split('\n'):
    if not line: continue
    p, k, v = line.split('\t', 2)
    if k != key_of(v): sys.exit('record %r has key %r, not %r' % (v, k, key_of(v)))
    if int(p) != (murmur2(k.encode()) & 0x7fffffff) % 3: sys.exit('key %r in partition %s' % (k, p))
    got.setdefault(int(p), []).append(v)
for p in range(3):
    want = [r for r in rows if (murmur2(key_of(r).encode()) & 0x7fffffff) % 3 == p]
    if got.get(p, []) != want: sys.exit('partition %d: %d records, %d expected' % (p, len(got.get(p, [])), len(want)))
print(len({key_of(r) for r in rows}))
EOF
graph "$W/sinkx.xml" ksinkx FileSource "$SINK_FILE" \
  "<operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Rows\"/><param name=\"brokers\">$A</param><param name=\"topic\">sinkx</param><param name=\"key\">key + \":\" + str(ts)</param></operator>"
if run sink-key-expr "$W/sink-key-expr" "$W/sinkx.xml" 1; then
  consume sinkx >"$W/sink-key-expr/records" 2>/dev/null
  if why=$(python3 "$W/check_keys.py" "$W/orders.csv" "$W/sink-key-expr/records" 2>&1); then
    sf_ok sink-key-expr "key = key + \":\" + str(ts): 3000 records, $why keys as computed here, each in the partition of its murmur2 hash, in order, once"
  else
    sf_bad sink-key-expr "$why" "$W/sink-key-expr/run.log"
  fi
fi
# key = an expression that faults on a tuple: the job fails naming the sink, the key and the tuple
IFS=, read -r fkey fn fts < <(grep -m 1 -E '^k[0-9],' "$W/orders.csv") # a key without commas nor quotes
graph "$W/sinkxf.xml" ksinkxf FileSource "$SINK_FILE" \
  "<operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Rows\"/><param name=\"brokers\">$A</param><param name=\"topic\">sinkx</param><param name=\"key\">str(1 / (n - $fn))</param></operator>"
err_case sink-key-fault "$W/sinkxf.xml" "sf-exec: error: operator 'out': key: division by zero in 'str(1 / (n - $fn))' on tuple (key=\"$fkey\", n=$fn, ts=$fts)"
graph "$W/sinkunk.xml" ksinkunk FileSource "$SINK_FILE" \
  "<operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Rows\"/><param name=\"brokers\">$A</param><param name=\"topic\">nosuch</param></operator>"
err_case sink-unknown "$W/sinkunk.xml" "sf-exec: error: operator 'out': topic 'nosuch' does not exist on the Kafka brokers '$A'"
# a topic the brokers do not authorize this client for, read and written
graph "$W/deny-src.xml" kdenys KafkaSource "$(kafka_params secret "$HW")"
err_case deny-source "$W/deny-src.xml" "sf-exec: error: operator 'src': the Kafka brokers '$A' do not authorize this client for topic 'secret' (an ACL or the client's credentials)"
graph "$W/deny-sink.xml" kdenyk FileSource "$SINK_FILE" \
  "<operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Rows\"/><param name=\"brokers\">$A</param><param name=\"topic\">secret</param></operator>"
err_case deny-sink "$W/deny-sink.xml" "sf-exec: error: operator 'out': the Kafka brokers '$A' do not authorize this client for topic 'secret' (an ACL or the client's credentials)"
graph "$W/sinkeo.xml" ksinkeo FileSource "$SINK_FILE" \
  "<operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Rows\"/><param name=\"brokers\">$A</param><param name=\"topic\">sink1</param><param name=\"delivery\">twice</param><param name=\"transactional_id\"></param></operator>"
"$B/sf-xform" --check "$W/sinkeo.xml" >"$W/sinkeo.log" 2>&1
graph "$W/sinkkey.xml" ksinkkey FileSource "$SINK_FILE" \
  "<operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Rows\"/><param name=\"brokers\">$A</param><param name=\"topic\">sink1</param><param name=\"key\">nokey</param></operator>"
"$B/sf-xform" --check "$W/sinkkey.xml" >>"$W/sinkeo.log" 2>&1
keyline=$(sed -n 17p "$W/sinkkey.xml")
keyline=${keyline%%nokey*} # the key's column: after the brokers' address
if grep -q "parameter 'delivery' of operator 'out' must be 'exactly-once' or 'at-least-once', got 'twice'" "$W/sinkeo.log" &&
  grep -q "parameter 'transactional_id' of operator 'out' must be a transactional id, not empty, got ''" "$W/sinkeo.log" &&
  grep -qxF "$W/sinkkey.xml:17:$((${#keyline} + 1)): error: unknown name 'nokey'" "$W/sinkeo.log"; then
  sf_ok sink-param "sf-xform refuses delivery = twice, an empty transactional_id and a key expression naming no attribute (at its line:column)"
else
  sf_bad sink-param "sf-xform's messages differ" "$W/sinkeo.log"
fi

# ---- KafkaSink: exactly-once ----
# eo_sink TOPIC [MORE PARAMS]: a KafkaSink of stream Slow keyed by key
eo_sink() {
  echo "<operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Slow\"/><param name=\"brokers\">$A</param><param name=\"topic\">$1</param><param name=\"key\">key</param>${2:-}</operator>"
}
# without checkpoints, one transaction committed at the end
graph "$W/eoend.xml" keoend FileSource "$SINK_FILE" "${SLOW/iterations\">3000/iterations\">1}$(eo_sink eoend '<param name="delivery">exactly-once</param>')"
if run sink-eo-end "$W/eoend" "$W/eoend.xml" 2; then
  committed_view eoend >"$W/eoend/records" 2>"$W/eoend/view.err"
  n=$(commits eoend)
  if why=$(python3 "$W/check_sink.py" "$W/orders.csv" "$W/eoend/records" once 2>&1) && [[ -z $(quiet "$W/eoend/run.log") && $n == 1 ]]; then
    sf_ok sink-eo-end "delivery = exactly-once without checkpoints, width 2: $(wc -l <"$W/eoend/records") records committed at the end in one transaction, each once, in order per partition"
  else
    sf_bad sink-eo-end "${why:-$n transactions committed, not 1}" "$W/eoend/run.log" "$W/eoend/view.err"
  fi
fi
# with checkpoints (exactly-once is the default then), a transaction per checkpoint
graph "$W/eockpt.xml" keockpt FileSource "<param name=\"file\">$W/big.csv</param>" "$SLOW $(eo_sink eockpt)"
if run sink-eo-ckpt "$W/eockpt" "$W/eockpt.xml" 3 --checkpoint-dir ck --checkpoint-interval 0.02 --stats; then
  committed_view eockpt >"$W/eockpt/records" 2>"$W/eockpt/view.err"
  n=$(commits eockpt)
  if why=$(python3 "$W/check_sink.py" "$W/big.csv" "$W/eockpt/records" once 2>&1) && [[ $n -ge 2 ]]; then
    sf_ok sink-eo-ckpt "checkpoints every 20 ms, width 3: $(wc -l <"$W/eockpt/records") records in $n transactions, each once, in order per partition"
  else
    sf_bad sink-eo-ckpt "${why:-$n transactions committed}" "$W/eockpt/run.log" "$W/eockpt/view.err"
  fi
fi

# ---- transactions, as a real broker would show them (sf-kafka-mock's look at its sockets) ----
# txn_start NAME TXNID TOPIC: `sf-kafka-mock txn` in the background (60 s at most), its commands
# from the FIFO $W/NAME.in (the other producers' FIFOs closed in it, or they would never see their
# input end), its answers in $W/NAME.out; txn_do NAME LINE...: the lines to it, then waits (30 s at
# most) for the answers to its flush, commit and abort lines; txn_end NAME: its input closed, its
# exit status
declare -A TXN_FD TXN_PID TXN_N
txn_start() {
  local fd
  mkfifo "$W/$1.in"
  : >"$W/$1.out" # the child opens it only once its FIFO has a writer
  (
    for fd in "${TXN_FD[@]}"; do exec {fd}>&-; done
    exec timeout -k 5 60 "$B/sf-kafka-mock" txn "$A" "$3" "$2"
  ) <"$W/$1.in" >"$W/$1.out" 2>"$W/$1.err" &
  TXN_PID[$1]=$!
  exec {fd}>"$W/$1.in"
  TXN_FD[$1]=$fd
  TXN_N[$1]=0
}
txn_do() {
  local n=$1 l
  shift
  for l in "$@"; do
    echo "$l" >&"${TXN_FD[$n]}"
    case $l in flush | commit | abort) TXN_N[$n]=$((TXN_N[$n] + 1)) ;; esac
  done
  for _ in $(seq 600); do
    (($(wc -l <"$W/$n.out") >= TXN_N[$n])) && return 0
    kill -0 "${TXN_PID[$n]}" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
txn_end() {
  local fd=${TXN_FD[$1]}
  exec {fd}>&-
  wait "${TXN_PID[$1]}"
}
plain() { "$B/sf-kafka-mock" produce "$A" "$1" 2>/dev/null; } # stdin: PARTITION TIMESTAMP VALUE
# view TOPIC ISOLATION: kcat's records of TOPIC, "PARTITION OFFSET VALUE", per partition in offset order
view() { kcat -b "$A" -C -t "$1" -e -q -X isolation.level="$2" -f '%p %o %s\n' 2>>"$W/kcat.err" | sort -k1,1n -k2,2n; }
# txn_check CASE TOPIC EXPECTED WHAT: read_committed shows exactly EXPECTED ("PARTITION VALUE" lines
# in offset order), and equals committed_view.py's view computed from the record file and what
# read_uncommitted shows
txn_check() {
  local c=$1 t=$2 want=$3 what=$4 all committed pyview
  all=$(view "$t" read_uncommitted)
  committed=$(view "$t" read_committed)
  pyview=$(python3 "$S/tests/kafka/committed_view.py" "$W/mock.rec" "$t" <<<"$all" 2>&1)
  if [[ $(cut -d ' ' -f 1,3 <<<"$committed") != "$want" ]]; then
    sf_bad "$c" "read_committed shows: $(tr '\n' ' ' <<<"$committed")" "$W/mock.rec"
  elif [[ $pyview != "$committed" ]]; then
    sf_bad "$c" "committed_view.py: $(tr '\n' ' ' <<<"$pyview")" "$W/mock.rec"
  else
    sf_ok "$c" "$what; read_uncommitted shows all $(grep -c . <<<"$all"); read_committed = committed_view.py's view"
  fi
}

# txn-client: its answers, and the record file's events of its transactions (producer id aside)
txn_start tc tc txnc
txn_do tc 'rec 0 k1' 'rec 1 k2' commit 'rec 2 k3' flush abort
txn_end tc
st=$?
recd=$(grep ' txn=tc ' "$W/mock.rec" | sed 's/ pid=[0-9]* / pid=P /')
want='init txn=tc pid=P epoch=0 error=NO_ERROR
produce txn=tc pid=P epoch=0 topic=txnc partition=0 offset=0 count=1 transactional=1
produce txn=tc pid=P epoch=0 topic=txnc partition=1 offset=0 count=1 transactional=1
end_txn txn=tc pid=P epoch=0 result=commit error=NO_ERROR
produce txn=tc pid=P epoch=0 topic=txnc partition=2 offset=0 count=1 transactional=1
end_txn txn=tc pid=P epoch=0 result=abort error=NO_ERROR'
all=$(kcat -b "$A" -C -t txnc -e -q -X isolation.level=read_uncommitted -f '%p %o %s\n' 2>>"$W/kcat.err" | sort)
if [[ $st != 0 || $(tr '\n' ' ' <"$W/tc.out") != "committed flushed aborted " ]]; then
  sf_bad txn-client "sf-kafka-mock txn exited $st, answered: $(tr '\n' ' ' <"$W/tc.out")" "$W/tc.err"
elif [[ $(sort <<<"$recd") != "$(sort <<<"$want")" || $(awk '{ print $1 }' <<<"$recd" | tr '\n' ' ') != "init produce produce end_txn produce end_txn " ]]; then
  sf_bad txn-client "the record file's events differ" "$W/mock.rec"
elif [[ $all != $'0 0 k1\n1 0 k2\n2 0 k3' ]]; then
  sf_bad txn-client "read_uncommitted shows: $(tr '\n' ' ' <<<"$all")"
else
  sf_ok txn-client "sf-kafka-mock txn: commit, flush, abort answered; --record has its init, batches and EndTxns in order"
fi

# txn-view: committed, aborted and open (crashed) transactions of one producer interleaved with
# records written without a transaction, in 3 partitions; a commit after an abort shows
printf '0 -1 p1\n1 -1 p2\n' | plain txnv
txn_start ta tv txnv
txn_do ta 'rec 0 a1' 'rec 1 a2' 'rec 2 a3' commit
printf '0 -1 p3\n2 -1 p4\n' | plain txnv
txn_do ta 'rec 0 a4' 'rec 1 a5' flush
printf '0 -1 p5\n1 -1 p6\n' | plain txnv
txn_do ta 'rec 0 a6' flush abort 'rec 0 a7' 'rec 2 a8' flush
printf '2 -1 p7\n' | plain txnv
txn_do ta commit 'rec 0 a9' 'rec 1 a10' crash
txn_end ta
st=$?
printf '0 -1 p8\n1 -1 p9\n' | plain txnv
if [[ $st != 0 || $(tr '\n' ' ' <"$W/ta.out") != "committed flushed flushed aborted flushed committed " ]]; then
  sf_bad txn-view "sf-kafka-mock txn exited $st, answered: $(tr '\n' ' ' <"$W/ta.out")" "$W/ta.err"
else
  txn_check txn-view txnv $'0 p1\n0 a1\n0 p3\n0 p5\n0 a7\n0 p8\n1 p2\n1 a2\n1 p6\n1 p9\n2 a3\n2 p4\n2 a8\n2 p7' \
    "2 committed transactions (one after an abort), 1 aborted, 1 left open by a crash, 9 records without one"
fi

# txn-fence: a producer whose transactional id another one initialised is fenced (its commit fails,
# its open records never show); a producer restarted after a crash with the same transactional id:
# its predecessor's open records stay invisible (also to a read_committed consumer assigned at
# their offset, as a restored KafkaSink asks), its own committed ones show
txn_start fa tf txnf
txn_do fa 'rec 0 f1' 'rec 1 f2' flush
txn_start fb tf txnf
txn_do fb 'rec 0 g1' 'rec 2 g2' commit
txn_do fa commit
txn_end fa
sta=$?
txn_end fb
stb=$?
txn_start fc tr txnf
txn_do fc 'rec 0 c1' commit 'rec 1 c2' 'rec 2 c3' crash
txn_end fc
stc=$?
txn_start fd tr txnf
txn_do fd 'rec 1 d1' commit
txn_end fd
std=$?
fenced=$(grep -c '^end_txn txn=tf .* result=commit error=PRODUCER_FENCED$' "$W/mock.rec")
off=$(view txnf read_uncommitted | awk '$3 == "c2" { print $2 }')
after=$(kcat -b "$A" -C -t txnf -p 1 -o "${off:-0}" -e -q -X isolation.level=read_committed -f '%s\n' 2>>"$W/kcat.err")
if [[ $sta != 1 || $(tr '\n' ' ' <"$W/fa.out") != "flushed error _FENCED " || $fenced != 1 ]]; then
  sf_bad txn-fence "the fenced producer exited $sta, answered: $(tr '\n' ' ' <"$W/fa.out") ($fenced EndTxn answered PRODUCER_FENCED)" "$W/fa.err" "$W/mock.rec"
elif [[ $stb$stc$std != 000 ]]; then
  sf_bad txn-fence "the other producers exited $stb, $stc, $std" "$W/fb.err" "$W/fc.err" "$W/fd.err"
elif [[ -z $off || $after != d1 ]]; then
  sf_bad txn-fence "read_committed from offset ${off:-?} of partition 1 (the crashed producer's open record) shows: $(tr '\n' ' ' <<<"$after")"
else
  txn_check txn-fence txnf $'0 g1\n0 c1\n1 d1\n2 g2' \
    "fenced: commit answered _FENCED (EndTxn PRODUCER_FENCED); after a crash the restarted producer's records alone show (from partition 1 offset $off: d1)"
fi

# a kill while the commit of checkpoint 1's transaction hangs (the mock fails EndTxn for a while,
# so the sink cannot reach checkpoint 2's barrier): the restore from checkpoint 1 finds that
# transaction not committed and writes its records again
graph "$W/eostall.xml" keostall FileSource "<param name=\"file\">$W/big.csv</param>" "${SLOW/3000/10000}$(eo_sink eostall)"
d=$W/eostall
mkdir -p "$d"
"$B/sf-xform" -w 1 "$W/eostall.xml" -o "$d/w1.xml" && "$B/sf-xform" -w 3 "$W/eostall.xml" -o "$d/w3.xml"
echo "stall-endtxn 40" >&"$MOCKFD"
(cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.05 w1.xml) >"$d/run1.log" 2>&1 &
pid=$!
wait_ckpt "$d/ck/ckpt-1/MANIFEST" $pid
sleep 1
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
killed=$?
(cd "$d" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" --checkpoint-dir ck --restore w3.xml) >"$d/run.log" 2>&1
st=$?
note=$(grep -o "^sf-exec: operator 'out': the transaction open at checkpoint 1 was not committed: its [0-9]* records are written again$" "$d/run.log")
view_ok=1
committed_view eostall >"$d/records" 2>"$d/view.err" || view_ok=0
if [[ $killed != 137 ]]; then
  sf_bad sink-eo-stall "the job ended ($killed) before the kill" "$d/run1.log"
elif [[ $st != 0 || -z $note ]] || ! grep -q "^sf-exec: restored checkpoint 1 from 'ck'$" "$d/run.log"; then
  sf_bad sink-eo-stall "--restore exited $st, without restoring checkpoint 1 or saying its transaction is written again" "$d/run.log"
elif [[ $view_ok != 1 ]]; then
  sf_bad sink-eo-stall "no committed view" "$d/view.err"
elif why=$(python3 "$W/check_sink.py" "$W/big.csv" "$d/records" once 2>&1); then
  sf_ok sink-eo-stall "killed while checkpoint 1's commit hung, restored at width 3: ${note#*: }; $(wc -l <"$d/records") committed records, each once, in order per partition"
else
  sf_bad sink-eo-stall "$why" "$d/run.log"
fi

# two jobs with one transactional_id: the second's start fences the first, whose next commit fails
# naming the id; the second's records are committed, the first's open transaction is not
graph "$W/eofence.xml" keofence FileSource "<param name=\"file\">$W/big.csv</param>" \
  "${SLOW/3000/10000}$(eo_sink eofence '<param name="transactional_id">sf-test-fence</param>')"
d=$W/eofence
mkdir -p "$d/a" "$d/b"
"$B/sf-xform" "$W/eofence.xml" -o "$d/x.xml"
(cd "$d/a" && exec timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.05 ../x.xml) >"$d/a/run.log" 2>&1 &
pid=$!
wait_ckpt "$d/a/ck/ckpt-2/MANIFEST" $pid
(cd "$d/b" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.05 ../x.xml) >"$d/b/run.log" 2>&1
stb=$?
wait $pid
sta=$?
fenced="sf-exec: error: operator 'out': cannot commit a transaction on '$A': another producer with transactional id 'sf-test-fence' started since (another run of this job?)"
view_ok=1
committed_view eofence >"$d/records" 2>"$d/view.err" || view_ok=0
if [[ $sta != 1 || $stb != 0 ]] || ! grep -q "^$fenced" "$d/a/run.log"; then
  sf_bad sink-eo-fence "the first job exited $sta (expected 1, fenced), the second $stb" "$d/a/run.log" "$d/b/run.log"
elif [[ $view_ok != 1 ]]; then
  sf_bad sink-eo-fence "no committed view" "$d/view.err"
elif why=$(python3 "$W/check_sink.py" "$W/big.csv" "$d/records" dups 2>&1); then
  sf_ok sink-eo-fence "a second job with the same transactional_id fenced the first (its commit failed, naming the id); the committed view holds every row, $why of them twice (the first job's commits before the fence)"
else
  sf_bad sink-eo-fence "$why" "$d/b/run.log"
fi

# SIGKILL at random moments, each run --restore'd at another width, until one completes: a
# read_committed consumer gets every record once, in order per partition (the committed view)
graph "$W/eokill.xml" keokill FileSource "<param name=\"file\">$W/big.csv</param>" "${SLOW/3000/10000}$(eo_sink eokill)"
d=$W/eokill
mkdir -p "$d"
for w in 1 2 3; do "$B/sf-xform" -w $w "$W/eokill.xml" -o "$d/w$w.xml"; done
RANDOM=${SF_KAFKA_SEED:-$(date +%Y%m%d)}
widths=(1 3 2 1 3) kills=0 restored=() notes=0
for i in "${!widths[@]}"; do
  [[ $i == 0 ]] && opt=() || opt=(--restore)
  (cd "$d" && exec "$B/sf-exec" --checkpoint-dir ck --checkpoint-interval 0.05 "${opt[@]}" "w${widths[i]}.xml") >"$d/run$i.log" 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 7 + 2))"
  kill -KILL $pid 2>/dev/null && kills=$((kills + 1))
  wait $pid 2>/dev/null
  r=$(grep -o "restored checkpoint [0-9]*" "$d/run$i.log") && restored+=("${r#restored }")
done
(cd "$d" && timeout -k 5 "$SF_RUN_TIMEOUT" "$B/sf-exec" --checkpoint-dir ck --restore w2.xml) >"$d/run.log" 2>&1
st=$?
notes=$(cat "$d"/run*.log | grep -c "^sf-exec: operator 'out': the transaction open at checkpoint [0-9]* was ")
view_ok=1
committed_view eokill >"$d/records" 2>"$d/view.err" || view_ok=0
ntxn=$(commits eokill)
if [[ $st != 0 ]]; then
  sf_bad sink-eo-kill "the last --restore exited $st" "$d/run.log"
elif [[ $kills -lt 3 ]]; then
  sf_bad sink-eo-kill "only $kills of the runs were killed (the job is too short)" "$d/run0.log"
elif [[ $view_ok != 1 ]]; then
  sf_bad sink-eo-kill "no committed view" "$d/view.err"
elif why=$(python3 "$W/check_sink.py" "$W/big.csv" "$d/records" once 2>&1); then
  sf_ok sink-eo-kill "$kills SIGKILLs at random, restores at widths 3 2 1 3 2 (from ${restored[*]:-no checkpoint}): $(wc -l <"$d/records") committed records, each once, in order per partition ($ntxn transactions committed); $notes restores asked the brokers about an open transaction"
else
  sf_bad sink-eo-kill "$why" "$d/run.log"
fi

# ---- KafkaSink format = json ----
# the orders as JSON objects, keyed: each value an object of key, n, ts in that order (Python's
# parser), as the row it stands for (CSV again for check_sink.py)
cat >"$W/json_to_csv.py" <<'EOF'
import csv, io, json, sys
out = csv.writer(sys.stdout, lineterminator='\n')
for line in open(sys.argv[1], encoding='utf-8').read().split('\n'):
    if not line: continue
    p, k, v = line.split('\t', 2)
    members = json.loads(v, object_pairs_hook=list)
    names = [m[0] for m in members]
    if names != ['key', 'n', 'ts']: sys.exit('record %r: members %r' % (v, names))
    key, n, ts = (m[1] for m in members)
    if type(key) is not str or type(n) is not int or type(ts) is not int: sys.exit('record %r: types' % v)
    row = io.StringIO()
    csv.writer(row, lineterminator='').writerow([key, n, ts])
    print('%s\t%s\t%s' % (p, k, row.getvalue()))
EOF
graph "$W/jsink.xml" kjsink FileSource "$SINK_FILE" \
  "<operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Rows\"/><param name=\"brokers\">$A</param><param name=\"topic\">jsink</param><param name=\"key\">key</param>$JSON</operator>"
if run sink-json "$W/sink-json" "$W/jsink.xml" 1; then
  consume jsink >"$W/sink-json/records" 2>"$W/sink-json/kcat.err"
  if why=$(python3 "$W/json_to_csv.py" "$W/sink-json/records" 2>&1 >"$W/sink-json/rows") &&
    why=$(python3 "$W/check_sink.py" "$W/orders.csv" "$W/sink-json/rows" once 2>&1); then
    sf_ok sink-json "format = json, key = key: 3000 objects of key, n, ts in schema order (Python's json), each the row of its key, in order per partition, once"
  else
    sf_bad sink-json "$why" "$W/sink-json/run.log"
  fi
fi
# numbers and strings: doubles of random bits and the special ones, ints to the limits, strings
# of control characters, quotes, backslashes and UTF-8; the sink's JSON beside a FileSink's CSV of
# the same tuples: Python's parser reads every value back as the input's, the numbers with the
# CSV writer's text (but for the documented exceptions); and read back by a KafkaSource
# (format = json), the FileSink's bytes again
cat >"$W/mix.py" <<'EOF'
import csv, random, struct, sys
rnd = random.Random(11)
chars = ['a', 'Z', ' ', ',', '"', '\\', '/', '\t', '\n', '\r', '\x01', '\x1f', '\x7f', '\u00e9', '\u20ac', '\U0001f600', '\u2028']
special = [0.0, -0.0, 1e20, -1e19, 2.0**63, -2.0**63, 2.0**64, 1e21, 123456789012345678901.0, 5e-324, 1e-7, 0.1,
           float('nan'), float('inf'), float('-inf'), 9007199254740993.0, 2.0**63 - 1024]
out = csv.writer(sys.stdout, lineterminator='\n', quoting=csv.QUOTE_ALL)  # a lone CR quoted too
out.writerow(['s', 'd', 'i', 'b'])
for k in range(2000):
    if k < len(special): d = special[k]
    else:
        d = struct.unpack('<d', struct.pack('<Q', rnd.getrandbits(64)))[0]
        if d != d or d in (float('inf'), float('-inf')): d = rnd.random()
        if k % 5 == 0: d = float(rnd.randrange(-2**70, 2**70) >> rnd.randrange(71))
    i = rnd.choice([-2**63, 2**63 - 1, 0, rnd.randrange(-2**63, 2**63)])
    s = ''.join(rnd.choice(chars) for _ in range(rnd.randrange(12)))
    out.writerow([s, repr(d) if d == d and abs(d) != float('inf') else {'nan': 'nan', 'inf': 'inf', '-inf': '-inf'}[repr(d)], i, rnd.choice(['true', 'false'])])
EOF
cat >"$W/check_mix.py" <<'EOF'
import csv, json, struct, sys
inp = list(csv.reader(open(sys.argv[1], encoding='utf-8', newline='')))[1:]
csvout = list(csv.reader(open(sys.argv[2], encoding='utf-8', newline='')))[1:]
recs = [l for l in open(sys.argv[3], encoding='utf-8', newline='').read().split('\n') if l]
if not (len(inp) == len(csvout) == len(recs)): sys.exit('%d input rows, %d CSV rows, %d records' % (len(inp), len(csvout), len(recs)))
bits = lambda x: struct.pack('<d', x)
def json_text_of(t):  # the CSV writer's text t of a double, as the docs say the JSON sink writes it
    special = {'nan': '"NaN"', 'inf': '"Infinity"', '-inf': '"-Infinity"', '-0': '-0.0'}
    if t in special: return special[t]
    if '.' in t or 'e' in t or abs(int(t)) < 2**63: return t
    sign, digits = ('-', t[1:]) if t[0] == '-' else ('', t)
    kept = digits.rstrip('0')
    return sign + kept[0] + ('.' + kept[1:] if len(kept) > 1 else '') + 'e+%d' % (len(digits) - 1)
raw = lambda x: ('raw', x)
for n, (src, row, rec) in enumerate(zip(inp, csvout, recs)):
    members = json.loads(rec, object_pairs_hook=list, parse_float=raw, parse_int=raw)
    if [m[0] for m in members] != ['s', 'd', 'i', 'b']: sys.exit('record %d: members %r' % (n, members))
    s, d, i, b = (m[1] for m in members)
    dtext = d[1] if type(d) is tuple else json.dumps(d)
    if dtext != json_text_of(row[1]): sys.exit('record %d: double %r, CSV %r' % (n, dtext, row[1]))
    value = json.loads(rec)
    dv = {'NaN': float('nan'), 'Infinity': float('inf'), '-Infinity': float('-inf')}.get(value['d'], value['d'])
    if bits(float(dv)) != bits(float(src[1])) and src[1] != 'nan': sys.exit('record %d: %r is not %r' % (n, dv, src[1]))
    if type(i) is not tuple or i[1] != row[2] or value['i'] != int(src[2]): sys.exit('record %d: int %r, CSV %r' % (n, i, row[2]))
    if s != src[0] or s != row[0]: sys.exit('record %d: string %r, input %r' % (n, s, src[0]))
    if b is not (src[3] == 'true'): sys.exit('record %d: bool %r' % (n, b))
print(len(recs))
EOF
python3 "$W/mix.py" >"$W/mix.csv"
mix_graph() { # FILE NAME SOURCE BODY
  cat >"$1" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="$2">
  <schema name="Mix">
    <attr name="s" type="string"/>
    <attr name="d" type="double"/>
    <attr name="i" type="int"/>
    <attr name="b" type="bool"/>
  </schema>
  $3
  $4
</graph>
EOF
}
mix_graph "$W/jmix.xml" kjmix \
  "<operator name=\"src\" kind=\"FileSource\"><output stream=\"Rows\" schema=\"Mix\"/><param name=\"file\">$W/mix.csv</param></operator>" \
  "<operator name=\"csv\" kind=\"FileSink\"><input stream=\"Rows\"/><param name=\"file\">out.csv</param></operator>
   <operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Rows\"/><param name=\"brokers\">$A</param><param name=\"topic\">jdbl</param>$JSON</operator>"
if run sink-json-values "$W/sink-json-values" "$W/jmix.xml" 1; then
  kcat -b "$A" -C -t jdbl -e -q -f '%s\n' >"$W/sink-json-values/records" 2>/dev/null
  if why=$(python3 "$W/check_mix.py" "$W/mix.csv" "$W/sink-json-values/out.csv" "$W/sink-json-values/records" 2>&1); then
    sf_ok sink-json-values "format = json: $why objects (random doubles, ints to the limits, control characters, UTF-8) read by Python's json as the input, numbers as the CSV writer's text but for the documented exceptions"
  else
    sf_bad sink-json-values "$why" "$W/sink-json-values/run.log"
  fi
  mix_graph "$W/jmix-back.xml" kjmixback \
    "<operator name=\"src\" kind=\"KafkaSource\"><output stream=\"Rows\" schema=\"Mix\"/>$(kafka_params jdbl "$HW$JSON")</operator>" \
    "<operator name=\"csv\" kind=\"FileSink\"><input stream=\"Rows\"/><param name=\"file\">out.csv</param></operator>"
  run json-roundtrip "$W/json-roundtrip" "$W/jmix-back.xml" 1 &&
    same json-roundtrip "$W/sink-json-values/out.csv" "$W/json-roundtrip/out.csv" "the sink's JSON read by a KafkaSource (format = json): the tuples again, the CSV bytes of the sink's input"
fi

# ---- graphs/kafka/totals.xml, as README.md runs it (its topics renamed) ----
d=$W/example
mkdir -p "$d"
printf '0 1000 alice,5\n1 1001 bob,7\n0 1002 alice,2\n2 1003 carol,4\n' | "$B/sf-kafka-mock" produce "$A" exorders 2>/dev/null
sed -e "s/BROKERS/$A/" -e 's|>orders<|>exorders<|' -e 's|>totals<|>extotals<|' "$S/graphs/kafka/totals.xml" >"$d/totals.xml"
if run example "$d" "$d/totals.xml" 2; then
  got=$(kcat -b "$A" -C -t extotals -e -q -f '%k: %s\n' 2>/dev/null)
  if [[ $(grep -c . <<<"$got") == 4 && $(grep '^alice' <<<"$got" | tr '\n' ' ') == "alice: alice,5 alice: alice,7 " &&
    $(grep -v '^alice' <<<"$got" | sort | tr '\n' ' ') == "bob: bob,7 carol: carol,4 " ]]; then
    sf_ok example "graphs/kafka/totals.xml at width 2: the running totals, keyed, alice's in order"
  else
    sf_bad example "topic extotals holds: $(tr '\n' ' ' <<<"$got")" "$d/run.log"
  fi
fi

# ---- throughput: KafkaSource -> FileSink beside FileSource -> FileSink, same rows ----
graph "$W/tp-k.xml" ktp KafkaSource "$(kafka_params big "<param name=\"count\">$ROWS</param>")" # the 3 late ones last (one per partition: none waits)
graph "$W/tp-f.xml" ktp FileSource "<param name=\"file\">$W/big.csv</param>"
if run throughput "$W/tp-k" "$W/tp-k.xml" 1 --stats-json stats.json && run throughput "$W/tp-f" "$W/tp-f.xml" 1 --stats-json stats.json; then
  t0=$(sf_now); run throughput "$W/tp-k2" "$W/tp-k.xml" 1; t1=$(sf_now)
  run throughput "$W/tp-f2" "$W/tp-f.xml" 1; t2=$(sf_now)
  graph "$W/tp-s.xml" ktps FileSource "<param name=\"file\">$W/big.csv</param>" \
    "<operator name=\"out\" kind=\"KafkaSink\"><input stream=\"Rows\"/><param name=\"brokers\">$A</param><param name=\"topic\">tp</param><param name=\"key\">key</param></operator>"
  run throughput "$W/tp-s" "$W/tp-s.xml" 1; t3=$(sf_now)
  rate() { awk -v n="$ROWS" -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", n / (b - a) }'; }
  if cmp -s "$W/tp-k2/out.csv" "$W/big.csv"; then
    sf_ok throughput "$ROWS rows, process start included: KafkaSource -> FileSink $(sf_elapsed "$t0" "$t1") s ($(rate "$t0" "$t1") tuples/s), FileSource -> FileSink $(sf_elapsed "$t1" "$t2") s ($(rate "$t1" "$t2") tuples/s), FileSource -> KafkaSink $(sf_elapsed "$t2" "$t3") s ($(rate "$t2" "$t3") tuples/s, every record acknowledged)"
  else
    sf_bad throughput "KafkaSource's output is not the rows in order" "$W/tp-k2/run.log"
  fi
fi

# ---- the cluster ends when its stdin closes ----
exec {MOCKFD}>&-
for _ in $(seq 100); do kill -0 $MOCK 2>/dev/null || break; sleep 0.05; done
if kill -0 $MOCK 2>/dev/null; then
  sf_bad mock-end "sf-kafka-mock still runs after its stdin closed" "$W/mock.err"
else
  wait $MOCK
  sf_ok mock-end "sf-kafka-mock exited ($?) when its stdin closed"
fi

echo "kafka: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
