#!/usr/bin/env bash
# tests/bench/kafka.sh [BUILD_DIR]: KafkaSource and KafkaSink against the file source and sink on
# the same rows, through librdkafka's mock cluster (sf-kafka-mock: three brokers on loopback, in
# one process; a real cluster is slower per record and faster per partition, so these figures say
# what sf's own path costs, not what a cluster gives). SF_BENCH_KAFKA_N rows (default 300000:
# the mock keeps about 5 MiB per partition) of a keyed CSV schema in a topic of 3 partitions.
#   source: KafkaSource -> FileSink against FileSource -> FileSink (the same rows, read back
#           byte for byte);
#   sink:   FileSource -> KafkaSink (at-least-once, keyed) against FileSource -> FileSink;
#   sink_eo: the KafkaSink with delivery = exactly-once and a checkpoint every 0.1 s (a
#           transaction per checkpoint) against the at-least-once one.
# Each sink run writes a topic of its own. Process start is included (one process per run).
# shellcheck source=tests/bench/lib.sh disable=SC2016 # bench_alternate evaluates its commands
source "$(dirname "$0")/lib.sh" "$@"

[ -x "$bin/sf-kafka-mock" ] || bench_skip "sf-kafka-mock is not built"
command -v python3 >/dev/null || bench_skip "python3 is missing"
KN=${SF_BENCH_KAFKA_N:-300000}
topics="rows:3"
for r in $(seq "$RUNS"); do topics+=" alo$r:3 eo$r:3"; done
mkfifo mock.in
# shellcheck disable=SC2086 # one word per topic
"$bin/sf-kafka-mock" $topics <mock.in >mock.addr 2>mock.err &
mock=$!
exec {mockfd}>mock.in
trap 'exec {mockfd}>&-; wait $mock 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s mock.addr ] && break; sleep 0.05; done
A=$(head -n 1 mock.addr)
[ -n "$A" ] || bench_die "sf-kafka-mock printed no address: $(cat mock.err)"

# the rows, and the same as the mock's producer takes them (partition, timestamp, value):
# timestamps rise with the row, so the source's merge by time gives the file's order
python3 - "$KN" <<'EOF'
import sys
n = int(sys.argv[1])
with open('rows.csv', 'w') as f, open('rows.prod', 'w') as p:
    f.write('key,n,v\n')
    for i in range(n):
        row = 'k%d,%d,%d' % (i % 1000, i, i * 7 % 10007)
        f.write(row + '\n')
        p.write('%d %d %s\n' % (i % 3, 1000 + i, row))
EOF
"$bin/sf-kafka-mock" produce "$A" rows <rows.prod 2>produce.log || bench_die "producing the rows: $(cat produce.log)"

graph() { # FILE SOURCE-KIND SOURCE-PARAMS SINK-KIND SINK-PARAMS
  cat >"$1" <<XML
$header
  <schema name="Row"><attr name="key" type="string"/><attr name="n" type="int"/><attr name="v" type="int"/></schema>
  <operator name="src" kind="$2"><output stream="Rows" schema="Row"/>$3</operator>
  <operator name="out" kind="$4"><input stream="Rows"/>$5</operator>
</graph>
XML
}
graph file.xml FileSource '<param name="file">rows.csv</param>' FileSink '<param name="file">out/file.csv</param>'
graph ksrc.xml KafkaSource "<param name=\"brokers\">$A</param><param name=\"topic\">rows</param><param name=\"end\">high-watermark</param>" \
  FileSink '<param name="file">out/kafka.csv</param>'
for r in $(seq "$RUNS"); do
  graph "alo$r.xml" FileSource '<param name="file">rows.csv</param>' KafkaSink \
    "<param name=\"brokers\">$A</param><param name=\"topic\">alo$r</param><param name=\"key\">key</param><param name=\"delivery\">at-least-once</param>"
  graph "eo$r.xml" FileSource '<param name="file">rows.csv</param>' KafkaSink \
    "<param name=\"brokers\">$A</param><param name=\"topic\">eo$r</param><param name=\"key\">key</param>"
done
echo "kafka: $KN rows, 3 partitions, librdkafka's mock cluster (3 brokers, this machine); median of $RUNS alternating runs"
bench_alternate -c 'bench_same out/kafka.csv rows.csv "KafkaSource -> FileSink"; bench_same out/file.csv rows.csv "FileSource -> FileSink"' \
  '"$bin/sf-exec" file.xml' '"$bin/sf-exec" ksrc.xml'
t_file=${bench_med[0]} t_src=${bench_med[1]}
# each round writes its own topics: the round number is the one bench_alternate is in
round=0
next_round() { round=$((round + 1)); }
bench_alternate -c 'next_round' \
  '"$bin/sf-exec" file.xml' \
  '"$bin/sf-exec" alo$((round + 1)).xml' \
  '"$bin/sf-exec" --checkpoint-dir ck$((round + 1)) --checkpoint-interval 0.1 eo$((round + 1)).xml'
t_file2=${bench_med[0]} t_alo=${bench_med[1]} t_eo=${bench_med[2]}
# every record of the last round's sinks is in its topic, once
for t in "alo$RUNS" "eo$RUNS"; do
  got=$(kcat -b "$A" -C -t "$t" -e -q -f '%s\n' 2>/dev/null | sort -u | wc -l)
  [ "$got" = "$KN" ] || bench_die "topic $t holds $got distinct records, not $KN"
done
printf '   FileSource -> FileSink              %8ss  %s\n' "$t_file" "$(rate "$KN" "$t_file")"
printf '   KafkaSource -> FileSink             %8ss  %s\n' "$t_src" "$(rate "$KN" "$t_src")"
printf '   FileSource -> KafkaSink (at-least-once) %8ss  %s\n' "$t_alo" "$(rate "$KN" "$t_alo")"
printf '   FileSource -> KafkaSink (exactly-once, a checkpoint every 0.1 s) %8ss  %s\n' "$t_eo" "$(rate "$KN" "$t_eo")"
what="$KN rows, 3 partitions, librdkafka's mock cluster, process start included"
bench_figure source "$(mrate "$KN" "$t_src")" "$(mrate "$KN" "$t_file")" "M tuples/s" \
  "$what: KafkaSource -> FileSink against FileSource -> FileSink"
bench_figure sink "$(mrate "$KN" "$t_alo")" "$(mrate "$KN" "$t_file2")" "M tuples/s" \
  "$what: FileSource -> KafkaSink (at-least-once, keyed) against FileSource -> FileSink"
bench_figure sink_eo "$(mrate "$KN" "$t_eo")" "$(mrate "$KN" "$t_alo")" "M tuples/s" \
  "$what: KafkaSink exactly-once with a checkpoint every 0.1 s against at-least-once"
bench_end
