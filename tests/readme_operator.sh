#!/usr/bin/env bash
# tests/readme_operator.sh BUILD_DIR SOURCE_DIR
#
# The Custom operator of README.md (its section "A Custom operator", written against op.h ABI
# version 4) cannot drift from the code: tests/docs_operator.sh, given the README, takes its marked
# blocks out, builds the operator against the installed op.h with pkg-config, runs it with the
# installed sf-exec and compares what it prints with the README; then kills a slowed run once a
# checkpoint exists and restores it (the kept tuple saved with sf_snapshot_write_tuple). One line
# per case, OK or FAIL. Environment: SF_KEEP=1, SF_RUN_TIMEOUT.
set -uo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
src=$2
exec bash "$(dirname "$0")/docs_operator.sh" "$1" "$src" "$src/README.md"
