#!/usr/bin/env bash
# tests/readme_tour.sh BUILD_DIR SOURCE_DIR: the README's five-minute tour does what the README says.
#
# The tour's graph is the README's first ```xml block. Each plain ``` block whose first line is
# `$ COMMAND` is a transcript: COMMAND is run in a work directory holding the graph (for the
# `--check` transcript, in a copy with the README's deliberate mistake `max(celsus)`), and what it
# prints (stdout and stderr) and its exit status must be what the README shows (status 1 when the
# transcript shows an error, else 0). The ```sh blocks after the graph are run as they are, with
# the tools of BUILD_DIR on the PATH and the tour's loopback ports replaced by free ones; each must
# succeed and print `identical`.
set -uo pipefail
build=$1 src=$2
. "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec || exit 1
SF_PASSED=0 SF_FAILED=0 SF_CASE_WIDTH=12
sf_mktemp SF_WORK readme_tour
trap sf_stop_all EXIT
readme=$src/README.md
export PATH=$build/bin:$src/tools:$PATH

# The blocks of the README, each as a file block-N.LANG (LANG "txt" for a plain fence), in order.
awk -v dir="$SF_WORK" '
  !inside && /^```/ { inside = 1; n++; lang = substr($0, 4); if (lang == "") lang = "txt"
                      file = sprintf("%s/block-%02d.%s", dir, n, lang); printf "" > file; next }
  inside && /^```$/ { inside = 0; close(file); next }
  inside { print > file }' "$readme"
xml=$(ls "$SF_WORK"/block-*.xml 2>/dev/null | head -n 1)
if [[ -z $xml ]]; then
  sf_bad graph "README.md has no \`\`\`xml block"
  exit 1
fi
mkdir -p "$SF_WORK/tour"
cp "$xml" "$SF_WORK/tour/rooms.xml"
if sf-xform --check "$SF_WORK/tour/rooms.xml" >"$SF_WORK/check.log" 2>&1; then
  sf_ok graph "the tour's graph passes sf-xform --check"
else
  sf_bad graph "the tour's graph fails sf-xform --check" "$SF_WORK/check.log"
fi

# Transcripts.
transcripts=0
for block in "$SF_WORK"/block-*.txt; do
  first=$(head -n 1 "$block")
  [[ $first == '$ '* ]] || continue
  transcripts=$((transcripts + 1))
  cmd=${first#'$ '}
  case=transcript$transcripts
  tail -n +2 "$block" >"$SF_WORK/$case.want"
  dir=$SF_WORK/tour                   # what a transcript writes, the runs below read
  if grep -q celsus "$block"; then   # the README's deliberate mistake, in a copy of its own
    dir=$SF_WORK/$case
    mkdir -p "$dir"
    sed 's/max(celsius)/max(celsus)/' "$SF_WORK/tour/rooms.xml" >"$dir/rooms.xml"
  fi
  want_rc=0
  grep -q ': error: ' "$SF_WORK/$case.want" && want_rc=1
  (cd "$dir" && eval "$cmd") >"$SF_WORK/$case.got" 2>&1
  rc=$?
  if [[ $rc -ne $want_rc ]]; then
    sf_bad "$case" "'$cmd' exited $rc, the README implies $want_rc" "$SF_WORK/$case.got"
  elif ! diff -u "$SF_WORK/$case.want" "$SF_WORK/$case.got" >"$SF_WORK/$case.diff"; then
    sf_bad "$case" "'$cmd' prints other text than the README shows" "$SF_WORK/$case.diff"
  else
    sf_ok "$case" "'$cmd': the README's output, exit $rc"
  fi
done
[[ $transcripts -ge 2 ]] || sf_bad transcripts "expected the README's two transcripts, found $transcripts"

# The runs: the ```sh blocks after the graph's, in order, in one directory.
sf_next_ports 3 || exit 1
runs=0
for block in "$SF_WORK"/block-*.sh; do
  [[ $block > $xml ]] || continue
  grep -q 'identical' "$block" || continue
  runs=$((runs + 1))
  case=run$runs
  sed -e "s/:7301/:$P0/g" -e "s/:7302/:$P1/g" -e "s/:7303/:$P2/g" "$block" >"$SF_WORK/$case.sh"
  (cd "$SF_WORK/tour" && timeout -k 5 300 bash -e "$SF_WORK/$case.sh") >"$SF_WORK/$case.log" 2>&1
  rc=$?
  if [[ $rc -eq 0 ]] && [[ $(grep -c '^identical$' "$SF_WORK/$case.log") -ge 1 ]]; then
    sf_ok "$case" "$(grep -v '^#' "$block" | grep -o 'sf-[a-z]*' | sort -u | tr '\n' ' ')run, outputs identical"
  else
    sf_bad "$case" "the README's commands failed (exit $rc)" "$SF_WORK/$case.sh" "$SF_WORK/$case.log"
  fi
done
[[ $runs -ge 2 ]] || sf_bad runs "expected the README's two runs (one process, three executors), found $runs"

echo "readme_tour: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED -eq 0 ]]
