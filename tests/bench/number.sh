#!/usr/bin/env bash
# tests/bench/number.sh [BUILD_DIR]: xform/number.c's number text against the printf-based formatter.
# The ns per value of the double and int formatters (xform/number.c)
# against the printf and strtod formatter they replaced, on the same values in the same run
# (tests/bench/number_format.c checks the texts equal; 1000000 values each, best of SF_BENCH_RUNS).
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh" "$@"

echo "number text: ns per value, old (snprintf %.*e + strtod; snprintf %lld) vs xform/number.c, 1000000 values each"
"$bin/sf-bench-number-format" 1000000 "$RUNS" >number.txt || bench_die "sf-bench-number-format failed"
sed 's/^/   /' number.txt
# one figure per row: its name from the row's first words, old and new ns the last but one two fields
figures=0
while IFS=$'\t' read -r name old new what; do
  bench_figure "$name" "$new" "$old" ns/value "$what: xform/number.c against printf, best of $RUNS"
  figures=$((figures + 1))
done < <(awk 'NR > 1 {
    row = $0; sub(/[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+x[[:space:]]*$/, "", row)
    name = $1 == "ints:" ? "int" : \
      row ~ /chain/ ? "double.chain" : row ~ /cents/ ? "double.cents" : row ~ /uniform/ ? "double.uniform" : \
      row ~ /random bit/ ? "double.bits" : ""
    if (name != "") printf "%s\t%s\t%s\t%s\n", name, $(NF - 2), $(NF - 1), row
  }' number.txt)
[ "$figures" = 5 ] || bench_die "unexpected output of sf-bench-number-format ($figures rows recognised, 5 expected)"
bench_end
