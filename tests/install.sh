#!/usr/bin/env bash
# tests/install.sh BUILD_DIR SOURCE_DIR
#
# Custom operators built outside the source tree, against what `cmake --install` puts in a prefix:
#   1. `cmake --install BUILD_DIR --prefix TMP` installs sf-exec, op.h and streamfission-op.pc, and
#      every manual page of docs/man (NAME.1) as TMP/.../man1/NAME.1 (CMAKE_INSTALL_MANDIR, share/man
#      by default), byte for byte;
#   2. the installed sf-exec exports exactly the functions declared in op.h, nothing else of
#      StreamFission (its defined dynamic symbols that our libraries define: sanitizer runtimes
#      export their own, which are not ours);
#   3. graphs/ops/sf_example_ops.c, copied alone into a scratch directory, compiles with -Wall
#      -Wextra -Werror (unused parameters allowed) into libsf_example_ops.so using only `pkg-config
#      --cflags --libs streamfission-op` (PKG_CONFIG_PATH pointing into TMP); the installed copy of
#      that library is removed first, so only the one built here can be loaded;
#   4. graphs/clicks.xml, run by the installed sf-exec with that library beside the graph, writes
#      the same files, byte for byte, as the build tree's sf-exec with its own library.
# One line per step, OK or FAIL; failures keep the work directory.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
trap sf_cleanup EXIT
sf_need_bins "$build" sf-exec || exit 1
for tool in cmake pkg-config cc nm; do
  command -v "$tool" >/dev/null || { echo "FAIL  '$tool' is not installed"; exit 1; }
done
sf_mktemp work sf-install || exit 1
prefix=$work/prefix

fail() { # MESSAGE [LOG]: reports a failed step, keeps the work directory, exits 1
  echo "FAIL  $1 (work dir $work)"
  [[ $# -gt 1 ]] && sed 's/^/    | /' "$2" | head -n 30
  sf_keep "$work"
  exit 1
}

# 1. install into a fresh prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || fail "cmake --install failed" "$work/install.log"
pc=$(find "$prefix" -name streamfission-op.pc)
[[ -n $pc && -f $prefix/include/streamfission/op.h && -x $prefix/bin/sf-exec ]] ||
  fail "the prefix lacks sf-exec, include/streamfission/op.h or streamfission-op.pc" "$work/install.log"
echo "OK    cmake --install puts sf-exec, op.h and $(realpath --relative-to="$prefix" "$pc") in the prefix"
npages=0
for page in "$src"/docs/man/*.1; do
  [[ -f $page ]] || continue
  name=$(basename "$page")
  got=$(find "$prefix" -path "*/man1/$name")
  [[ -n $got && $got != *$'\n'* ]] || fail "cmake --install did not install docs/man/$name into a man1 directory" "$work/install.log"
  cmp -s "$page" "$got" || fail "the installed $(realpath --relative-to="$prefix" "$got") differs from docs/man/$name"
  npages=$((npages + 1))
done
[[ $npages -ge 4 ]] || fail "docs/man holds $npages manual pages, expected at least 4 (sf-xform, sf-exec, sf-launch, sf-certs)"
echo "OK    cmake --install puts the $npages manual pages of docs/man in $(realpath --relative-to="$prefix" "$(dirname "$got")")"

# 2. the exported symbols are op.h's functions
sed -n 's/^[a-z][a-z0-9_ ]*[ *]\(sf_[a-z_]*\)(.*/\1/p' "$src/rt/op.h" | LC_ALL=C sort >"$work/abi.want"
nm --defined-only -g "$build"/rt/libsfrt.a "$build"/xform/libsfgraph.a 2>/dev/null | awk 'NF == 3 { print $3 }' |
  LC_ALL=C sort -u >"$work/ours"
nm -D --defined-only "$prefix/bin/sf-exec" | awk '{ print $3 }' | sed 's/@.*//' | LC_ALL=C sort -u |
  LC_ALL=C comm -12 - "$work/ours" >"$work/abi.got"
[[ $(wc -l <"$work/abi.want") -ge 10 ]] || fail "found only $(wc -l <"$work/abi.want") functions in op.h"
diff -u "$work/abi.want" "$work/abi.got" >"$work/abi.diff" ||
  fail "sf-exec's exported symbols are not exactly op.h's functions (- missing, + extra)" "$work/abi.diff"
echo "OK    the installed sf-exec exports exactly the $(wc -l <"$work/abi.want") functions of op.h"

# 3. an out-of-tree build of the example operators through pkg-config
export PKG_CONFIG_PATH=$(dirname "$pc")
mkdir -p "$work/ops" "$work/run/out" "$work/ref/out"
cp "$src/graphs/ops/sf_example_ops.c" "$work/ops/"
rm -f "$prefix"/lib*/streamfission/libsf_example_ops.so "$prefix"/lib/*/streamfission/libsf_example_ops.so
# shellcheck disable=SC2046 # the flags are words
(cd "$work/ops" && cc -std=c11 -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC $(pkg-config --cflags --libs streamfission-op) \
  -o "$work/run/libsf_example_ops.so" sf_example_ops.c) >"$work/cc.log" 2>&1 ||
  fail "the example operators do not build against the installed op.h" "$work/cc.log"
echo "OK    graphs/ops/sf_example_ops.c builds out of tree with pkg-config streamfission-op"

# 4. the installed sf-exec runs clicks.xml with it, same output as the build tree's
for d in run ref; do
  cp "$src/graphs/clicks.xml" "$work/$d/"
  cp -r "$src/graphs/data" "$work/$d/data"
done
(cd "$work/run" && timeout -k 5 "${SF_RUN_TIMEOUT:-120}" "$prefix/bin/sf-exec" clicks.xml) >"$work/run.log" 2>&1 ||
  fail "the installed sf-exec failed on clicks.xml with the out-of-tree library" "$work/run.log"
sf_exec_in "$build" "$work/ref" "$work/ref/clicks.xml" "$work/ref.log" || fail "the build's sf-exec failed" "$work/ref.log"
[[ -n $(sf_list_files "$work/ref/out") ]] || fail "the reference run wrote no file"
sf_compare_dirs "$work/ref/out" "$work/run/out" >"$work/cmp.log" 2>&1 ||
  fail "the out-of-tree operators' output differs from the build tree's" "$work/cmp.log"
echo "OK    the installed sf-exec runs graphs/clicks.xml with the out-of-tree library: $(sf_list_files "$work/run/out" | wc -l) files as in the build"
