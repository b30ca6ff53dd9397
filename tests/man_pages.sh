#!/usr/bin/env bash
# tests/man_pages.sh BUILD_DIR SOURCE_DIR
#
# The manual pages of docs/man against the tools they describe: sf-xform, sf-exec and sf-launch of
# the build (tools/sf-launch runs it), and tools/sf-certs. For each tool TOOL, with its page docs/man/TOOL.1:
#   1. options: the set of options (short and long forms) of `TOOL --help`, taken from its lines
#      that start with an option (indented at most 8 columns, as in `  -o, --output FILE  ...`:
#      options named in the descriptions do not count), equals the set of the tags of the page's
#      OPTIONS section (the line after each .TP there, escapes and fonts removed); every option in
#      one and not in the other is a failure naming the option and the tool; `TOOL --help` must
#      exit 0, and every OPTIONS tag must name an option; and that set is also the set of options
#      the code accepts (xform/main.c, rt/main.c: the names of the getopt_long table and the letters
#      of its option string; rt/launch/main.c: the options its loop compares (!strcmp(a, "--X"));
#      the scripts: the patterns of their option `case`), so a --help that
#      leaves out an option, or lists one that is gone, fails too;
#   2. environment: every variable the tool reads (sf-xform: getenv in xform/; sf-exec: getenv in
#      xform/ and rt/ but rt/launch/; sf-launch: getenv in rt/launch/) is a tag of the page's
#      ENVIRONMENT section;
#   3. rendering, when groff is installed (skipped, said so, otherwise): `groff -man -ww -z` warns
#      about nothing, in UTF-8 and ASCII, and no line of the page rendered for 80 columns is longer.
# Every docs/man/*.1 must be one of these tools' pages. That `cmake --install` installs them is
# tests/install.sh's step 1.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
trap sf_cleanup EXIT
sf_need_bins "$build" sf-xform sf-exec || exit 1
sf_mktemp SF_WORK sf-man-pages || exit 1
SF_CASE_WIDTH=10

# The command line of each tool.
declare -A cmd=(
  [sf-xform]="$build/bin/sf-xform"
  [sf-exec]="$build/bin/sf-exec"
  [sf-launch]="bash $src/tools/sf-launch"
  [sf-certs]="bash $src/tools/sf-certs"
)
tools=(sf-xform sf-exec sf-launch sf-certs)

# help_options FILE: the options of a --help text, one a line, sorted: on each line indented 1 to
# 8 columns that starts with an option, that option and those following it after ", ".
help_options() {
  awk 'match($0, /^ +-/) && RLENGTH <= 9 {
      sub(/^ +/, "")
      while (match($0, /^--?[A-Za-z0-9][-A-Za-z0-9]*/)) {
        print substr($0, 1, RLENGTH)
        $0 = substr($0, RLENGTH + 1)
        if (substr($0, 1, 2) != ", ") break
        $0 = substr($0, 3)
      }
    }' "$1" | LC_ALL=C sort -u
}

# section_tags PAGE SECTION: the tag lines of the .TP paragraphs of section SECTION of PAGE, with
# \-, \e, fonts (\fB, \f[...]) and \& removed, and the macro name of a tag given as a macro line.
section_tags() {
  awk -v want="$2" '
    /^\.SH/ { name = $0; sub(/^\.SH +/, "", name); gsub(/"/, "", name); insec = (name == want); tag = 0; next }
    insec && /^\.TP/ { tag = 1; next }
    insec && tag && /^\.\\"/ { next }
    insec && tag { tag = 0; print }' "$1" |
    sed -e 's/\\-/-/g; s/\\e/\\/g; s/\\f\[[^]]*\]//g; s/\\f[BIRP]//g; s/\\&//g' -e 's/^\.[A-Za-z]* //'
}

# man_options PAGE: the options the OPTIONS tags of PAGE name, one a line, sorted.
man_options() {
  section_tags "$1" OPTIONS | grep -oE '(^|[ ,"|[])--?[A-Za-z0-9][-A-Za-z0-9]*' | sed -E 's/^[ ,"|[]//' |
    LC_ALL=C sort -u
}

# code_options TOOL: the options TOOL's code accepts, one a line, sorted.
code_options() {
  local file
  case $1 in
    sf-xform | sf-exec)
      [[ $1 == sf-xform ]] && file=$src/xform/main.c || file=$src/rt/main.c
      grep -oE '\{"[A-Za-z0-9][-A-Za-z0-9]*", *(no|required|optional)_argument' "$file" | sed -E 's/^\{"([^"]*)".*/--\1/'
      grep -oE 'getopt_long\(argc, argv, "[^"]*"' "$file" | sed -E 's/.*"(.*)"$/\1/' | tr -d ':' | grep -o . | sed 's/^/-/'
      ;;
    sf-launch)
      grep -oE '!strcmp\(a, "--?[A-Za-z0-9][-A-Za-z0-9]*"\)' "$src/rt/launch/main.c" | sed -E 's/^[^"]*"([^"]*)"\)$/\1/'
      ;;
    sf-certs)
      grep -oE '^ +(-[A-Za-z0-9]|--[A-Za-z0-9][-A-Za-z0-9]*)(\|(-[A-Za-z0-9]|--[A-Za-z0-9][-A-Za-z0-9]*))*\)' \
        "$src/tools/$1" | tr -d ' )' | tr '|' '\n'
      ;;
  esac | LC_ALL=C sort -u
}

# read_vars TOOL: the environment variables TOOL reads, one a line, sorted.
read_vars() {
  case $1 in
    sf-xform) grep -ohE 'getenv\("[A-Za-z0-9_]+"\)' "$src"/xform/*.c ;;
    sf-exec) grep -rohE 'getenv\("[A-Za-z0-9_]+"\)' --include='*.c' --exclude-dir=launch "$src/xform" "$src/rt" ;;
    sf-launch) grep -ohE 'getenv\("[A-Za-z0-9_]+"\)' "$src"/rt/launch/*.c ;;
    sf-certs) ;;
  esac | sed -E 's/^getenv\("//; s/"\)$//; s/^\$\{//; s/:-$//' | LC_ALL=C sort -u
}

# only_in A B WHY: a failure of $tool for each option of the sorted list A that is not in B, said
# "option O WHY"; returns 1 when there was one.
only_in() {
  local o rc=0
  while IFS= read -r o; do
    [[ -n $o ]] || continue
    sf_bad "$tool" "option $o $3"
    rc=1
  done < <(LC_ALL=C comm -23 "$1" "$2")
  return $rc
}

for page in "$src"/docs/man/*.1; do
  name=$(basename "$page" .1)
  [[ -n ${cmd[$name]:-} ]] || sf_bad "$name" "docs/man/$name.1 is the page of no tool this test knows (add it to cmd)"
done

for tool in "${tools[@]}"; do
  page=$src/docs/man/$tool.1
  if [[ ! -f $page ]]; then
    sf_bad "$tool" "docs/man/$tool.1 is missing"
    continue
  fi
  # 1. options
  # shellcheck disable=SC2086 # the command line is words
  ${cmd[$tool]} --help >"$SF_WORK/$tool.help" 2>"$SF_WORK/$tool.help.err"
  rc=$?
  help_options "$SF_WORK/$tool.help" >"$SF_WORK/$tool.help.opts"
  man_options "$page" >"$SF_WORK/$tool.man.opts"
  bad=0
  if [[ $rc -ne 0 ]]; then
    sf_bad "$tool" "$tool --help exited $rc, not 0" "$SF_WORK/$tool.help.err"
    bad=1
  fi
  only_in "$SF_WORK/$tool.help.opts" "$SF_WORK/$tool.man.opts" \
    "is in '$tool --help' but not in docs/man/$tool.1 (OPTIONS)" || bad=1
  only_in "$SF_WORK/$tool.man.opts" "$SF_WORK/$tool.help.opts" \
    "is in docs/man/$tool.1 (OPTIONS) but not in '$tool --help'" || bad=1
  code_options "$tool" >"$SF_WORK/$tool.code.opts"
  only_in "$SF_WORK/$tool.code.opts" "$SF_WORK/$tool.help.opts" \
    "is accepted by $tool's code but not in '$tool --help'" || bad=1
  only_in "$SF_WORK/$tool.help.opts" "$SF_WORK/$tool.code.opts" \
    "is in '$tool --help' but $tool's code does not accept it" || bad=1
  while IFS= read -r t; do
    sf_bad "$tool" "the OPTIONS tag '$t' of docs/man/$tool.1 names no option"
    bad=1
  done < <(section_tags "$page" OPTIONS | grep -vE '(^|[ ,"|[])--?[A-Za-z0-9]')
  if [[ ! -s $SF_WORK/$tool.help.opts ]]; then
    sf_bad "$tool" "no option found in '$tool --help'"
  elif [[ $bad -eq 0 ]]; then
    sf_ok "$tool" "the $(wc -l <"$SF_WORK/$tool.help.opts") options of --help are the code's and docs/man/$tool.1's: $(tr '\n' ' ' <"$SF_WORK/$tool.help.opts")"
  fi

  # 2. environment
  read_vars "$tool" >"$SF_WORK/$tool.vars"
  section_tags "$page" ENVIRONMENT | grep -oE '[A-Z_][A-Z0-9_]*' | LC_ALL=C sort -u >"$SF_WORK/$tool.man.vars"
  missing=$(LC_ALL=C comm -23 "$SF_WORK/$tool.vars" "$SF_WORK/$tool.man.vars" | tr '\n' ' ')
  if [[ -n $missing ]]; then
    sf_bad "$tool" "$tool reads ${missing% }, which docs/man/$tool.1 (ENVIRONMENT) does not describe"
  elif [[ -s $SF_WORK/$tool.vars ]]; then
    sf_ok "$tool" "the variables it reads are in ENVIRONMENT: $(tr '\n' ' ' <"$SF_WORK/$tool.vars")"
  fi

  # 3. rendering
  if command -v groff >/dev/null; then
    warned=0
    for dev in utf8 ascii; do
      groff -man -ww -z -T"$dev" "$page" >"$SF_WORK/$tool.$dev.warn" 2>&1
      if [[ -s $SF_WORK/$tool.$dev.warn ]]; then
        sf_bad "$tool" "groff -man -ww -T$dev warns about docs/man/$tool.1" "$SF_WORK/$tool.$dev.warn"
        warned=1
      fi
    done
    groff -man -Tascii -P-cbou -rLL=78n "$page" 2>/dev/null |
      awk 'length($0) > 80 { print length($0) " columns: " $0 }' >"$SF_WORK/$tool.wide"
    if [[ -s $SF_WORK/$tool.wide ]]; then
      sf_bad "$tool" "docs/man/$tool.1 has lines wider than 80 columns" "$SF_WORK/$tool.wide"
    elif [[ $warned -eq 0 ]]; then
      sf_ok "$tool" "docs/man/$tool.1 renders without a warning, within 80 columns"
    fi
  fi
done
command -v groff >/dev/null || echo "(groff is not installed: the pages' rendering was not checked)"

echo "$SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED -eq 0 ]]
