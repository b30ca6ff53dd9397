#!/usr/bin/env bash
# tests/launch.sh BUILD_DIR SOURCE_DIR
#
# sf-launch (rt/launch/) as a supervisor: its signals in each state of a job, executors that never
# start or flood their output, and many executors. Stub executors (--exec STUB, a script that runs
# the real sf-exec only for --list-hosts) make the states exact; the last cases run sf-exec.
#   STATE-SIG for STATE in starting (the executors started, not yet up), running (both printed
#           "up"), draining (0.5 s after a SIGTERM, the executors taking 1.5 s to drain), failing
#           (h1 ended with status 3, h0 takes 1.5 s to stop: the moment between a failure and the
#           restart) and restarted (both up again after the restart), and SIG in INT, TERM (sent to
#           sf-launch alone): INT exits 130 with "interrupted; stopped every executor" and never
#           restarts; TERM drains (the stubs end 0 on SIGTERM) and exits 0, but during failing
#           exits 1 naming h1 ("exit status 3") without restarting; no stub is left.
#   never-starts: h1's executor hangs ignoring SIGINT (sleep), h0 is a real sf-exec waiting for it
#           (--connect-timeout 1000): exit 1 naming a host, h1 killed SF_LAUNCH_KILL_AFTER (1) s
#           after its SIGINT ("did not stop within 1 s of SIGINT; killed it"), within 15 s.
#   flood:  h0 prints lines as fast as it can (yes), h1 prints "hello" and one 200000-byte line
#           without a line end: every output line carries its host's prefix, "[h1] hello" is there,
#           h1's long line comes as 4 lines (cut at 65536 bytes), and a SIGINT after 2 s ends it
#           all (exit 130) within 5 s.
#   via-ssh: both hosts through --via ssh --ssh STAND-IN (it runs the command here): exit 0, the
#           output byte-identical to a one-process run, the token and TLS material on its stdin
#           only (none of its arguments holds them).
#   hosts14: graphs/twokeys.xml at width 14 on 14 loopback executors, with TLS: exit 0 and the
#           output byte-identical to a one-process run.
set -uo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
trap sf_stop_all EXIT
sf_need_bins "$build" sf-xform sf-exec sf-launch || exit 1
sf_mktemp SF_WORK sf-launch-test || exit 1
B=$build/bin
launch=$src/tools/sf-launch
SF_CASE_WIDTH=16
work=$SF_WORK

# wait_exit PID SECONDS: waits for PID to end (at most SECONDS); sets ST (124: still running)
wait_exit() {
  local pid=$1 i
  for ((i = 0; i < $2 * 20; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    ST=124
  else
    wait "$pid"
    ST=$?
  fi
}
# wait_for FILE PATTERN SECONDS: until a line of FILE matches PATTERN (grep -E); 1 when none came
wait_for() {
  local i
  for ((i = 0; i < $3 * 20; i++)); do
    grep -qE -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}
# left DIR: the stub processes of DIR still running
left() { pgrep -f -- "$1/stub" 2>/dev/null; }

# two hosts on loopback (the stubs never listen)
sf_hosts_graph "$work/seq.xml" launch 0 "" out.csv
sf_next_ports 2 || exit 1
"$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$work/seq.xml" -o "$work/g.xml" >"$work/xform.log" 2>&1 || {
  cat "$work/xform.log" >&2
  exit 1
}

# make_stub DIR MODE: DIR/stub. Every mode: SIGTERM ends it 0 (a drain), SIGINT 130; "up" printed
# once up. starting: never up. running: up at once. draining: up at once, a SIGTERM takes 1.5 s
# to end it. failing: h1 up, then exit 3 after 0.3 s
# (without --restore); h0 up, and on SIGINT takes 1.5 s to end; restarted: as failing, and up
# for good once started with --restore.
make_stub() {
  local dir=$1 mode=$2
  mkdir -p "$dir"
  cat >"$dir/stub" <<EOF
#!/usr/bin/env bash
[[ \$1 == --list-hosts ]] && exec "$B/sf-exec" "\$@"
for a in "\$@"; do [[ \$a == --remove-checkpoints ]] && exit 0; done
host=\$2 restore=0
for a in "\$@"; do [[ \$a == --restore ]] && restore=1; done
sleep 600 & s=\$!
trap 'kill \$s; exit 0' TERM
trap 'kill \$s; exit 130' INT
case $mode in
  starting) ;;
  running) echo up ;;
  draining) echo up; trap 'sleep 1.5; kill \$s; exit 0' TERM ;;
  failing|restarted)
    echo up
    if [[ \$restore == 0 && \$host == h1 ]]; then sleep 0.3; kill \$s; exit 3; fi
    if [[ \$restore == 0 && \$host == h0 ]]; then trap 'sleep 1.5; kill \$s; exit 130' INT; fi ;;
esac
while :; do wait \$s; kill -0 \$s 2>/dev/null || break; done
EOF
  chmod +x "$dir/stub"
}

# ---- signals in each state ----
for state in starting running draining failing restarted; do
  for sig in INT TERM; do
    c=$state-$sig
    d=$work/$c
    make_stub "$d" "$state"
    args=()
    [[ $state == failing || $state == restarted ]] && args=(--checkpoint-dir "$d/ck" --restart 2)
    (cd "$d" && exec setsid env --default-signal=INT,TERM bash "$launch" --insecure-plaintext --exec "$d/stub" \
      "${args[@]}" --workdir "$d" "$work/g.xml") >"$d/launch.log" 2>&1 &
    pid=$!
    SF_GROUPS+=("$pid")
    ready=0
    case $state in
      starting) sleep 0.5 && ready=1 ;;
      running) wait_for "$d/launch.log" '^\[h0\] up' 10 && wait_for "$d/launch.log" '^\[h1\] up' 10 && ready=1 ;;
      failing) wait_for "$d/launch.log" '^\[h1\] up' 10 && sleep 0.8 && ready=1 ;; # h1 ended, h0 stopping
      restarted) wait_for "$d/launch.log" 'restarted in' 10 && sleep 0.3 && ready=1 ;;
      draining) # SIGTERM first: both take 1.5 s to drain
        wait_for "$d/launch.log" '^\[h0\] up' 10 && wait_for "$d/launch.log" '^\[h1\] up' 10 && ready=1
        kill -TERM "$pid"
        sleep 0.5 ;;
    esac
    if ((!ready)); then
      sf_bad "$c" "the job never reached state $state" "$d/launch.log"
      continue
    fi
    kill -"$sig" "$pid"
    wait_exit "$pid" 10
    want=0 line=""
    case $sig-$state in
      INT-*) want=130 line="sf-launch: interrupted; stopped every executor" ;;
      TERM-failing) want=1 line="sf-launch: error: host 'h1' failed: exit status 3" ;;
    esac
    restarts=$(grep -c "restarting every executor" "$d/launch.log")
    want_restarts=0
    [[ $state == restarted ]] && want_restarts=1
    sleep 0.2
    if [[ $ST != "$want" ]]; then
      sf_bad "$c" "SIG$sig in state $state: exit status $ST, expected $want" "$d/launch.log"
    elif [[ -n $line ]] && ! grep -qxF -- "$line" "$d/launch.log"; then
      sf_bad "$c" "SIG$sig in state $state: no line '$line'" "$d/launch.log"
    elif [[ $restarts != "$want_restarts" ]]; then
      sf_bad "$c" "SIG$sig in state $state: $restarts restarts, expected $want_restarts" "$d/launch.log"
    elif [[ -n $(left "$d") ]]; then
      sf_bad "$c" "SIG$sig in state $state: executors left running: $(left "$d" | tr '\n' ' ')" "$d/launch.log"
      pkill -KILL -f -- "$d/stub"
    else
      sf_ok "$c" "SIG$sig while $state: exit $ST${line:+, '$line'}, $restarts restarts, no executor left"
    fi
  done
done

# ---- never-starts: h1 hangs and ignores SIGINT; h0 gives up on it ----
c=never-starts
d=$work/$c
mkdir -p "$d"
cat >"$d/stub" <<EOF
#!/usr/bin/env bash
[[ \$2 == h1 ]] && { trap '' INT; exec -a "sf-never-starts-$$" sleep 600; }
exec "$B/sf-exec" "\$@"
EOF
chmod +x "$d/stub"
t0=$(sf_now)
(cd "$d" && exec setsid env --default-signal=INT SF_LAUNCH_KILL_AFTER=1 bash "$launch" --insecure-plaintext \
  --connect-timeout 1000 --exec "$d/stub" --workdir "$d" "$work/g.xml") >"$d/launch.log" 2>&1 &
pid=$!
SF_GROUPS+=("$pid")
wait_exit "$pid" 15
t=$(sf_elapsed "$t0" "$(sf_now)")
if [[ $ST != 1 ]]; then
  sf_bad "$c" "exit status $ST, expected 1 (after ${t} s)" "$d/launch.log"
elif ! grep -qxF "sf-launch: host 'h1' did not stop within 1 s of SIGINT; killed it" "$d/launch.log"; then
  sf_bad "$c" "h1 was not killed 1 s after its SIGINT" "$d/launch.log"
elif ! grep -qE "^sf-launch: error: host 'h[01]' failed: " "$d/launch.log"; then
  sf_bad "$c" "no host named as failed" "$d/launch.log"
elif pgrep -f -- "^sf-never-starts-$$ " >/dev/null; then # (its own name: other tests sleep too)
  sf_bad "$c" "h1's executor still runs" "$d/launch.log"
else
  named=$(grep -oE "host 'h[01]' failed" "$d/launch.log")
  sf_ok "$c" "h1 never starts: exit 1 in ${t} s, h1 killed 1 s after SIGINT, $named"
fi

# ---- flood: one executor prints as fast as it can ----
c=flood
d=$work/$c
mkdir -p "$d"
cat >"$d/stub" <<EOF
#!/usr/bin/env bash
[[ \$1 == --list-hosts ]] && exec "$B/sf-exec" "\$@"
[[ \$2 == h0 ]] && exec yes 'flood flood flood'
echo hello
head -c 200000 /dev/zero | tr '\\0' x
exec sleep 600
EOF
chmod +x "$d/stub"
(cd "$d" && exec setsid env --default-signal=INT bash "$launch" --insecure-plaintext --exec "$d/stub" \
  --workdir "$d" "$work/g.xml" 2>"$d/launch.err" |
  awk '!/^\[h[01]\] /{bad++} /^\[h1\] hello$/{hello++} /^\[h1\] x/{long++}
       END{printf "%d %d %d %d\n", NR, bad, hello, long}' >"$d/count") &
sleep 2
lpid=$(pgrep -f -- "sf-launch --insecure-plaintext --exec $d/stub" | head -n 1)
t0=$(sf_now)
[[ -n $lpid ]] && kill -INT "$lpid"
for ((i = 0; i < 100; i++)); do [[ -s $d/count ]] && break; sleep 0.05; done
t=$(sf_elapsed "$t0" "$(sf_now)")
read -r lines bad hello long <"$d/count" 2>/dev/null || lines=""
if [[ -z $lpid ]]; then
  sf_bad "$c" "sf-launch was not running after 2 s" "$d/launch.err"
elif [[ -z $lines ]]; then
  sf_bad "$c" "sf-launch still ran 5 s after its SIGINT" "$d/launch.err"
  pkill -KILL -f -- "$d/stub"
elif ((bad != 0 || hello != 1 || long != 4 || lines < 1000)); then
  sf_bad "$c" "$lines lines, $bad without a host prefix, $hello '[h1] hello', $long of h1's long line (expected 4)" \
    "$d/launch.err"
elif ! grep -qxF "sf-launch: interrupted; stopped every executor" "$d/launch.err"; then
  sf_bad "$c" "no 'interrupted' line" "$d/launch.err"
else
  sf_ok "$c" "$lines lines in 2 s, every one prefixed, h1's long line cut in 4, SIGINT ended it in ${t} s"
fi

# ---- via-ssh: every host through --ssh (a stand-in running the command here), with TLS ----
c=via-ssh
d=$work/$c
mkdir -p "$d/seq" "$d/dist"
sf_hosts_graph "$d/seq.xml" viassh 3000 "" out.csv
sf_next_ports 2 || exit 1
"$B/sf-xform" --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1" "$d/seq.xml" -o "$d/g.xml" >"$d/xform.log" 2>&1
(cd "$d/seq" && "$B/sf-exec" "$d/seq.xml") >"$d/seq.log" 2>&1
cat >"$d/fake-ssh" <<EOF
#!/usr/bin/env bash
# fake-ssh ADDRESS COMMAND: COMMAND here, as ssh would run it there; the arguments kept
printf '%s\n' "\$@" >>"$d/ssh-args"
exec bash -c "\$2"
EOF
chmod +x "$d/fake-ssh"
(cd "$d" && timeout -k 5 60 bash "$launch" --via ssh --ssh "$d/fake-ssh" --exec "$B/sf-exec" --workdir "$d/dist" \
  "$d/g.xml") >"$d/launch.log" 2>&1
ST=$?
if [[ $ST != 0 ]]; then
  sf_bad "$c" "sf-launch --via ssh exited $ST, expected 0" "$d/launch.log"
elif ! cmp -s "$d/seq/out.csv" "$d/dist/out.csv"; then
  sf_bad "$c" "the output differs from the one-process run's" "$d/launch.log"
elif [[ $(grep -c "^127.0.0.1$" "$d/ssh-args") != 2 ]]; then
  sf_bad "$c" "the stand-in for ssh was not called once per host with the address" "$d/ssh-args"
elif grep -qE "BEGIN|PRIVATE|SF_TOKEN=" "$d/ssh-args"; then
  sf_bad "$c" "a secret on the command line of ssh" "$d/ssh-args"
else
  sf_ok "$c" "--via ssh on loopback with TLS: exit 0, the output identical, no secret on a command line"
fi

# ---- hosts14: 14 executors on loopback ----
c=hosts14
d=$work/$c
mkdir -p "$d/seq/out" "$d/dist/out"
cp -r "$src/graphs/data" "$d/seq/"
cp -r "$src/graphs/data" "$d/dist/"
sf_next_ports 14 || exit 1
spec=""
for ((i = 0; i < 14; i++)); do
  p=P$i
  spec+="${spec:+,}h$i=127.0.0.1:${!p}"
done
"$B/sf-xform" -w 14 --hosts "$spec" "$src/graphs/twokeys.xml" -o "$d/g.xml" >"$d/xform.log" 2>&1
(cd "$d/seq" && "$B/sf-exec" "$src/graphs/twokeys.xml") >"$d/seq.log" 2>&1
nh=$("$B/sf-exec" --list-hosts "$d/g.xml" | wc -l)
t0=$(sf_now)
(cd "$d" && timeout -k 5 120 bash "$launch" --exec "$B/sf-exec" --workdir "$d/dist" "$d/g.xml") >"$d/launch.log" 2>&1
ST=$?
t=$(sf_elapsed "$t0" "$(sf_now)")
if [[ $nh != 14 ]]; then
  sf_bad "$c" "the graph has $nh hosts, expected 14" "$d/xform.log"
elif [[ $ST != 0 ]]; then
  sf_bad "$c" "sf-launch exited $ST, expected 0" "$d/launch.log"
elif ! cmp -s "$d/seq/out/twokeys_sectors.csv" "$d/dist/out/twokeys_sectors.csv"; then
  sf_bad "$c" "the output differs from the one-process run's" "$d/launch.log"
else
  sf_ok "$c" "14 executors with TLS: exit 0 in ${t} s, output identical to the one-process run"
fi

echo "launch: $SF_PASSED passed, $SF_FAILED failed"
((SF_FAILED == 0))
