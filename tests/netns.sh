#!/usr/bin/env bash
# tests/netns.sh BUILD_DIR SOURCE_DIR
#
# Real test hosts: three network namespaces (names unique to this run), each with lo up and one end
# of a veth pair whose other end is enslaved to a bridge in the root namespace, addressed
# 10.213.N.1, .2, .3/24 (N random, avoiding subnets already on this machine). Connectivity is
# checked without ping: a TCP connection to a closed port on each other address must be refused
# (a RST came back) rather than time out.
#
# Then, for graphs/vwap.xml and graphs/twokeys.xml (a shuffle):
#     sf-xform -w 3 --hosts h0=10.213.N.1:7000,h1=10.213.N.2:7000,h2=10.213.N.3:7000 GRAPH
# runs through `tools/sf-launch --ssh WRAPPER`, WRAPPER being a script generated here that maps an
# address to its namespace and runs `ip netns exec NS bash -c "$2"` (the job token and each host's
# TLS certificate and key pass through on its standard input: the executors talk mutual TLS across
# the bridge), and the output must be byte-identical to a one-process run.
#
# Last, a silent partition: a job whose Beacon is rate-limited (src on h0 -> calc on h1 -> sink on
# h0) runs through sf-launch, and mid-run h1's veth is set down on the bridge side (no RST, no FIN:
# the packets just vanish). sf-launch must exit non-zero within SF_PARTITION_LIMIT seconds (default
# 40; the executors' keepalive is 10 s, a peer is declared dead one interval later) naming a host,
# and no output file may be left. SF_PARTITION=0 skips this case.
#
# Then the same cut survived: a job with checkpoints every 0.2 s and sf-launch --restart 2, h1's link
# cut once a checkpoint is complete and mended once sf-launch says it restarts every executor: exit
# 0 and the output byte-identical to the one-process run's.
#
# Namespaces, veths and the bridge are removed at exit, on failure too (trap). Without the
# privilege to create a namespace it prints "SKIP: ..." and exits 77.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
source "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec || exit 1
launch=$src/tools/sf-launch
B=$build/bin

PATH=$PATH:/usr/sbin:/sbin
command -v ip >/dev/null 2>&1 || { echo "SKIP: no 'ip' command (iproute2)"; exit 77; }

tag=$(printf '%04x' $((RANDOM % 65536)))
ns=("sfns${tag}a" "sfns${tag}b" "sfns${tag}c")
br=sfbr$tag
veth_root=("sfv${tag}r0" "sfv${tag}r1" "sfv${tag}r2")
veth_ns=("sfv${tag}n0" "sfv${tag}n1" "sfv${tag}n2")
created_ns=()
created_links=()
LAUNCH_GROUPS=()

cleanup() {
  local n p l
  for p in "${LAUNCH_GROUPS[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  for n in "${created_ns[@]}"; do
    # only processes inside our own namespaces: the executors this test started
    for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  done
  wait 2>/dev/null
  for n in "${created_ns[@]}"; do ip netns del "$n" 2>/dev/null; done
  for l in "${created_links[@]}"; do ip link del "$l" 2>/dev/null; done
  sf_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! ip netns add "${ns[0]}" 2>/dev/null; then
  echo "SKIP: cannot create a network namespace ('ip netns add' failed: not root, or no CAP_SYS_ADMIN)"
  exit 77
fi
created_ns+=("${ns[0]}")

# a /24 in 10.213.0.0/16 that nothing on this machine uses
for _ in $(seq 50); do
  N=$((1 + RANDOM % 254))
  ip -o addr show | grep -q " 10\.213\.$N\." || break
done
addr=("10.213.$N.1" "10.213.$N.2" "10.213.$N.3")

setup_fail() {
  echo "FAIL: network setup: $*"
  exit 1
}
ip link add "$br" type bridge || setup_fail "cannot create bridge $br"
created_links+=("$br")
ip link set "$br" up || setup_fail "cannot bring $br up"
for i in 0 1 2; do
  if [[ $i -gt 0 ]]; then
    ip netns add "${ns[$i]}" || setup_fail "cannot create namespace ${ns[$i]}"
    created_ns+=("${ns[$i]}")
  fi
  ip link add "${veth_root[$i]}" type veth peer name "${veth_ns[$i]}" || setup_fail "cannot create veth ${veth_root[$i]}"
  created_links+=("${veth_root[$i]}")
  ip link set "${veth_ns[$i]}" netns "${ns[$i]}" || setup_fail "cannot move ${veth_ns[$i]} into ${ns[$i]}"
  ip link set "${veth_root[$i]}" master "$br" || setup_fail "cannot enslave ${veth_root[$i]} to $br"
  ip link set "${veth_root[$i]}" up || setup_fail "cannot bring ${veth_root[$i]} up"
  ip -n "${ns[$i]}" link set lo up || setup_fail "cannot bring lo up in ${ns[$i]}"
  ip -n "${ns[$i]}" addr add "${addr[$i]}/24" dev "${veth_ns[$i]}" || setup_fail "cannot address ${veth_ns[$i]}"
  ip -n "${ns[$i]}" link set "${veth_ns[$i]}" up || setup_fail "cannot bring ${veth_ns[$i]} up"
done
echo "namespaces ${ns[*]}, bridge $br, addresses ${addr[*]}"

# Connectivity without ping: connecting to a closed port must be refused quickly (RST) - a timeout
# means the packets go nowhere. Tried for a few seconds (the bridge ports start in 'listening').
reachable() { # FROM_NS ADDRESS
  local out
  out=$(ip netns exec "$1" timeout 2 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1)
  [[ $out == *"Connection refused"* ]]
}
for i in 0 1 2; do
  for j in 0 1 2; do
    [[ $i -eq $j ]] && continue
    ok=0
    for _ in $(seq 20); do
      if reachable "${ns[$i]}" "${addr[$j]}"; then ok=1; break; fi
      sleep 0.25
    done
    [[ $ok -eq 1 ]] || setup_fail "${ns[$i]} cannot reach ${addr[$j]} (no RST from a closed port)"
  done
done
echo "connectivity: every namespace reaches the other two (TCP RST from a closed port)"

work=$(sf_mktemp sf-netns) || exit 1
SF_TMPDIRS+=("$work") # sf_mktemp ran in a $(...) subshell: register it here

wrapper=$work/ns-ssh
# shellcheck disable=SC2016 # the $1, $2 and $ns are the wrapper's own
{
  echo '#!/usr/bin/env bash'
  echo '# ns-ssh ADDRESS COMMAND: runs COMMAND in the network namespace of ADDRESS (sf-launch --ssh)'
  echo 'case "$1" in'
  for i in 0 1 2; do echo "  ${addr[$i]}) ns=${ns[$i]} ;;"; done
  echo '  *) echo "ns-ssh: unknown address $1" >&2; exit 255 ;;'
  echo 'esac'
  echo 'exec ip netns exec "$ns" bash -c "$2"'
} >"$wrapper"
chmod +x "$wrapper"

hosts="h0=${addr[0]}:7000,h1=${addr[1]}:7000,h2=${addr[2]}:7000"
passed=0
failed=0
t_start=$(sf_now)
fail() { echo "$*"; failed=$((failed + 1)); sf_keep "$work"; }

for name in vwap twokeys; do
  graph=$src/graphs/$name.xml
  d=$work/$name
  mkdir -p "$d"
  cp -r "$src/graphs/data" "$d/data"
  mkdir "$d/out"
  if ! sf_exec_in "$build" "$d" "$graph" "$d/original.log"; then
    fail "$name: FAIL  the one-process run failed (work dir $d)"
    sed 's/^/    | /' "$d/original.log" | head -n 20
    continue
  fi
  mv "$d/out" "$d/expected"
  mkdir "$d/out"
  if ! "$B/sf-xform" -w 3 --hosts "$hosts" "$graph" -o "$d/par.xml" >"$d/xform.log" 2>&1; then
    fail "$name: FAIL  sf-xform failed (work dir $d)"
    sed 's/^/    | /' "$d/xform.log" | head -n 20
    continue
  fi
  t0=$(sf_now)
  setsid timeout -k 5 120 bash "$launch" --ssh "$wrapper" --exec "$B/sf-exec" --workdir "$d" "$d/par.xml" \
    >"$d/launch.log" 2>&1 &
  lpid=$!
  LAUNCH_GROUPS+=("$lpid")
  wait "$lpid"
  rc=$?
  secs=$(sf_elapsed "$t0" "$(sf_now)")
  if [[ $rc -ne 0 ]]; then
    fail "$name: FAIL  sf-launch exited $rc after ${secs}s (work dir $d)"
    sed 's/^/    | /' "$d/launch.log" | head -n 30
  elif ! report=$(sf_compare_dirs "$d/expected" "$d/out"); then
    fail "$name: FAIL  outputs differ (expected $d/expected, actual $d/out)"
    printf '%s\n' "$report"
  else
    # the executors really ran in the namespaces: each listened on its own 10.213.N.x:7000
    echo "$name: OK    width 3 on ${addr[*]} (port 7000 each) in ${secs}s, output identical"
    passed=$((passed + 1))
  fi
done

# ---- a silent partition ----
if [[ ${SF_PARTITION:-1} == 1 ]]; then
  d=$work/partition
  mkdir -p "$d/out"
  sf_hosts_graph "$d/graph.xml" partition 2000000 20000 out/partition.csv
  limit=${SF_PARTITION_LIMIT:-40}
  if ! "$B/sf-xform" --hosts "h0=${addr[0]}:7000,h1=${addr[1]}:7000" "$d/graph.xml" -o "$d/par.xml" >"$d/xform.log" 2>&1; then
    fail "partition: FAIL  sf-xform failed (work dir $d)"
  else
    setsid timeout -k 5 $((limit + 30)) bash "$launch" --ssh "$wrapper" --exec "$B/sf-exec" --workdir "$d" \
      "$d/par.xml" >"$d/launch.log" 2>&1 &
    lpid=$!
    LAUNCH_GROUPS+=("$lpid")
    # wait until the sink's temporary file grows: tuples made the round trip h0 -> h1 -> h0
    grown=0
    for _ in $(seq 100); do
      f=$(find "$d/out" -mindepth 1 -size +8k -print -quit 2>/dev/null)
      [[ -n $f ]] && { grown=1; break; }
      sleep 0.1
    done
    if [[ $grown -eq 0 ]]; then
      fail "partition: FAIL  no data flowed within 10 s (work dir $d)"
      sed 's/^/    | /' "$d/launch.log" | head -n 20
    else
      ip link set "${veth_root[1]}" down
      t0=$(sf_now)
      while kill -0 "$lpid" 2>/dev/null &&
        awk -v a="$t0" -v b="$(sf_now)" -v l="$limit" 'BEGIN { exit !(b - a < l) }'; do
        sleep 0.2
      done
      secs=$(sf_elapsed "$t0" "$(sf_now)")
      if kill -0 "$lpid" 2>/dev/null; then
        kill -TERM -- "-$lpid" 2>/dev/null
        wait "$lpid" 2>/dev/null
        fail "partition: FAIL  sf-launch still ran ${limit}s after h1's link went down (work dir $d)"
        sed 's/^/    | /' "$d/launch.log" | head -n 20
      else
        wait "$lpid"
        rc=$?
        # the stranded h1 (its peer vanished too) is stopped by sf-launch; give it a moment
        sleep 0.5
        left=$(find "$d/out" -mindepth 1 -printf '%P ' 2>/dev/null)
        if [[ $rc -eq 0 ]]; then
          fail "partition: FAIL  sf-launch exited 0 after the partition (work dir $d)"
          sed 's/^/    | /' "$d/launch.log" | head -n 20
        elif ! grep -q "sf-launch: error: host 'h[01]'" "$d/launch.log"; then
          fail "partition: FAIL  sf-launch exited $rc without naming a host (work dir $d)"
          sed 's/^/    | /' "$d/launch.log" | head -n 20
        elif [[ -n $left ]]; then
          fail "partition: FAIL  files left in out/: $left (work dir $d)"
          sed 's/^/    | /' "$d/launch.log" | head -n 20
        else
          echo "partition: OK    h1's link cut mid-run; sf-launch exited $rc after ${secs}s: $(grep -m1 "sf-launch: error" "$d/launch.log" | cut -c1-200)"
          grep "error:" "$d/launch.log" | grep -v "^sf-launch" | head -n 3 | cut -c1-220 | sed 's/^/    | /'
          passed=$((passed + 1))
        fi
      fi
    fi
  fi
fi

# ---- a link cut, survived: checkpoints and --restart ----
if [[ ${SF_PARTITION:-1} == 1 ]]; then
  d=$work/partition-restart
  mkdir -p "$d/out" "$d/ref/out"
  # the partition case left h1's link down: up again, and reachable (the bridge port relearns)
  ip link set "${veth_root[1]}" up
  for _ in $(seq 40); do reachable "${ns[0]}" "${addr[1]}" && reachable "${ns[1]}" "${addr[0]}" && break; sleep 0.25; done
  sf_hosts_graph "$d/graph.xml" partition_restart 200000 20000 out/partition.csv
  limit=${SF_PARTITION_LIMIT:-40}
  if ! sf_exec_in "$build" "$d/ref" "$d/graph.xml" "$d/ref.log"; then
    fail "partition-restart: FAIL  the one-process run failed (work dir $d)"
  elif ! "$B/sf-xform" --hosts "h0=${addr[0]}:7000,h1=${addr[1]}:7000" "$d/graph.xml" -o "$d/par.xml" >"$d/xform.log" 2>&1; then
    fail "partition-restart: FAIL  sf-xform failed (work dir $d)"
  else
    setsid timeout -k 5 $((2 * limit + 60)) bash "$launch" --ssh "$wrapper" --exec "$B/sf-exec" --workdir "$d" \
      --checkpoint-dir "$d/ck" --checkpoint-interval 0.2 --restart 2 "$d/par.xml" >"$d/launch.log" 2>&1 &
    lpid=$!
    LAUNCH_GROUPS+=("$lpid")
    # wait for a complete checkpoint, then cut h1's link; once sf-launch says it restarts, mend it
    for _ in $(seq 150); do
      compgen -G "$d/ck/ckpt-*/MANIFEST" >/dev/null && break
      sleep 0.1
    done
    ip link set "${veth_root[1]}" down
    t0=$(sf_now)
    while kill -0 "$lpid" 2>/dev/null && ! grep -q "^sf-launch: restart 1 of 2" "$d/launch.log" &&
      awk -v a="$t0" -v b="$(sf_now)" -v l="$limit" 'BEGIN { exit !(b - a < l) }'; do
      sleep 0.2
    done
    secs=$(sf_elapsed "$t0" "$(sf_now)")
    ip link set "${veth_root[1]}" up
    wait "$lpid"
    rc=$?
    if ! grep -q "^sf-launch: restart 1 of 2: host 'h[01]' failed" "$d/launch.log"; then
      fail "partition-restart: FAIL  no restart within ${limit}s of the cut (exit $rc, work dir $d)"
      sed 's/^/    | /' "$d/launch.log" | head -n 20
    elif [[ $rc -ne 0 ]]; then
      fail "partition-restart: FAIL  sf-launch exited $rc after the restart (work dir $d)"
      sed 's/^/    | /' "$d/launch.log" | head -n 30
    elif ! grep -q "restored checkpoint [0-9]" "$d/launch.log"; then
      fail "partition-restart: FAIL  the restarted executors restored no checkpoint (work dir $d)"
      sed 's/^/    | /' "$d/launch.log" | head -n 30
    elif ! cmp -s "$d/ref/out/partition.csv" "$d/out/partition.csv"; then
      fail "partition-restart: FAIL  the output differs from the one-process run's (work dir $d)"
    else
      echo "partition-restart: OK    h1's link cut after a checkpoint; restart ${secs}s later, link mended, exit 0, output byte-identical ($(grep -m1 -o 'restored checkpoint [0-9]*' "$d/launch.log"))"
      passed=$((passed + 1))
    fi
  fi
fi

echo "netns: $passed passed, $failed failed, $(sf_elapsed "$t_start" "$(sf_now)")s"
[[ $failed -eq 0 ]]
