#!/usr/bin/env bash
# tests/bench/eval.sh [BUILD_DIR]: compiled expressions against the tree walker.
# The ns per tuple of the chain's six expressions evaluated by the tree
# walker (expr_eval) and by the compiled form the operators run (code_eval), in the same run on the
# same values (tests/bench/eval.c checks them identical; each best of SF_BENCH_RUNS, 2000000 tuples).
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh" "$@"

echo "expressions: the chain's six (Beacon, Functor, Filter), 2000000 tuples, values checked identical"
"$bin/sf-bench-eval" 2000000 "$RUNS" >eval.txt || bench_die "sf-bench-eval failed"
sed 's/^/   /' eval.txt
tree=$(awk '/^tree walker/ { print $(NF - 3) }' eval.txt)
code=$(awk '/^compiled/ { print $(NF - 3) }' eval.txt)
{ [ -n "$tree" ] && [ -n "$code" ]; } || bench_die "unexpected output of sf-bench-eval"
bench_figure code "$code" "$tree" ns/tuple \
  "the chain's six expressions: compiled against the tree walker, best of $RUNS"
bench_end
