# tests/lib.sh: shell helpers shared by the script tests (source it; it defines functions only).
#
# Every script test runs as `bash tests/NAME.sh BUILD_DIR SOURCE_DIR` (tests/CMakeLists.txt).
# This file has no main: sourcing it only defines the functions below and never exits.

# The tests would rather fail loudly than run a half-built tree.
sf_need_bins() { # BUILD_DIR NAME...
  local build=$1 name
  shift
  for name in "$@"; do
    if [[ ! -x $build/bin/$name ]]; then
      echo "error: $build/bin/$name is missing or not executable (build first)" >&2
      return 1
    fi
  done
  # tools/sf-launch runs the sf-launch of the build under test (a sanitizer build's too)
  if [[ -z ${SF_LAUNCH_BIN:-} && -x $build/bin/sf-launch ]]; then export SF_LAUNCH_BIN=$build/bin/sf-launch; fi
}

# Seconds since the epoch with milliseconds, for timings.
sf_now() { date +%s.%3N; }

# Elapsed seconds between two sf_now values, printed as 1.234.
sf_elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# A fresh temporary directory under ${TMPDIR:-/tmp}, removed by sf_cleanup unless kept. Set
# SF_KEEP=1 to keep every work directory for inspection.
#   sf_mktemp VAR PREFIX   stores the path in the variable VAR and remembers it for sf_cleanup;
#   sf_mktemp PREFIX       prints the path; called as $(sf_mktemp PREFIX) it runs in a subshell,
#                          so the caller must add it to SF_TMPDIRS itself.
SF_TMPDIRS=()
sf_mktemp() { # [VAR] PREFIX
  local _d
  _d=$(mktemp -d "${TMPDIR:-/tmp}/${!#}.XXXXXX") || return 1
  SF_TMPDIRS+=("$_d")
  if [[ $# -ge 2 ]]; then
    printf -v "$1" '%s' "$_d"
  else
    printf '%s\n' "$_d"
  fi
}
# Directories a failure wants kept (their path is printed in the failure message).
SF_KEEP_DIRS=()
sf_keep() { SF_KEEP_DIRS+=("$1"); }
# Removes the directories of sf_mktemp but the kept ones (and those holding a kept one). For
# `trap sf_cleanup EXIT`: it preserves the script's exit status.
sf_cleanup() {
  local rc=$? d k keep
  [[ ${SF_KEEP:-0} == 1 ]] && return $rc
  for d in "${SF_TMPDIRS[@]}"; do
    keep=0
    for k in "${SF_KEEP_DIRS[@]}"; do
      [[ $d == "$k" || $d == "$k"/* || $k == "$d"/* ]] && keep=1
    done
    [[ $keep == 1 ]] || rm -rf -- "$d"
  done
  return $rc
}

# Process groups the script started (setsid: each sf-launch run leads one), killed by sf_stop_all.
SF_GROUPS=()
# For `trap sf_stop_all EXIT`: kills the process groups of SF_GROUPS and the script's background
# jobs not yet reaped (so never a stale pid), waits for them, then sf_cleanup.
sf_stop_all() {
  local p
  for p in "${SF_GROUPS[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  for p in $(jobs -p); do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  sf_cleanup
}

# sf_hosts_graph FILE NAME COUNT RATE SINK: writes to FILE the graph NAME placed on two hosts: on h0
# a Beacon of COUNT tuples T(id, v) (0: unbounded), RATE a second ("": as fast as it can), and a
# FileSink writing SINK; on h1 a serial Functor (v * 2 + 1) between them. Every hop crosses hosts.
sf_hosts_graph() {
  local file=$1 name=$2 count=$3 rate=$4 sink=$5 rate_xml=""
  [[ -n $rate ]] && rate_xml=$'\n'"    <param name=\"rate\">$rate</param>"
  cat >"$file" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="$name">
  <schema name="T">
    <attr name="id" type="int"/>
    <attr name="v"  type="int"/>
  </schema>
  <operator name="src" kind="Beacon" host="h0">
    <output stream="Ticks" schema="T"/>
    <param name="count">$count</param>$rate_xml
    <set attr="id">seq</set>
    <set attr="v">rand(seq) % 1000</set>
  </operator>
  <operator name="calc" kind="Functor" parallel="no" host="h1">
    <input stream="Ticks"/>
    <output stream="Calced" schema="T"/>
    <set attr="v">v * 2 + 1</set>
  </operator>
  <operator name="out" kind="FileSink" host="h0">
    <input stream="Calced"/>
    <param name="file">$sink</param>
  </operator>
</graph>
EOF
}

# Runs sf-exec on GRAPH with WORKDIR as the working directory, under a time limit
# (SF_RUN_TIMEOUT seconds, default 120: a hang is a failure, not a stuck test).
# stdout and stderr go to LOG. Returns sf-exec's status (124 on timeout).
sf_exec_in() { # BUILD_DIR WORKDIR GRAPH LOG
  local build=$1 dir=$2 graph=$3 log=$4
  (cd "$dir" && timeout -k 5 "${SF_RUN_TIMEOUT:-120}" "$build/bin/sf-exec" "$graph") >"$log" 2>&1
}

# The files of a directory, one name a line, sorted (no subdirectories expected).
sf_list_files() { (cd "$1" && find . -maxdepth 1 -type f -printf '%P\n' | LC_ALL=C sort); }

# Prints CSV FILE with its rows stably grouped by the value of column COLUMN (named in the header):
# the rows of each group keep their order. Two files whose rows of every group are in the same order
# print the same. Handles quoted fields with commas and quotes; not line breaks inside fields.
sf_csv_group_by() { # FILE COLUMN
  awk -v col="$2" '
    function field(line, want,    n, i, c, q, f) {
      n = 1; q = 0; f = ""
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (q) { if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { f = f c; i++ } else q = 0 } else f = f c }
        else if (c == "\"") q = 1
        else if (c == ",") { if (n == want) return f; n++; f = "" }
        else f = f c
      }
      return n == want ? f : ""
    }
    NR == 1 { k = 0; m = split($0, h, ","); for (i = 1; i <= m; i++) if (h[i] == col) k = i; print "\t" $0; next }
    { print field($0, k) "\t" $0 }' "$1" | LC_ALL=C sort -s -t "$(printf '\t')" -k1,1
}

# Compares every file of directory EXPECT with the same-named file of ACTUAL, byte for byte, and the
# sets of names. Files named in SF_SORTED_FILES (space separated base names) are compared after
# sorting their lines: their row order is not determined (a fan-in of several streams). Entries of
# SF_GROUPED_FILES of the form NAME:COLUMN are compared per value of COLUMN: the rows of one value
# must be in the same order (a fan-in of streams told apart by COLUMN, each stream being ordered).
# Prints what differs (a cmp line and the first lines of a diff) and returns 1 if anything does.
sf_compare_dirs() { # EXPECT ACTUAL
  local exp=$1 act=$2 rc=0 f
  local el al
  el=$(sf_list_files "$exp")
  al=$(sf_list_files "$act")
  if [[ $el != "$al" ]]; then
    echo "    different sets of output files:"
    diff <(printf '%s\n' "$el") <(printf '%s\n' "$al") | sed 's/^/      /'
    rc=1
  fi
  while IFS= read -r f; do
    [[ -n $f && -f $act/$f ]] || continue
    local g col=""
    for g in ${SF_GROUPED_FILES:-}; do
      [[ ${g%%:*} == "$f" ]] && col=${g#*:}
    done
    if [[ -n $col ]]; then
      if ! cmp -s <(sf_csv_group_by "$exp/$f" "$col") <(sf_csv_group_by "$act/$f" "$col"); then
        echo "    $f differs (compared per value of column $col: the interleaving of those is not determined)"
        diff <(sf_csv_group_by "$exp/$f" "$col") <(sf_csv_group_by "$act/$f" "$col") |
          head -n "${SF_DIFF_LINES:-10}" | sed 's/^/      /'
        rc=1
      fi
    elif [[ " ${SF_SORTED_FILES:-} " == *" $f "* ]]; then
      if ! cmp -s <(LC_ALL=C sort "$exp/$f") <(LC_ALL=C sort "$act/$f"); then
        echo "    $f differs (compared sorted: its row order is not determined)"
        diff <(LC_ALL=C sort "$exp/$f") <(LC_ALL=C sort "$act/$f") | head -n "${SF_DIFF_LINES:-10}" | sed 's/^/      /'
        rc=1
      fi
    elif ! cmp -s "$exp/$f" "$act/$f"; then
      echo "    $(cmp "$exp/$f" "$act/$f" 2>&1 | head -n 1)"
      echo "    lines: $(wc -l <"$exp/$f") expected, $(wc -l <"$act/$f") actual"
      diff "$exp/$f" "$act/$f" | head -n "${SF_DIFF_LINES:-10}" | sed 's/^/      /'
      rc=1
    fi
  done <<<"$el"
  return $rc
}

# One report line per case, for the scripts that check many cases:
#   CASE  OK    WHAT
#   CASE  FAIL  WHAT (work dir $SF_WORK)
# CASE padded to $SF_CASE_WIDTH columns (default 14). SF_PASSED and SF_FAILED count the cases;
# sf_bad also prints the first 15 lines of each LOG that exists and keeps $SF_WORK (sf_keep).
SF_PASSED=0
SF_FAILED=0
sf_ok() { # CASE WHAT
  printf '%-*s OK    %s\n' "${SF_CASE_WIDTH:-14}" "$1" "$2"
  SF_PASSED=$((SF_PASSED + 1))
}
sf_bad() { # CASE WHAT [LOG...]
  local c=$1 what=$2 f
  shift 2
  local w=${SF_WORK:-${SF_TMPDIRS[0]:-}}
  printf '%-*s FAIL  %s (work dir %s)\n' "${SF_CASE_WIDTH:-14}" "$c" "$what" "$w"
  for f in "$@"; do
    [[ -f $f ]] || continue
    echo "    $(basename "$f"):"
    sed 's/^/    | /' "$f" | head -n 15
  done
  [[ -n $w ]] && sf_keep "$w"
  SF_FAILED=$((SF_FAILED + 1))
}

# Loopback ports for executors: each script takes fresh ones from a random base (or $SF_PORT_BASE),
# so parallel ctest runs do not collide. The ports lie below the kernel's ephemeral range, so that
# another test's outgoing connection cannot take one between the check and the executor's bind.
# sf_port_free PORT: no TCP socket, listening or not, has PORT as its local port (ss).
sf_port_free() { ! ss -Htan "sport = :$1" 2>/dev/null | grep -q .; }
# sf_next_ports N: sets P0 ... P(N-1) to the next N consecutive free ports (after the top of the
# range it goes on from its bottom); returns 1 with a message when 100 tries found none.
SF_PORT_LO=10000
SF_PORT_HI=$(($(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768) - 100))
((SF_PORT_HI < 20000)) && SF_PORT_HI=64000
SF_NEXT_PORT=${SF_PORT_BASE:-$((SF_PORT_LO + RANDOM % (SF_PORT_HI - SF_PORT_LO)))}
sf_next_ports() { # N
  local n=$1 tries=0 i free
  while :; do
    free=1
    for ((i = 0; i < n; i++)); do
      printf -v "P$i" '%s' $((SF_NEXT_PORT + i))
      sf_port_free $((SF_NEXT_PORT + i)) || free=0
    done
    SF_NEXT_PORT=$((SF_NEXT_PORT + n))
    ((SF_NEXT_PORT > SF_PORT_HI)) && SF_NEXT_PORT=$SF_PORT_LO
    ((free)) && return 0
    ((++tries > 100)) && { echo "error: no free ports found" >&2; return 1; }
  done
}
