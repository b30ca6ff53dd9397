#!/usr/bin/env bash
# tests/docs_examples.sh BUILD_DIR SOURCE_DIR
#
# Every XML example in the documentation is real: each fenced block opened by a line ```xml in
# docs/*.md is extracted, and each one that is a complete graph (it has a root <graph> element) must
# pass `sf-xform --check`, with nothing on standard error. A block that is only a fragment of a
# graph (an <operator>, a <schema>, ...) is marked by the line `<!-- fragment -->` right before its
# fence and skipped; an unmarked block that is not a whole graph fails, so a broken example cannot
# hide by looking like a fragment. One OK/FAIL line per block, named FILE:LINE (the fence's line);
# sf-xform's diagnostics are shown with the lines of the doc.
# The checks run in an empty work directory, so the examples' relative file names touch nothing.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
trap sf_cleanup EXIT
sf_need_bins "$build" sf-xform || exit 1
sf_mktemp work sf-docs-examples || exit 1

shopt -s nullglob
docs=("$src"/docs/*.md)
if [[ ${#docs[@]} -eq 0 ]]; then
  echo "FAIL  no docs/*.md found in $src"
  exit 1
fi

# Splits every doc into $work/blocks/N.xml, one per ```xml block, and lists them in
# $work/blocks/index as "N FILE LINE KIND" (KIND: graph, fragment or partial: neither marked nor
# a whole graph). A block still open at the end of its file is listed as "unclosed".
mkdir -p "$work/blocks"
for doc in "${docs[@]}"; do
  awk -v dir="$work/blocks" -v name="docs/${doc##*/}" '
    BEGIN { n = 0; while ((getline l < (dir "/count")) > 0) n = l; close(dir "/count") }
    !inblock && /^```xml[[:space:]]*$/ {
      n++; inblock = 1; start = FNR; file = dir "/" n ".xml"; graph = 0
      fragment = prev ~ /^<!--[[:space:]]*fragment[[:space:]]*-->[[:space:]]*$/
      printf "" > file
      next
    }
    inblock && /^```[[:space:]]*$/ {
      inblock = 0; close(file)
      kind = fragment ? "fragment" : graph ? "graph" : "partial"
      print n, name, start, kind >> (dir "/index")
      prev = $0
      next
    }
    inblock { print >> file; if ($0 ~ /^[[:space:]]*<graph[[:space:]>]/) graph = 1; next }
    { if ($0 !~ /^[[:space:]]*$/) prev = $0 }
    END {
      if (inblock) print n, name, start, "unclosed" >> (dir "/index")
      print n > (dir "/count")
    }
  ' "$doc" || { echo "FAIL  cannot read $doc"; exit 1; }
done

failed=0 graphs=0
if [[ ! -s $work/blocks/index ]]; then
  echo "FAIL  no \`\`\`xml block in docs/*.md"
  exit 1
fi
cd "$work" || exit 1
while read -r n name line kind; do
  case $kind in
  fragment)
    echo "OK    $name:$line: a fragment (marked), not checked"
    ;;
  unclosed)
    echo "FAIL  $name:$line: the \`\`\`xml block is never closed"
    failed=1
    ;;
  partial)
    echo "FAIL  $name:$line: not a whole graph (no <graph> element) and not marked <!-- fragment -->"
    failed=1
    ;;
  graph)
    graphs=$((graphs + 1))
    mkdir -p "$work/run$n"
    (cd "$work/run$n" && "$build/bin/sf-xform" --check "$work/blocks/$n.xml") >"$work/out" 2>"$work/err"
    rc=$?
    if [[ $rc -ne 0 || -s $work/err ]]; then
      echo "FAIL  $name:$line: sf-xform --check exited $rc"
      # the block's line L is the doc's line FENCE + L
      awk -v f="$work/blocks/$n.xml:" -v name="$name" -v fence="$line" '{
        if (index($0, f) == 1) {
          rest = substr($0, length(f) + 1)
          l = rest + 0
          sub(/^[0-9]+/, "", rest)
          $0 = name ":" (fence + l) rest
        }
        print "    | " $0
      }' "$work/err" | head -n 20
      failed=1
    else
      echo "OK    $name:$line: a graph, sf-xform --check passes"
    fi
    ;;
  esac
done <"$work/blocks/index"

if [[ $graphs -eq 0 ]]; then
  echo "FAIL  no complete graph among the examples"
  failed=1
fi
exit $failed
