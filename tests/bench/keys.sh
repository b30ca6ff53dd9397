#!/usr/bin/env bash
# tests/bench/keys.sh [BUILD_DIR]: memory and rate of keyed operators over many distinct keys.
# Memory and rate with many distinct keys. A keyed Aggregate
# (tumbling windows of 1000 per key, so every key's state stays) and a Dedup, each alone behind a
# Beacon of 2K tuples over K = SF_BENCH_KEYS distinct keys (default 10000000; every key seen twice),
# against the same graph over 100 keys: bytes per key = (peak resident memory - the 100-key run's)
# / K. A Filter drops what they emit, so that only the keys differ between the runs. One run each.
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh" "$@"

[ -x /usr/bin/time ] || bench_die "/usr/bin/time is missing (tools/setup.sh installs package time)"
keys_graph() { # KEYS TUPLES OPERATOR(agg|dedup)
  local op
  if [ "$3" = agg ]; then
    op='<operator name="agg" kind="Aggregate"><input stream="A"/><output stream="B" schema="Out"/>
    <param name="partitionBy">k</param><param name="window">tumbling 1000</param><set attr="s">sum(v)</set></operator>'
  else
    op='<operator name="dedup" kind="Dedup"><input stream="A"/><output stream="B" schema="In"/>
    <param name="partitionBy">k</param></operator>'
  fi
  cat <<XML
$header
  <schema name="In"><attr name="k" type="int"/><attr name="v" type="int"/></schema>
  <schema name="Out"><attr name="k" type="int"/><attr name="s" type="int"/></schema>
  <operator name="src" kind="Beacon">
    <output stream="A" schema="In"/>
    <param name="count">$2</param>
    <set attr="k">rand(seq % $1)</set>
    <set attr="v">seq % 1000</set>
  </operator>
  $op
  <operator name="none" kind="Filter"><input stream="B"/><output stream="C" schema="$([ "$3" = agg ] && echo Out || echo In)"/>
    <param name="where">k == -1</param></operator>
  <operator name="out" kind="FileSink"><input stream="C"/><param name="file">/dev/null</param></operator>
</graph>
XML
}
K=${SF_BENCH_KEYS:-10000000}
echo "keys: a keyed Aggregate and a Dedup over $K distinct keys, $((2 * K)) tuples, against 100 keys"
for op in agg dedup; do
  for keys in 100 "$K"; do
    keys_graph "$keys" $((2 * K)) $op >"keys-$op-$keys.xml"
    /usr/bin/time -o times.txt -f '%e %M' "$bin/sf-exec" "keys-$op-$keys.xml" || bench_die "keys $op failed"
    read -r wall kib <times.txt
    if [ "$keys" = 100 ]; then
      base_kib=$kib base_wall=$wall
      continue
    fi
    if [ $op = agg ]; then
      name=Aggregate what="keyed Aggregate (tumbling, sum), $((2 * K)) tuples"
    else
      name=Dedup what="Dedup, $((2 * K)) tuples"
    fi
    per_key=$(awk -v a="$kib" -v b="$base_kib" -v k="$K" 'BEGIN { printf "%.0f", (a - b) * 1024 / k }')
    printf '   %-9s %s keys: %s M tuples/s (100 keys: %s), peak %s MiB (100 keys: %s MiB): %s bytes per key\n' \
      "$name" "$K" "$(rate $((2 * K)) "$wall" | cut -d' ' -f1)" "$(rate $((2 * K)) "$base_wall" | cut -d' ' -f1)" $((kib / 1024)) \
      $((base_kib / 1024)) "$per_key"
    bench_figure "$op.bytes" "$per_key" - bytes/key \
      "$what: memory per key over $K keys (one run)"
    bench_figure "$op.rate" "$(mrate $((2 * K)) "$wall")" "$(mrate $((2 * K)) "$base_wall")" "M tuples/s" \
      "$what: over $K keys against 100 keys (one run)"
    bench_figure "$op.memory" "$(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }')" \
      "$(awk -v k="$base_kib" 'BEGIN { printf "%.1f", k / 1024 }')" MiB \
      "$what: peak memory over $K keys against 100 keys (one run)"
  done
done
bench_end
