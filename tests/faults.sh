#!/usr/bin/env bash
# tests/faults.sh BUILD_DIR SOURCE_DIR
#
# Faults are reported, never hidden (docs/design.md, "Failure handling"). Two executors on loopback
# run a small graph: a rate-limited Beacon `src` on h0 feeds a Functor `calc` on h1, whose output
# goes back to a FileSink `out` on h0 (edges 'Ticks>calc/0' h0->h1 and 'Calced>out/0' h1->h0).
# Cases:
#   a1. sf-launch; the non-first host's sf-exec is killed (SIGKILL) mid-run: sf-launch exits 1
#       within 10 s with an error line naming host 'h1' (as the failed host, or in h0's reason
#       when h0 happened to be reaped first); h0 is gone too; no out/faults.csv, no temporary file;
#   a2. the same with the two executors started by hand: h0 itself fails within 10 s, naming
#       host 'h1' and one of the edges, and removes its temporary file;
#   a3. by hand, h0 (the sink's host) is killed: h1 fails within 10 s naming host 'h0';
#   b.  h0 alone with --connect-timeout 1500: exits 1 within 6 s naming 'h1' and its address;
#   c.  while a job runs (and before its sender connected), sf-probe presents a wrong token on a
#       real edge: refused with UNAUTHENTICATED, the executor logs it, the job completes with
#       output identical to a one-process run; with the right token on an edge that already has
#       its sender: ALREADY_EXISTS, job unaffected;
#   d.  raw TCP garbage (bash /dev/tcp) to both executors' ports during that job: job unaffected;
#       with the right token on an unknown edge id: refused at once with NOT_FOUND (within 2 s,
#       the probe's connect timeout being 5 s), job unaffected;
#       with h0 alone, sf-probe posing as h1 on the real edge 'Calced>out/0' sends
#         - bytes that are not protobuf,
#         - a message over the 16 MiB maximum,
#         - a protobuf Batch whose columns do not match the schema,
#         - a Batch naming another edge:
#       each time h0 exits 1 (not by a signal) within 10 s naming the edge, the probe is told why
#       (INVALID_ARGUMENT / RESOURCE_EXHAUSTED), and no output file, temporary or not, is left.
#   e.  a second h0 while the first listens: it exits 1 with exactly one line, sf-exec's own
#       "sf-exec: error: host 'h0': cannot listen on 127.0.0.1:P0: address already in use" (no
#       gRPC log line).
#   f.  impostors (openssl s_server, recording every byte it decrypts) listen on h1's port before
#       h1 starts, one with a certificate for h1 from another CA, one with the job's certificate
#       for h2; h0 (TLS) exits 1 within 10 s naming host 'h1', and the impostor decrypted nothing
#       (so neither the token nor a tuple); no output file is left. A control with h1's real
#       certificate decrypts the HTTP/2 preface, which shows the recording works.
#   g.  sf-exec --host h0 without TLS material exits 1 saying so (it never falls back to plain text);
#       with --insecure-plaintext on a graph whose hosts are not on loopback it exits 1 too.
#   h.  tools/sf-certs (every host's key and certificate made at once): each certificate verifies
#       against the job CA and names its host (CN and DNS name), the CA's key and openssl's logs are
#       gone; when openssl fails for one host (its key file is a directory) it exits 1 naming that
#       host with openssl's reason, and leaves no CA key.
#   i.  sf-exec --listen: h1 listening at 127.0.0.2 while the graph places it at 127.0.0.1 is not
#       reached (h0 exits 1 naming h1); at 0.0.0.0 it is (ss shows it there), and the output equals
#       the one-process run's; with --insecure-plaintext a --listen off loopback is refused.
#   k.  the checkpoints' control streams (--checkpoint-dir between hosts, rt/remote.c):
#       k1. three executors by hand, each running an unbounded Beacon into a FileSink of its own
#           (no data edge between hosts), h0 the coordinator (the first host with a source): once
#           a checkpoint after the first is complete h0 is killed (SIGKILL); h1 and h2 each
#           exit 1 within 10 s with an error naming the coordinator,
#           host 'h0' (with DIR/REQUEST polled they went on without checkpoints);
#       k3. the same three pipelines, bounded: the coordinator's ends first, then (another run)
#           last; every executor exits 0 with all its rows, the first to end while the last still
#           runs (none waits for another to finish);
#       k2. with the fault graph and --checkpoint-dir, h1 alone and sf-probe posing as its
#           coordinator h0 on '!ctl:h0>h1', or h0 alone and the probe posing as h1 on '!ctl:h1>h0',
#           sends bytes that are not protobuf, a well-formed message the peer may not send (a done
#           report to h1, a request to h0), a completion or a done report of a checkpoint never
#           requested, a done report of checkpoint 0: each time the executor exits 1 (not by a
#           signal) within 10 s naming the peer and why, and the probe is told INVALID_ARGUMENT; a
#           wrong token on '!ctl:h1>h0' is refused with UNAUTHENTICATED and h0 runs on.
# Every case prints one line, OK or FAIL with what was expected; failures keep the work directory.
#
#   d6. the probe sends a well-formed batch of one tuple and half-closes without the end-of-stream
#       punctuation: h0 exits 1 naming the edge ("ended before its end of stream") and the probe is
#       told INVALID_ARGUMENT, not OK (the receiving transport confirms an end of stream only once
#       its executor accepted it: transport_rx_confirm).
#   d7. the probe sends one 15 MB batch of 5 M pulses: h0 exits 1 naming the limit of items per
#       batch (2 x 1024 + 64 with the default --batch), the probe is told INVALID_ARGUMENT.
# The d cases half-close right after their message; SF_FAULTS_STRICT=1 adds a case that repeats
# that 10 times and requires the sender to be told of the rejection every time.
#
# Every executor and probe talks mutual TLS with certificates made by tools/sf-certs (as sf-launch
# does). Needs BUILD_DIR/bin/sf-probe (tests/tools/probe.c) and openssl. Environment: SF_KEEP=1 keeps the work dir.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec sf-probe || exit 1
launch=$src/tools/sf-launch
B=$build/bin

trap sf_stop_all EXIT
trap 'exit 130' INT TERM

sf_mktemp work sf-faults || exit 1

SF_WORK=$work
SF_CASE_WIDTH=4
t_start=$(sf_now)

# ---- ports and graphs ----


# make_graph DIR COUNT RATE: DIR/graph.xml (no hosts) and DIR/par.xml (two fresh loopback ports)
make_graph() {
  local dir=$1 count=$2 rate=$3
  mkdir -p "$dir/out"
  sf_hosts_graph "$dir/graph.xml" faults "$count" "$rate" out/faults.csv
  sf_next_ports 2 || exit 1
  bash "$src/tools/sf-certs" "$dir/tls" h0 h1 h2 || exit 1 # the job's CA; h2 is in no graph: an impostor's
  "$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$dir/graph.xml" -o "$dir/par.xml" >"$dir/xform.log" 2>&1 || {
    echo "error: sf-xform failed on the fault graph:" >&2
    cat "$dir/xform.log" >&2
    exit 1
  }
}

# ---- process helpers ----

# tls_env DIR HOST: exports the TLS identity of HOST from DIR (made by tools/sf-certs), as
# sf-launch hands it to an executor. Call it in a subshell.
tls_env() {
  export SF_TLS_CA SF_TLS_CERT SF_TLS_KEY
  SF_TLS_CA=$(cat "$1/ca.crt") && SF_TLS_CERT=$(cat "$1/$2.crt") && SF_TLS_KEY=$(cat "$1/$2.key")
}

# start_exec DIR HOST [ARGS...]: starts sf-exec --host HOST in DIR (log DIR/HOST.log); sets LAST_PID.
start_exec() {
  local dir=$1 host=$2
  shift 2
  (cd "$dir" && tls_env "$dir/tls" "$host" && exec "$B/sf-exec" --host "$host" "$@" "$dir/par.xml") >"$dir/$host.log" 2>&1 &
  LAST_PID=$!
}

# wait_exit PID SECONDS: waits for PID (a child of this shell) to end; sets ST to its exit status,
# or to "timeout" (and kills it). Not in a $(...) subshell: only this shell can wait for its children.
wait_exit() {
  local pid=$1 limit=$2 end
  end=$(awk -v n="$(sf_now)" -v l="$limit" 'BEGIN { printf "%.3f", n + l }')
  while kill -0 "$pid" 2>/dev/null; do
    if awk -v n="$(sf_now)" -v e="$end" 'BEGIN { exit !(n > e) }'; then
      kill -KILL -- "-$pid" 2>/dev/null
      kill -KILL "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      ST=timeout
      return
    fi
    sleep 0.05
  done
  wait "$pid" 2>/dev/null
  ST=$?
}

# wait_running PATTERN SECONDS: waits until pgrep -f PATTERN finds a process; prints its pids.
wait_running() {
  local pat=$1 limit=$2 i p
  for ((i = 0; i < limit * 20; i++)); do
    p=$(pgrep -f -- "$pat")
    [[ -n $p ]] && { echo "$p"; return 0; }
    sleep 0.05
  done
  return 1
}

# wait_output DIR SECONDS: waits until DIR/out holds a file (the sink's temporary file: h0 runs).
wait_output() {
  local i
  for ((i = 0; i < $2 * 20; i++)); do
    no_output "$1" || return 0
    sleep 0.05
  done
  return 1
}

# no_output DIR: true when DIR/out holds no file at all (no target, no temporary file)
no_output() { [[ -z $(find "$1/out" -mindepth 1 -print -quit 2>/dev/null) ]]; }
out_listing() { find "$1/out" -mindepth 1 -printf '%P '; }

status_ok_fail() { # STATUS: a clean failure is exit 1; a signal (>= 128) is a crash
  [[ $1 == 1 ]]
}

export SF_TOKEN
SF_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

# ---- a1: sf-launch, kill -9 the second host mid-run ----
d=$work/a1
make_graph "$d" 200000 20000 # ~10 s of data
(cd "$d" && exec setsid bash "$launch" --exec "$B/sf-exec" --workdir "$d" "$d/par.xml") >"$d/launch.log" 2>&1 &
lpid=$!
SF_GROUPS+=("$lpid")
if ! wait_running "sf-exec --host h0 .*$d/par.xml" 10 >/dev/null ||
  ! pid1=$(wait_running "sf-exec --host h1 .*$d/par.xml" 10 | head -n 1) || ! wait_output "$d" 10; then
  sf_bad a1 "the executors did not start (or no data flowed) within 10 s" "$d/launch.log"
else
  sleep 0.5
  t0=$(sf_now)
  kill -KILL "$pid1"
  wait_exit "$lpid" 10; st=$ST
  secs=$(sf_elapsed "$t0" "$(sf_now)")
  sleep 0.2
  left=$(pgrep -f -- "sf-exec --host .*$d/par.xml" | tr '\n' ' ')
  if [[ $st == timeout ]]; then
    sf_bad a1 "sf-launch still ran 10 s after h1 was killed" "$d/launch.log"
  elif [[ $st == 0 ]]; then
    sf_bad a1 "sf-launch exited 0 after h1 was killed" "$d/launch.log"
  elif ! grep "sf-launch: error: host 'h[01]'" "$d/launch.log" | grep -q "h1"; then
    # normally it names h1 (which died first); if it reaps h0 first, h0's reason must name h1
    sf_bad a1 "sf-launch exited $st but its error line does not name host 'h1'" "$d/launch.log"
  elif [[ -n $left ]]; then
    sf_bad a1 "executors still running after sf-launch exited: $left" "$d/launch.log"
  elif ! no_output "$d"; then
    sf_bad a1 "files left in out/: $(out_listing "$d")" "$d/launch.log"
  else
    sf_ok a1 "h1 killed: sf-launch exited $st after ${secs}s: $(grep "sf-launch: error" "$d/launch.log" | head -n 1)"
  fi
fi

# ---- a2: by hand, kill -9 h1: h0 notices on its own ----
d=$work/a2
make_graph "$d" 200000 20000
start_exec "$d" h0
p0=$LAST_PID
start_exec "$d" h1
p1=$LAST_PID
if ! wait_output "$d" 10; then
  sf_bad a2 "no data flowed within 10 s" "$d/h0.log" "$d/h1.log"
else
  sleep 0.5
  t0=$(sf_now)
  kill -KILL "$p1"
  wait "$p1" 2>/dev/null # reaps it quietly (no "Killed" line)
  wait_exit "$p0" 10; st=$ST
  secs=$(sf_elapsed "$t0" "$(sf_now)")
  if [[ $st == timeout ]]; then
    sf_bad a2 "h0 still ran 10 s after h1 was killed" "$d/h0.log"
  elif ! status_ok_fail "$st"; then
    sf_bad a2 "h0 exited $st (expected 1) after h1 was killed" "$d/h0.log"
  elif ! grep "error:" "$d/h0.log" | grep "host 'h1'" | grep -qE "Calced>out/0|Ticks>calc/0"; then
    sf_bad a2 "h0's error does not name host 'h1' and an edge" "$d/h0.log"
  elif ! no_output "$d"; then
    sf_bad a2 "files left in out/: $(out_listing "$d")" "$d/h0.log"
  else
    sf_ok a2 "h1 killed: h0 exited 1 after ${secs}s: $(grep error: "$d/h0.log" | head -n 1 | cut -c1-150)"
  fi
fi

# ---- a3: by hand, kill -9 h0 (the sink's host): h1 notices ----
d=$work/a3
make_graph "$d" 200000 20000
start_exec "$d" h0
p0=$LAST_PID
start_exec "$d" h1
p1=$LAST_PID
if ! wait_output "$d" 10; then
  sf_bad a3 "no data flowed within 10 s" "$d/h0.log" "$d/h1.log"
else
  sleep 0.5
  t0=$(sf_now)
  kill -KILL "$p0"
  wait "$p0" 2>/dev/null
  wait_exit "$p1" 10; st=$ST
  secs=$(sf_elapsed "$t0" "$(sf_now)")
  if [[ $st == timeout ]]; then
    sf_bad a3 "h1 still ran 10 s after h0 was killed" "$d/h1.log"
  elif ! status_ok_fail "$st"; then
    sf_bad a3 "h1 exited $st (expected 1) after h0 was killed" "$d/h1.log"
  elif ! grep "error:" "$d/h1.log" | grep "host 'h0'" | grep -qE "Calced>out/0|Ticks>calc/0"; then
    sf_bad a3 "h1's error does not name host 'h0' and an edge" "$d/h1.log"
  elif [[ -e $d/out/faults.csv ]]; then
    sf_bad a3 "out/faults.csv exists" "$d/h1.log"
  else
    # h0 died by SIGKILL: its temporary file (a dot file) necessarily stays; the target must not exist
    sf_ok a3 "h0 killed: h1 exited 1 after ${secs}s: $(grep error: "$d/h1.log" | head -n 1 | cut -c1-150)"
  fi
fi

# ---- b: a peer that never starts ----
d=$work/b
make_graph "$d" 1000 1000
t0=$(sf_now)
start_exec "$d" h0 --connect-timeout 1500
wait_exit "$LAST_PID" 6; st=$ST
secs=$(sf_elapsed "$t0" "$(sf_now)")
if [[ $st == timeout ]]; then
  sf_bad b "h0 still ran after 6 s (connect timeout 1.5 s)" "$d/h0.log"
elif ! status_ok_fail "$st"; then
  sf_bad b "h0 exited $st (expected 1)" "$d/h0.log"
elif ! grep "error:" "$d/h0.log" | grep -q "host 'h1' at 127.0.0.1:$P1"; then
  sf_bad b "h0's error does not name host 'h1' at 127.0.0.1:$P1" "$d/h0.log"
elif ! no_output "$d"; then
  sf_bad b "files left in out/: $(out_listing "$d")" "$d/h0.log"
else
  sf_ok b "h0 alone exited 1 after ${secs}s: $(grep error: "$d/h0.log" | head -n 1 | cut -c1-150)"
fi

# ---- c and d (during a job): wrong token, taken edge, unknown edge, raw TCP garbage ----
d=$work/c
make_graph "$d" 200000 20000 # ~10 s, time for every probe to knock while it runs (on a busy machine too)
mkdir -p "$d/seq/out"
(cd "$d/seq" && exec timeout -k 5 60 "$B/sf-exec" "$d/graph.xml") >"$d/seq.log" 2>&1 &
seq_pid=$!
start_exec "$d" h1
p1=$LAST_PID
sleep 0.3
probe() { # DIR NAME HOST ARGS...: sf-probe as HOST (its job certificate), output in DIR/probe-NAME.log; prints its status
  local dir=$1 name=$2 host=$3
  shift 3
  (tls_env "$dir/tls" "$host" && exec timeout -k 5 30 "$B/sf-probe" --as "$host" "$@") >"$dir/probe-$name.log" 2>&1
  echo $?
}
# c: before h0 (the real sender) connected: the edge is free, a wrong token must not take it
st=$(probe "$d" c-early h0 --token wrong --peer-name h1 --connect-timeout 3000 --text hello "127.0.0.1:$P1" 'Ticks>calc/0')
start_exec "$d" h0
p0=$LAST_PID
if [[ $st == 1 ]] && grep -q "failed: UNAUTHENTICATED" "$d/probe-c-early.log"; then
  sf_ok c "wrong token before the sender connected: $(cut -c1-150 "$d/probe-c-early.log" | head -n 1)"
else
  sf_bad c "wrong token before the sender connected: probe exited $st, expected 1 with UNAUTHENTICATED" "$d/probe-c-early.log"
fi
wait_output "$d" 10
sleep 0.3
st=$(probe "$d" c-during h0 --peer-name h1 --token wrong --connect-timeout 3000 --size 100 "127.0.0.1:$P1" 'Ticks>calc/0')
if [[ $st == 1 ]] && grep -q "failed: UNAUTHENTICATED" "$d/probe-c-during.log"; then
  sf_ok c "wrong token during the job: refused with UNAUTHENTICATED"
else
  sf_bad c "wrong token during the job: probe exited $st, expected 1 with UNAUTHENTICATED" "$d/probe-c-during.log"
fi
st=$(probe "$d" c-h0 h1 --peer-name h0 --token wrong --connect-timeout 3000 --hex ffff "127.0.0.1:$P0" 'Calced>out/0')
if [[ $st == 1 ]] && grep -q "failed: UNAUTHENTICATED" "$d/probe-c-h0.log"; then
  sf_ok c "wrong token to h0 during the job: refused with UNAUTHENTICATED"
else
  sf_bad c "wrong token to h0 during the job: probe exited $st, expected 1 with UNAUTHENTICATED" "$d/probe-c-h0.log"
fi
st=$(probe "$d" c-taken h0 --peer-name h1 --connect-timeout 3000 --hex ffffffff "127.0.0.1:$P1" 'Ticks>calc/0')
if [[ $st == 1 ]] && grep -q "failed: ALREADY_EXISTS" "$d/probe-c-taken.log"; then
  sf_ok c "right token on an edge that has its sender: refused with ALREADY_EXISTS"
else
  sf_bad c "right token on a taken edge: probe exited $st, expected 1 with ALREADY_EXISTS" "$d/probe-c-taken.log"
fi
# d: unknown edge id with the right token: never accepted, so nothing can be sent on it
t0=$(sf_now)
st=$(probe "$d" d-unknown h0 --peer-name h1 --connect-timeout 5000 --hex ffffffffff "127.0.0.1:$P1" 'Nope>nothing/7')
secs=$(sf_elapsed "$t0" "$(sf_now)")
if [[ $st == 1 ]] && grep -q "failed: NOT_FOUND: host 'h1' has no edge 'Nope>nothing/7'" "$d/probe-d-unknown.log" &&
  awk -v s="$secs" 'BEGIN { exit !(s < 2) }'; then
  sf_ok d "unknown edge id, right token: refused after ${secs}s: $(cut -c1-140 "$d/probe-d-unknown.log" | head -n 1)"
else
  sf_bad d "unknown edge id: probe exited $st after ${secs}s, expected 1 within 2 s with NOT_FOUND" "$d/probe-d-unknown.log"
fi
# d: raw TCP garbage to both ports
tcp_junk() { # PORT FILE: sends FILE's bytes on a fresh TCP connection, then closes it
  (exec 3<>"/dev/tcp/127.0.0.1/$1" && cat "$2" >&3 && sleep 0.1 && exec 3>&-) 2>/dev/null
}
head -c 65536 /dev/urandom >"$d/junk-random"
printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' >"$d/junk-http1"
{ printf 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'; head -c 4096 /dev/urandom; } >"$d/junk-h2"
printf 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00\xff\xff\xff\x01\x05\x00\x00\x00\x01' >"$d/junk-h2frames"
junk_sent=0
for port in "$P1" "$P0"; do
  for f in junk-random junk-http1 junk-h2 junk-h2frames; do
    tcp_junk "$port" "$d/$f" && junk_sent=$((junk_sent + 1))
  done
done
if [[ $junk_sent -ge 1 ]]; then
  sf_ok d "raw TCP garbage sent on $junk_sent connections to both executors"
else
  sf_bad d "could not connect to the executors' ports to send garbage"
fi
wait_exit "$p0" 30; st0=$ST
wait_exit "$p1" 30; st1=$ST
wait_exit "$seq_pid" 30; seq_st=$ST
if [[ $st0 != 0 || $st1 != 0 ]]; then
  sf_bad c/d "the job did not survive the probes: h0 exited $st0, h1 exited $st1" "$d/h0.log" "$d/h1.log"
elif [[ $seq_st != 0 ]]; then
  sf_bad c/d "the one-process run failed ($seq_st)" "$d/seq.log"
elif ! cmp -s "$d/seq/out/faults.csv" "$d/out/faults.csv"; then
  sf_bad c/d "the job's output differs from the one-process run: $(cmp "$d/seq/out/faults.csv" "$d/out/faults.csv" 2>&1)"
elif [[ $(find "$d/out" -mindepth 1 | wc -l) -ne 1 ]]; then
  sf_bad c/d "out/ holds more than out/faults.csv: $(out_listing "$d")"
elif ! grep -q "refused call for edge 'Ticks>calc/0' from .*UNAUTHENTICATED" "$d/h1.log"; then
  sf_bad c "h1 logged no line about the refused call" "$d/h1.log"
elif ! grep -q "refused call for edge 'Calced>out/0' from .*UNAUTHENTICATED" "$d/h0.log"; then
  sf_bad c "h0 logged no line about the refused call" "$d/h0.log"
else
  sf_ok c/d "the job completed with output identical to one process ($(($(wc -l <"$d/out/faults.csv") - 1)) rows); h1 logged: $(grep "from host 'h0'" "$d/h1.log" | grep -m1 UNAUTHENTICATED | cut -c1-140)"
fi

# ---- d: bad messages on a real edge, h0 alone, the probe posing as h1 ----
edge_hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
edge=$(edge_hex 'Calced>out/0')
other=$(edge_hex 'Ticks>out/0')
# Batch{edge, kinds=[TUPLE], seqs=[0], srcs=[0], ints=[1]}: one int where the schema has two
mismatch="0a0c${edge}120100""1a0100""220100""2a0102"
# Batch{edge, kinds=[TUPLE], seqs=[0], srcs=[0], ints=[1, 2]}: one good tuple, and no FINAL after it
one_tuple="0a0c${edge}120100""1a0100""220100""2a020204"
wrong_edge="0a0b${other}120100""1a0100""220100""2a020202"

bad_message() { # CASE LABEL EXPECT_PROBE EXPECT_EXEC PROBE_ARGS...
  local c=$1 label=$2 want_probe=$3 want_exec=$4
  shift 4
  local dd=$work/$c st pst secs t0
  make_graph "$dd" 200000 20000
  start_exec "$dd" h0
  local pid=$LAST_PID
  sleep 0.2
  t0=$(sf_now)
  pst=$(probe "$dd" x h1 --peer-name h0 --connect-timeout 5000 "$@" "127.0.0.1:$P0" 'Calced>out/0')
  wait_exit "$pid" 10; st=$ST
  secs=$(sf_elapsed "$t0" "$(sf_now)")
  if [[ $st == timeout ]]; then
    sf_bad d "$label: h0 still ran 10 s later" "$dd/h0.log" "$dd/probe-x.log"
  elif ! status_ok_fail "$st"; then
    sf_bad d "$label: h0 exited $st (expected 1; >= 128 is a crash)" "$dd/h0.log" "$dd/probe-x.log"
  elif ! grep "error:" "$dd/h0.log" | grep "edge 'Calced>out/0'" | grep -q "$want_exec"; then
    sf_bad d "$label: h0's error does not name edge 'Calced>out/0' with '$want_exec'" "$dd/h0.log"
  elif [[ $pst != 1 ]] || ! grep -q "$want_probe" "$dd/probe-x.log"; then
    sf_bad d "$label: the probe exited $pst, expected 1 with '$want_probe'" "$dd/probe-x.log" "$dd/h0.log"
  elif ! no_output "$dd"; then
    sf_bad d "$label: files left in out/: $(out_listing "$dd")" "$dd/h0.log"
  else
    sf_ok d "$label: h0 exited 1 after ${secs}s: $(grep error: "$dd/h0.log" | head -n 1 | cut -c1-130)"
  fi
}

bad_message d1 "not protobuf" "INVALID_ARGUMENT: malformed batch" "bad message: malformed batch" --hex ffffffff
bad_message d2 "16 MiB + 1 byte" "RESOURCE_EXHAUSTED" "broke" --size $((16 * 1024 * 1024 + 1))
bad_message d3 "columns not matching the schema" "INVALID_ARGUMENT: malformed batch: columns" \
  "bad message: malformed batch: columns" --hex "$mismatch"
bad_message d4 "batch naming another edge" "INVALID_ARGUMENT: batch for edge 'Ticks>out/0'" \
  "bad message: batch for edge 'Ticks>out/0' arrived on edge 'Calced>out/0'" --hex "$wrong_edge"
bad_message d6 "a stream ended without its final punctuation" \
  "INVALID_ARGUMENT: the stream ended before its end-of-stream punctuation" \
  "from host 'h1' ended before its end of stream" --hex "$one_tuple"
# Batch{edge, kinds=[PULSE x 5000000], seqs=[0 x 5000000], srcs=[0 x 5000000]}, each column packed
pulse_batch=$work/pulses.bin
{
  printf '\x0a\x0c%s' 'Calced>out/0'
  for f in '\x12' '\x1a' '\x22'; do
    printf "$f"'\xc0\x96\xb1\x02' # varint 5000000
    if [[ $f == '\x12' ]]; then head -c 5000000 /dev/zero | tr '\0' '\1'; else head -c 5000000 /dev/zero; fi
  done
} >"$pulse_batch"
bad_message d7 "one batch of 5 M pulses" "INVALID_ARGUMENT: batch of 5000000 items exceeds the limit of 2112" \
  "bad message: batch of 5000000 items exceeds the limit of 2112 items per batch" --file "$pulse_batch"

# ---- k: the checkpoints' control streams ----
# three_pipelines DIR COUNT_A COUNT_B COUNT_C: DIR/par.xml, on h0, h1 and h2 (three fresh loopback
# ports) each a Beacon of that many tuples (0: unbounded) at 20,000 a second into a FileSink of its
# own, out/a.csv, b.csv, c.csv: no data edge between hosts. h0 coordinates the checkpoints.
three_pipelines() {
  local dir=$1 NA=$2 NB=$3 NC=$4
  mkdir -p "$dir/out"
  sf_next_ports 3 || exit 1
  cat >"$dir/graph.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="faults_ctl">
  <schema name="T">
    <attr name="id" type="int"/>
    <attr name="v"  type="int"/>
  </schema>
  <operator name="a" kind="Beacon" host="h0">
    <output stream="As" schema="T"/>
    <param name="count">$NA</param>
    <param name="rate">20000</param>
    <set attr="id">seq</set>
    <set attr="v">rand(seq) % 1000</set>
  </operator>
  <operator name="outa" kind="FileSink" host="h0">
    <input stream="As"/>
    <param name="file">out/a.csv</param>
  </operator>
  <operator name="b" kind="Beacon" host="h1">
    <output stream="Bs" schema="T"/>
    <param name="count">$NB</param>
    <param name="rate">20000</param>
    <set attr="id">seq</set>
    <set attr="v">rand(seq) % 1000</set>
  </operator>
  <operator name="outb" kind="FileSink" host="h1">
    <input stream="Bs"/>
    <param name="file">out/b.csv</param>
  </operator>
  <operator name="c" kind="Beacon" host="h2">
    <output stream="Cs" schema="T"/>
    <param name="count">$NC</param>
    <param name="rate">20000</param>
    <set attr="id">seq</set>
    <set attr="v">rand(seq) % 1000</set>
  </operator>
  <operator name="outc" kind="FileSink" host="h2">
    <input stream="Cs"/>
    <param name="file">out/c.csv</param>
  </operator>
</graph>
EOF
  bash "$src/tools/sf-certs" "$dir/tls" h0 h1 h2 || exit 1
  "$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" "$dir/graph.xml" -o "$dir/par.xml" \
    >"$dir/xform.log" 2>&1 || { echo "error: sf-xform failed:" >&2; cat "$dir/xform.log" >&2; exit 1; }
}

# k1: the coordinator h0 is lost; h1 and h2 have no data edge to it
d=$work/k1
three_pipelines "$d" 0 0 0
ck_args=(--checkpoint-dir "$d/ck" --checkpoint-interval 0.2)
start_exec "$d" h0 "${ck_args[@]}"; p0=$LAST_PID
start_exec "$d" h1 "${ck_args[@]}"; p1=$LAST_PID
start_exec "$d" h2 "${ck_args[@]}"; p2=$LAST_PID
# a complete checkpoint other than the first (the two newest stay, so checkpoint 2 may be gone)
ckpt_past_1() { find "$d/ck" -path '*/ckpt-*/MANIFEST' ! -path '*/ckpt-1/*' 2>/dev/null | grep -q .; }
for _ in $(seq 200); do ckpt_past_1 && break; sleep 0.05; done
if ! ckpt_past_1; then
  sf_bad k1 "no checkpoint after the first completed within 10 s" "$d/h0.log" "$d/h1.log" "$d/h2.log"
  kill -KILL "$p0" "$p1" "$p2" 2>/dev/null
  wait "$p0" "$p1" "$p2" 2>/dev/null
else
  kill -KILL "$p0" 2>/dev/null
  wait "$p0" 2>/dev/null
  t0=$(sf_now)
  wait_exit "$p1" 10; st1=$ST
  wait_exit "$p2" 10; st2=$ST
  secs=$(sf_elapsed "$t0" "$(sf_now)")
  want="lost the checkpoints' coordinator, host 'h0'"
  if [[ $st1 != 1 || $st2 != 1 ]]; then
    sf_bad k1 "coordinator killed: h1 exited $st1, h2 exited $st2 (expected 1 and 1 within 10 s)" "$d/h1.log" "$d/h2.log"
  elif ! grep "error:" "$d/h1.log" | grep -q "$want" || ! grep "error:" "$d/h2.log" | grep -q "$want"; then
    sf_bad k1 "coordinator killed: an error does not say '$want'" "$d/h1.log" "$d/h2.log"
  else
    sf_ok k1 "coordinator killed: h1 and h2 exited 1 after ${secs}s: $(grep error: "$d/h1.log" | head -n 1 | cut -c1-140)"
  fi
fi

# k3: each executor ends on its own: the coordinator first (h0: 4,000 tuples, h1 20,000, h2 10,000),
# then the coordinator last (h0: 20,000, h1 4,000, h2 10,000): every one exits 0 with its rows, and
# the first to end does so while the last still runs (no executor waits for another to finish)
declare -A pid
for order in first last; do
  d=$work/k3-$order
  if [[ $order == first ]]; then three_pipelines "$d" 4000 20000 10000; short=h0 long=h1
  else three_pipelines "$d" 20000 4000 10000; short=h1 long=h0; fi
  for h in h0 h1 h2; do
    start_exec "$d" "$h" --checkpoint-dir "$d/ck" --checkpoint-interval 0.2
    pid[$h]=$LAST_PID
  done
  wait_exit "${pid[$short]}" 10; st_short=$ST
  kill -0 "${pid[$long]}" 2>/dev/null && long_ran=1 || long_ran=0
  sts=()
  for h in h0 h1 h2; do
    [[ $h == "$short" ]] && { sts+=("$st_short"); continue; }
    wait_exit "${pid[$h]}" 10; sts+=("$ST")
  done
  rows=$(for f in a b c; do echo $(($(wc -l <"$d/out/$f.csv" 2>/dev/null || echo 1) - 1)); done | tr '\n' ' ')
  if [[ ${sts[*]} != "0 0 0" ]]; then
    sf_bad k3 "coordinator $order: exit statuses ${sts[*]} (expected 0 0 0)" "$d/h0.log" "$d/h1.log" "$d/h2.log"
  elif [[ $rows != "$( [[ $order == first ]] && echo "4000 20000 10000 " || echo "20000 4000 10000 ")" ]]; then
    sf_bad k3 "coordinator $order: rows $rows" "$d/h0.log" "$d/h1.log" "$d/h2.log"
  elif ((!long_ran)); then
    sf_bad k3 "coordinator $order: $long had ended when $short did (it should run on 0.8 s longer)"
  else
    sf_ok k3 "coordinator $order: $short ended while $long ran on; all exited 0 with their rows ($rows)"
  fi
done

# k2: hostile control messages. ctl_message LABEL HOST EXPECT_PROBE EXPECT_EXEC PROBE_ARGS...: HOST
# alone (with checkpoints), the probe posing as the other host on the control stream to HOST
K2=0
ctl_message() {
  local label=$1 host=$2 want_probe=$3 want_exec=$4
  shift 4
  local dd=$work/k2-$((++K2)) st pst secs t0 other=h1 port
  make_graph "$dd" 200000 20000
  port=$P0
  if [[ $host == h1 ]]; then other=h0; port=$P1; fi
  start_exec "$dd" "$host" --checkpoint-dir "$dd/ck" --checkpoint-interval 0.2
  local pid=$LAST_PID
  sleep 0.2
  t0=$(sf_now)
  pst=$(probe "$dd" x "$other" --peer-name "$host" --connect-timeout 5000 "$@" "127.0.0.1:$port" "!ctl:$other>$host")
  wait_exit "$pid" 10; st=$ST
  secs=$(sf_elapsed "$t0" "$(sf_now)")
  if [[ $st == timeout ]]; then
    sf_bad k2 "$label: $host still ran 10 s later" "$dd/$host.log" "$dd/probe-x.log"
  elif ! status_ok_fail "$st"; then
    sf_bad k2 "$label: $host exited $st (expected 1; >= 128 is a crash)" "$dd/$host.log" "$dd/probe-x.log"
  elif ! grep "error:" "$dd/$host.log" | grep -F "host '$other' sent a bad control message on '!ctl:$other>$host'" |
      grep -qF "$want_exec"; then
    sf_bad k2 "$label: $host's error does not name host '$other' with '$want_exec'" "$dd/$host.log"
  elif [[ $pst != 1 ]] || ! grep -qF "$want_probe" "$dd/probe-x.log"; then
    sf_bad k2 "$label: the probe exited $pst, expected 1 with '$want_probe'" "$dd/probe-x.log" "$dd/$host.log"
  else
    sf_ok k2 "$label: $host exited 1 after ${secs}s: $(grep error: "$dd/$host.log" | head -n 1 | cut -c1-150)"
  fi
}
# Control{kind, checkpoint, position}: fields 1 (08), 2 (10) and 3 (18), each a varint
ctl_message "not protobuf, to h1" h1 "INVALID_ARGUMENT: malformed control message" \
  "malformed control message (4 bytes that are not a protobuf Control)" --hex ffffffff
ctl_message "a done report, to h1" h1 "INVALID_ARGUMENT: a checkpoint's done report" \
  "a checkpoint's done report, which only the coordinator hears" --hex 08021001
ctl_message "a completion never requested, to h1" h1 "INVALID_ARGUMENT: the completion of checkpoint 3" \
  "the completion of checkpoint 3, which was not requested" --hex 08031003
ctl_message "a request, to the coordinator h0" h0 "INVALID_ARGUMENT: a checkpoint request" \
  "a checkpoint request, which only the coordinator sends" --hex 080110011805
ctl_message "done with a checkpoint never requested, to h0" h0 "INVALID_ARGUMENT: done with checkpoint 1000" \
  "done with checkpoint 1000, which was not requested (the latest request is " --hex 080210e807
ctl_message "checkpoint 0, to h0" h0 "INVALID_ARGUMENT: malformed control message" \
  "malformed control message: done of checkpoint 0" --hex 0802
# a wrong token on the control stream: refused, the coordinator runs on
d=$work/k2-token
make_graph "$d" 200000 20000
start_exec "$d" h0 --checkpoint-dir "$d/ck" --checkpoint-interval 0.2
p0=$LAST_PID
sleep 0.2
st=$(probe "$d" x h1 --peer-name h0 --token wrong --connect-timeout 3000 --hex 08021001 "127.0.0.1:$P0" '!ctl:h1>h0')
sleep 0.3
if [[ $st == 1 ]] && grep -q "failed: UNAUTHENTICATED" "$d/probe-x.log" && kill -0 "$p0" 2>/dev/null; then
  sf_ok k2 "wrong token on '!ctl:h1>h0': refused with UNAUTHENTICATED, h0 runs on"
else
  sf_bad k2 "wrong token on '!ctl:h1>h0': probe exited $st (expected 1 with UNAUTHENTICATED), h0 must run on" \
    "$d/probe-x.log" "$d/h0.log"
fi
kill -KILL "$p0" 2>/dev/null
wait "$p0" 2>/dev/null

# ---- e: the port is taken ----
d=$work/e
make_graph "$d" 100000 20000
start_exec "$d" h0
p0=$LAST_PID
for _ in $(seq 200); do sf_port_free "$P0" || break; sleep 0.05; done
(cd "$d" && tls_env "$d/tls" h0 && exec timeout -k 5 30 "$B/sf-exec" --host h0 "$d/par.xml") >"$d/second.log" 2>&1
st=$?
kill -KILL "$p0" 2>/dev/null
wait "$p0" 2>/dev/null
want="sf-exec: error: host 'h0': cannot listen on 127.0.0.1:$P0: address already in use"
if [[ $st != 1 ]]; then
  sf_bad e "the second h0 exited $st (expected 1)" "$d/second.log"
elif [[ $(cat "$d/second.log") != "$want" ]]; then
  sf_bad e "the second h0 did not print exactly: $want" "$d/second.log"
else
  sf_ok e "port taken: $want"
fi

# ---- f: impostors on h1's port ----
d=$work/f
make_graph "$d" 100000 20000
bash "$src/tools/sf-certs" "$d/other" h1 || exit 1
# impostor CERT_BASE: serves TLS on P1 with CERT_BASE.crt/.key, decrypted bytes into $d/impostor.out
impostor() {
  (sleep 30 | exec openssl s_server -accept "127.0.0.1:$P1" -cert "$1.crt" -key "$1.key" -alpn h2 -quiet) \
    >"$d/impostor.out" 2>"$d/impostor.err" &
  IMPOSTOR=$!
  for _ in $(seq 100); do sf_port_free "$P1" || return 0; sleep 0.05; done
  return 1
}
stop_impostor() { pkill -P "$IMPOSTOR" 2>/dev/null; kill "$IMPOSTOR" 2>/dev/null; wait "$IMPOSTOR" 2>/dev/null; }
for variant in "another CA:$d/other/h1" "h2's job certificate:$d/tls/h2"; do
  label=${variant%%:*}
  rm -f "$d/out/"* "$d/out/".[!.]* 2>/dev/null
  if ! impostor "${variant#*:}"; then
    sf_bad f "impostor with $label: openssl s_server did not listen" "$d/impostor.err"
    continue
  fi
  t0=$(sf_now)
  start_exec "$d" h0 --connect-timeout 3000
  wait_exit "$LAST_PID" 10; st=$ST
  secs=$(sf_elapsed "$t0" "$(sf_now)")
  stop_impostor
  if [[ $st != 1 ]]; then
    sf_bad f "impostor with $label: h0 exited $st (expected 1)" "$d/h0.log"
  elif ! grep "error:" "$d/h0.log" | grep -q "cannot reach host 'h1' at 127.0.0.1:$P1"; then
    sf_bad f "impostor with $label: h0's error does not name host 'h1' at 127.0.0.1:$P1" "$d/h0.log"
  elif [[ -s $d/impostor.out ]] || grep -aq "$SF_TOKEN" "$d/impostor.out"; then
    sf_bad f "impostor with $label decrypted $(wc -c <"$d/impostor.out") bytes" "$d/impostor.out"
  elif ! no_output "$d"; then
    sf_bad f "impostor with $label: files left in out/: $(out_listing "$d")" "$d/h0.log"
  else
    sf_ok f "impostor with $label: got nothing; h0 exited 1 after ${secs}s: $(grep error: "$d/h0.log" | head -n 1 | cut -c1-110)"
  fi
done
if impostor "$d/tls/h1"; then # the control: the real certificate
  start_exec "$d" h0 --connect-timeout 1500
  wait_exit "$LAST_PID" 10
  stop_impostor
  if grep -aq "PRI \* HTTP/2.0" "$d/impostor.out"; then
    sf_ok f "control: with h1's real certificate the listener decrypted the HTTP/2 preface"
  else
    sf_bad f "control: with h1's real certificate the listener decrypted nothing: the recording does not work" "$d/impostor.err"
  fi
else
  sf_bad f "control: openssl s_server did not listen" "$d/impostor.err"
fi

# ---- g: TLS is not optional ----
d=$work/g
make_graph "$d" 1000 1000
(cd "$d" && exec timeout -k 5 30 "$B/sf-exec" --host h0 "$d/par.xml") >"$d/none.log" 2>&1
st=$?
want="sf-exec: error: no TLS credentials: set SF_TLS_CA, SF_TLS_CERT and SF_TLS_KEY (tools/sf-launch does this; tools/sf-certs makes them), or pass --insecure-plaintext on loopback"
if [[ $st == 1 && $(cat "$d/none.log") == "$want" ]]; then
  sf_ok g "no TLS material: refused to start"
else
  sf_bad g "no TLS material: exited $st, expected 1 and exactly: $want" "$d/none.log"
fi
"$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=192.0.2.7:$P1" "$d/graph.xml" -o "$d/far.xml" >"$d/xform2.log" 2>&1
(cd "$d" && exec timeout -k 5 30 "$B/sf-exec" --host h0 --insecure-plaintext "$d/far.xml") >"$d/far.log" 2>&1
st=$?
want="sf-exec: error: --insecure-plaintext is for loopback addresses only, and host 'h1' is at 192.0.2.7:$P1"
if [[ $st == 1 && $(cat "$d/far.log") == "$want" ]]; then
  sf_ok g "--insecure-plaintext with a host off loopback: refused"
else
  sf_bad g "--insecure-plaintext off loopback: exited $st, expected 1 and exactly: $want" "$d/far.log" "$d/xform2.log"
fi

# ---- h: sf-certs ----
d=$work/h
bash "$src/tools/sf-certs" "$d/ok" h0 h1 x_2 2>"$d.err" || sf_bad h "sf-certs h0 h1 x_2 failed" "$d.err"
bad=""
for h in h0 h1 x_2; do
  openssl verify -CAfile "$d/ok/ca.crt" "$d/ok/$h.crt" >/dev/null 2>&1 || bad="$bad $h:verify"
  openssl x509 -in "$d/ok/$h.crt" -noout -subject -ext subjectAltName 2>/dev/null | tr -d ' ' |
    grep -q "^subject=CN=$h\$" || bad="$bad $h:CN"
  openssl x509 -in "$d/ok/$h.crt" -noout -ext subjectAltName 2>/dev/null | grep -q "DNS:$h\$" || bad="$bad $h:DNS"
  [[ -s $d/ok/$h.key ]] || bad="$bad $h:key"
done
left=$(cd "$d/ok" && ls -A | grep -vxE '(h0|h1|x_2)\.(crt|key)|ca\.crt' | tr '\n' ' ')
if [[ -z $bad && -z $left ]]; then
  sf_ok h "sf-certs: three certificates from the job CA, each naming its host, nothing else left"
else
  sf_bad h "sf-certs: wrong certificates ($bad) or files left ($left)" "$d.err"
fi
mkdir -p "$d/fail/h1.key"
bash "$src/tools/sf-certs" "$d/fail" h0 h1 2>"$d/fail.err"
st=$?
if [[ $st == 1 ]] && grep -q "^sf-certs: error: openssl failed: the certificate of 'h1'\$" "$d/fail.err" &&
   grep -q "h1.key" "$d/fail.err" && [[ ! -e $d/fail/ca.key ]]; then
  sf_ok h "sf-certs: openssl failing for h1 is reported, exit 1, no CA key left"
else
  sf_bad h "sf-certs with h1.key a directory: exited $st, expected 1 naming 'h1' and no ca.key left" "$d/fail.err"
fi

# ---- i: --listen ----
d=$work/i
make_graph "$d" 20000 20000
(cd "$d" && mkdir -p seq/out && cd seq && exec "$B/sf-exec" "$d/graph.xml") >"$d/seq.log" 2>&1
start_exec "$d" h1 --listen "127.0.0.2:$P1" --connect-timeout 1500
p1=$LAST_PID
start_exec "$d" h0 --connect-timeout 1500
p0=$LAST_PID
wait_exit "$p0" 10; st0=$ST
wait_exit "$p1" 10; st1=$ST
if [[ $st0 == 1 ]] && grep -q "host 'h1'" "$d/h0.log"; then
  sf_ok i "h1 --listen 127.0.0.2:P1 while the graph says 127.0.0.1:P1: h0 cannot reach it (exit 1, names h1)"
else
  sf_bad i "h1 --listen elsewhere: h0 exited $st0 (h1 $st1), expected 1 naming host 'h1'" "$d/h0.log" "$d/h1.log"
fi
rm -rf "$d/out" && mkdir -p "$d/out"
start_exec "$d" h1 --listen "0.0.0.0:$P1"
p1=$LAST_PID
start_exec "$d" h0
p0=$LAST_PID
seen=""
for _ in $(seq 100); do
  seen=$(ss -Hltn "sport = :$P1" 2>/dev/null | awk '{print $4}' | head -n 1)
  [[ -n $seen ]] && break
  sleep 0.05
done
wait_exit "$p0" 30; st0=$ST
wait_exit "$p1" 30; st1=$ST
if [[ $st0 != 0 || $st1 != 0 ]]; then
  sf_bad i "h1 --listen 0.0.0.0:P1: h0 exited $st0, h1 exited $st1" "$d/h0.log" "$d/h1.log"
elif [[ $seen != "0.0.0.0:$P1" && $seen != "*:$P1" ]]; then
  sf_bad i "h1 --listen 0.0.0.0:P1: it listened at '$seen'"
elif ! cmp -s "$d/seq/out/faults.csv" "$d/out/faults.csv"; then
  sf_bad i "h1 --listen 0.0.0.0:P1: the output differs from the one-process run"
else
  sf_ok i "h1 --listen 0.0.0.0:P1 (seen listening at $seen): the output equals the one-process run's"
fi
(cd "$d" && exec "$B/sf-exec" --host h1 --insecure-plaintext --listen "0.0.0.0:$P1" "$d/par.xml") >"$d/plain.log" 2>&1
st=$?
want="sf-exec: error: --insecure-plaintext is for loopback addresses only, and --listen is 0.0.0.0:$P1"
if [[ $st == 1 && $(cat "$d/plain.log") == "$want" ]]; then
  sf_ok i "--insecure-plaintext with --listen off loopback: refused"
else
  sf_bad i "--insecure-plaintext with --listen 0.0.0.0: exited $st, expected 1 and exactly: $want" "$d/plain.log"
fi

if [[ ${SF_FAULTS_STRICT:-0} == 1 ]]; then
  told_ok=0
  for i in 1 2 3 4 5 6 7 8 9 10; do
    dd=$work/strict$i
    make_graph "$dd" 200000 20000
    start_exec "$dd" h0
    pid=$LAST_PID
    for _ in $(seq 100); do sf_port_free "$P0" || break; sleep 0.02; done # h0 listens
    sleep 0.1
    pst=$(probe "$dd" x h1 --peer-name h0 --connect-timeout 5000 --hex ffffffff "127.0.0.1:$P0" 'Calced>out/0')
    wait_exit "$pid" 10
    [[ $pst == 0 ]] && told_ok=$((told_ok + 1))
  done
  if [[ $told_ok -eq 0 ]]; then
    sf_ok d5 "malformed message then an immediate half-close: the sender was told of the rejection 10 times of 10"
  else
    sf_bad d5 "malformed message then an immediate half-close: the sender was told OK $told_ok times of 10 (the receiver rejected the message every time)"
  fi
fi

total=$(sf_elapsed "$t_start" "$(sf_now)")
echo "faults: $SF_PASSED passed, $SF_FAILED failed, ${total}s"
[[ $SF_FAILED -eq 0 ]]
