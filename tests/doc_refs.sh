#!/usr/bin/env bash
# tests/doc_refs.sh BUILD_DIR SOURCE_DIR: no tracked file names a document that does not exist.
#
# A document is named by a path ending in .md (`docs/language.md`, `../README.md`, `FORMAT.md`) or
# by the target of a Markdown link (`[x](docs/diagrams/passes.svg)`), optionally with an anchor
# (`docs/design.md#checkpoints`). A name resolves against the naming file's folder or the top of the
# tree (absolute paths, such as /tmp/x.md in an example command, are not the tree's and are left
# alone), and an anchor must be one of the headings of the document it points into (GitHub's rule:
# lower case, punctuation but `-` and `_` dropped, spaces made `-`). Links to URLs are not followed.
# The contract documents of the project's authors are not in the tree, so any name of them
# (FORMAT.md, DESIGN.md, GRPC-NOTES.md, STYLE.md, CHANGES.md) fails the same way.
#
# The files checked are `git ls-files` of SOURCE_DIR (every regular text file of it outside build
# trees when it is no git checkout). The checker is first run on a small tree of its own with known
# good and bad names, so a checker that finds nothing fails too.
set -uo pipefail
build=$1 src=$2
. "$src/tests/lib.sh"
SF_PASSED=0 SF_FAILED=0 SF_CASE_WIDTH=12
sf_mktemp SF_WORK doc_refs
trap sf_cleanup EXIT

# The folder of the authors' notes, spelt in two pieces so that this file itself never names it.
notes=shar
notes+=ed

# The anchors of a Markdown file, one a line: its headings ('#' lines outside fences) as GitHub
# makes their ids, a repeated one suffixed -1, -2, ...
anchors_of() { # FILE
  awk '
    /^```/ { fence = !fence; next }
    fence || !/^#+[ \t]/ { next }
    {
      h = $0; sub(/^#+[ \t]+/, "", h); sub(/[ \t]+#*[ \t]*$/, "", h)
      h = tolower(h)
      gsub(/[^a-z0-9 _-]/, "", h)   # what is not a letter, digit, space, - or _ goes (ASCII rule)
      gsub(/ /, "-", h)
      if (h in seen) { n = seen[h]++; print h "-" n } else { seen[h] = 1; print h }
    }' "$1"
}

# The names in the files FILE... (paths relative to TOP), as FILE:LINE:NAME lines: paths ending in
# .md (with an anchor), GRPC-NOTES, and in Markdown files link targets; a path holds no spaces or
# quotes, and URLs and paths under a shell variable ($src/README.md) are dropped first.
names_in() { # TOP FILE...
  local top=$1
  shift
  (cd "$top" && awk '
    function scan(re, link,    rest, m) {
      rest = line
      while (match(rest, re)) {
        m = substr(rest, RSTART, RLENGTH)
        if (link) m = substr(m, 3, length(m) - 3)
        print FILENAME ":" FNR ":" m
        rest = substr(rest, RSTART + RLENGTH)
      }
    }
    {
      line = $0
      gsub(/[A-Za-z][A-Za-z0-9+.-]*:\/\/[^ )>"]*/, "", line)
      gsub(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\/[A-Za-z0-9_.\/-]*/, "", line)   # $src/x.md: made at run time
      scan("[A-Za-z0-9_./-]*[A-Za-z0-9_-]\\.md(#[A-Za-z0-9_-]+)?|GRPC-NOTES", 0)
      if (FILENAME ~ /\.md$/) scan("\\]\\([^) ]+\\)", 1)
    }' "$@") | LC_ALL=C sort -u
}

# Prints "FILE:LINE: NAME: why" for every name in the files FILE... (paths relative to TOP) that
# does not resolve; returns 1 when it printed any.
check_names() { # TOP FILE...
  local top=$1 bad=0 f line name path anchor target found
  shift
  while IFS=: read -r f line name; do
    if [[ $name =~ (^|/)$notes/(FORMAT|DESIGN|GRPC-NOTES|STYLE|CHANGES)\.md ]]; then
      echo "$f:$line: $name: the authors' notes, not in the tree"; bad=1; continue
    fi
    [[ $name == /* ]] && continue                   # an absolute path is an example, not ours
    path=${name%%#*} anchor=
    [[ $name == *#* ]] && anchor=${name#*#}
    [[ -z $path ]] && path=$(basename "$f")          # (#anchor): this document
    found=
    for target in "$top/$(dirname "$f")/$path" "$top/$path"; do
      [[ $path == /* ]] && target=$path
      if [[ -e $target ]]; then found=$target; break; fi
    done
    if [[ -z $found ]]; then
      echo "$f:$line: $name: no such document"; bad=1; continue
    fi
    if [[ -n $anchor && $found == *.md ]] && ! anchors_of "$found" | grep -qxF -- "$anchor"; then
      echo "$f:$line: $name: no heading '$anchor' in ${found#"$top"/}"; bad=1
    fi
  done < <(names_in "$top" "$@")
  return $bad
}

# Every tracked text file of TOP, paths relative to it, one a line.
tracked_files() { # TOP
  if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$1" ls-files -z
  else
    (cd "$1" && find . -path ./build -prune -o -path './build-*' -prune -o -path ./.git -prune \
       -o -type f -printf '%P\0')
  fi | (cd "$1" && xargs -0 -r grep -IlZ '' --) | tr '\0' '\n' |   # text files only
    grep -vx 'tests/doc_refs.sh'   # this file, which must name what it looks for
}

check_tree() { # TOP: prints every unresolved name; returns 1 when there was one
  local files
  mapfile -t files < <(tracked_files "$1")
  check_names "$1" "${files[@]}"
}

# 1. The checker on a tree of its own: the good names pass, each bad one is reported.
mini=$SF_WORK/mini
mkdir -p "$mini/docs/sub"
cat >"$mini/README.md" <<'EOF'
# Top
See [the guide](docs/guide.md#first-steps) and docs/guide.md, [a picture](docs/sub/p.svg).
## Twice
## Twice
[again](#twice-1), [here](#top), [web](https://example.org/x.md), made at run time: $top/gen.md, /tmp/copy.md
EOF
cat >"$mini/docs/guide.md" <<'EOF'
# Guide
## First steps!
```
# not a heading
```
Back to ../README.md#twice; the contract is NOTES/FORMAT.md ("Elements"), and DESIGN.md too.
And /work/NOTES/STYLE.md.
[gone](missing.md), [no such heading](../README.md#not-there), [fence](#not-a-heading).
EOF
sed -i "s|NOTES|$notes|g" "$mini/docs/guide.md"
: >"$mini/docs/sub/p.svg"
expect="docs/guide.md:6: $notes/FORMAT.md: the authors' notes, not in the tree
docs/guide.md:6: DESIGN.md: no such document
docs/guide.md:7: /work/$notes/STYLE.md: the authors' notes, not in the tree
docs/guide.md:8: missing.md: no such document
docs/guide.md:8: ../README.md#not-there: no heading 'not-there' in docs/../README.md
docs/guide.md:8: #not-a-heading: no heading 'not-a-heading' in docs/guide.md"
got=$(check_tree "$mini" | LC_ALL=C sort)
if [[ $got == "$(LC_ALL=C sort <<<"$expect")" ]]; then
  sf_ok checker "reports exactly the 6 bad names of a planted tree, and none of its 9 good ones"
else
  printf '%s\n' "$got" >"$SF_WORK/checker.got"; printf '%s\n' "$expect" >"$SF_WORK/checker.want"
  sf_keep "$SF_WORK"
  sf_bad checker "planted tree: wrong report" "$SF_WORK/checker.want" "$SF_WORK/checker.got"
fi

# 2. The project itself.
n=$(tracked_files "$src" | wc -l)
if report=$(check_tree "$src"); then
  sf_ok tree "every document named in the $n tracked text files exists"
else
  printf '%s\n' "$report" >"$SF_WORK/tree.txt"
  sf_keep "$SF_WORK"
  sf_bad tree "$(wc -l <"$SF_WORK/tree.txt") names of missing documents" "$SF_WORK/tree.txt"
fi

echo "doc_refs: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED -eq 0 ]]
