#!/usr/bin/env bash
# tests/kubernetes.sh BUILD_DIR SOURCE_DIR
#
# sf-launch --emit kubernetes DIR GRAPH (rt/launch/k8s.c). No cluster is available here, so the
# files are checked for what a cluster would rely on, and then run here as a kubelet would run
# them (the pods' own arguments, token file and TLS environment; only the service names replaced
# by loopback addresses):
#   1. structure: every file is YAML (python3's yaml.safe_load), one object each, the kinds are a
#      ConfigMap, a Secret, a headless Service, a ReadWriteMany claim and one Pod per host of the
#      graph (sf-exec --list-hosts) named sf-JOB-LABEL, with that hostname and the Service as its
#      subdomain; kustomization.yaml lists every other file; every file is readable by its owner
#      only;
#   2. secrets: the ConfigMap holds the graph byte for byte and no key or token; the token and the
#      private keys are only in the Secret; each pod takes only its own certificate and key; each
#      certificate verifies against the Secret's CA, names its host and matches its key;
#   3. addresses: each pod's --hosts names every host at LABEL.sf-JOB:PORT, the graph's ports, and
#      it listens at 0.0.0.0:PORT;
#   4. the pods' commands, run here with their Secret (token file, SF_TLS_*), their mounts as
#      directories and --hosts at 127.0.0.1: the output equals a one-process run's byte for byte;
#   5. errors: an existing non-empty DIR (exit 1, exact message, nothing changed),
#      --insecure-plaintext (exit 2), no DIR (exit 2).
set -uo pipefail
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
. "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec sf-launch || exit 2
python3 -c 'import yaml' 2>/dev/null || { echo "kubernetes: python3-yaml is missing: skipped"; exit 77; }
command -v openssl >/dev/null || { echo "kubernetes: openssl is missing: skipped"; exit 77; }
trap sf_stop_all EXIT
sf_mktemp work sf-k8s
L=$build/bin/sf-launch

# a three-host graph: the demo's VWAP at width 3 on three hosts
sf_next_ports 3 || exit 1
"$build/bin/sf-xform" -w 3 --hosts "h0=127.0.0.1:$P0,h1=127.0.0.1:$P1,h2=127.0.0.1:$P2" \
  "$src/graphs/vwap.xml" -o "$work/par.xml" >"$work/xform.log" 2>&1 || {
  echo "error: sf-xform failed" >&2
  cat "$work/xform.log" >&2
  exit 1
}
(cd "$src/graphs" && "$build/bin/sf-exec" --list-hosts "$work/par.xml") >"$work/hosts.txt"
d=$work/k8s
if "$L" --emit kubernetes --job VWAP_demo --image registry.example/sf:1 --checkpoint-interval 0.5 \
  "$d" "$work/par.xml" >"$work/emit.log" 2>&1; then
  sf_ok emit "sf-launch --emit kubernetes wrote $(find "$d" -type f | wc -l) files"
else
  sf_bad emit "sf-launch --emit kubernetes failed" "$work/emit.log"
fi

# 1-3: one Python script checks the structure, the secrets and the addresses
cat >"$work/check.py" <<'PY'
import glob, os, re, stat, subprocess, sys, yaml
d, graph, hosts_file, workdir = sys.argv[1:5]
hosts = [l.split() for l in open(hosts_file).read().splitlines()]
job = "vwap-demo"
bad = []
def fail(m): bad.append(m)
objs = {}
for f in sorted(glob.glob(d + "/*")):
    name = os.path.basename(f)
    if stat.S_IMODE(os.stat(f).st_mode) & 0o077: fail(f"{name}: readable by others")
    docs = [x for x in yaml.safe_load_all(open(f))]
    if len(docs) != 1: fail(f"{name}: {len(docs)} objects, expected 1")
    objs[name] = docs[0]
def labels(h): return h.lower().replace("_", "-")
want = {"configmap.yaml": "ConfigMap", "secret.yaml": "Secret", "service.yaml": "Service",
        "volume.yaml": "PersistentVolumeClaim", "kustomization.yaml": "Kustomization"}
for h, _ in hosts: want[f"pod-{labels(h)}.yaml"] = "Pod"
if sorted(objs) != sorted(want): fail(f"files {sorted(objs)}, expected {sorted(want)}")
for n, k in want.items():
    if n in objs and objs[n].get("kind") != k: fail(f"{n}: kind {objs[n].get('kind')}, expected {k}")
if bad: print("\n".join(bad)); sys.exit(1)
k = objs["kustomization.yaml"]
if sorted(k["resources"]) != sorted(n for n in want if n != "kustomization.yaml"): fail("kustomization: resources " + str(k["resources"]))
svc = objs["service.yaml"]
if svc["metadata"]["name"] != f"sf-{job}" or svc["spec"].get("clusterIP") != "None": fail("service: not headless sf-" + job)
if not svc["spec"].get("publishNotReadyAddresses"): fail("service: not-ready addresses not published")
if objs["volume.yaml"]["spec"]["accessModes"] != ["ReadWriteMany"]: fail("volume: not ReadWriteMany")
cm = objs["configmap.yaml"]
if cm["data"]["graph.xml"] != open(graph).read(): fail("configmap: graph.xml differs from the graph")
sec = objs["secret.yaml"]["stringData"]
token = sec["token"]
if not re.fullmatch(r"[0-9a-f]{48}", token): fail("secret: token " + token)
for n, o in objs.items():
    text = open(os.path.join(d, n)).read()
    if n != "secret.yaml" and ("PRIVATE KEY" in text or token in text or "CERTIFICATE" in text):
        fail(f"{n}: holds secret material")
ports = {h: a.rsplit(":", 1)[1] for h, a in hosts}
want_hosts = ",".join(f"{h}={labels(h)}.sf-{job}:{ports[h]}" for h, _ in hosts)
cmds = []
for h, _ in hosts:
    p = objs[f"pod-{labels(h)}.yaml"]
    if p["metadata"]["name"] != f"sf-{job}-{labels(h)}": fail(f"pod {h}: name {p['metadata']['name']}")
    if p["spec"]["hostname"] != labels(h) or p["spec"]["subdomain"] != f"sf-{job}": fail(f"pod {h}: hostname/subdomain")
    if p["metadata"]["labels"] != {**svc["spec"]["selector"], **p["metadata"]["labels"]}: fail(f"pod {h}: not selected by the service")
    c = p["spec"]["containers"][0]
    if c["image"] != "registry.example/sf:1": fail(f"pod {h}: image {c['image']}")
    a = c["args"]
    def after(opt): return a[a.index(opt) + 1] if opt in a else None
    if after("--host") != h: fail(f"pod {h}: --host {after('--host')}")
    if after("--hosts") != want_hosts: fail(f"pod {h}: --hosts {after('--hosts')}, expected {want_hosts}")
    if after("--listen") != "0.0.0.0:" + ports[h]: fail(f"pod {h}: --listen {after('--listen')}")
    if after("--checkpoint-interval") != "0.5" or "--restore" not in a: fail(f"pod {h}: checkpoint options {a}")
    env = {e["name"]: e["valueFrom"]["secretKeyRef"]["key"] for e in c["env"]}
    if env != {"SF_TLS_CA": "ca.crt", "SF_TLS_CERT": h + ".crt", "SF_TLS_KEY": h + ".key"}: fail(f"pod {h}: env {env}")
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in p["spec"]["volumes"]}
    if vols["token"]["secret"]["items"] != [{"key": "token", "path": "token"}]: fail(f"pod {h}: the token volume holds more")
    if ports[h] not in [str(x["containerPort"]) for x in c["ports"]]: fail(f"pod {h}: port")
    # the command as the kubelet runs it, mounts made directories of workdir, --hosts at loopback
    root = os.path.join(workdir, "pod-" + h)
    args = [x.replace(mounts["graph"], root + "/graph").replace(mounts["token"], root + "/secret")
             .replace(mounts["data"], workdir + "/data") for x in a]
    args[args.index("--hosts") + 1] = ",".join(f"{x}=127.0.0.1:{ports[x]}" for x, _ in hosts)
    os.makedirs(root + "/graph"); os.makedirs(root + "/secret")
    open(root + "/graph/graph.xml", "w").write(cm["data"]["graph.xml"])
    open(root + "/secret/token", "w").write(token)
    for var, key in env.items(): open(f"{root}/{var}", "w").write(sec[key])
    for ext in ("crt", "key"): open(f"{root}/{h}.{ext}", "w").write(sec[f"{h}.{ext}"])
    open(root + "/ca.crt", "w").write(sec["ca.crt"])
    cmds.append((h, c["workingDir"].replace(mounts["data"], workdir + "/data"), args))
with open(workdir + "/cmds.sh", "w") as f:
    for h, cwd, args in cmds:
        f.write(f"{h} {cwd} " + " ".join("'" + x.replace("'", "'\\''") + "'" for x in args) + "\n")
if bad: print("\n".join(bad)); sys.exit(1)
PY
if python3 "$work/check.py" "$d" "$work/par.xml" "$work/hosts.txt" "$work" >"$work/check.log" 2>&1; then
  sf_ok structure "YAML, one ConfigMap, Secret, headless Service, claim and $(wc -l <"$work/hosts.txt") Pods; secrets only in the Secret; addresses and options as the graph's"
else
  sf_bad structure "the manifests are wrong" "$work/check.log"
fi

# 2: the Secret's certificates
bad=""
while read -r h _; do
  r=$work/pod-$h
  [[ -f $r/$h.crt ]] || { bad+=" $h:missing"; continue; }
  openssl verify -CAfile "$r/ca.crt" "$r/$h.crt" >/dev/null 2>&1 || bad+=" $h:verify"
  openssl x509 -in "$r/$h.crt" -noout -subject 2>/dev/null | grep -q "CN *= *$h\$" || bad+=" $h:subject"
  [[ $(openssl x509 -in "$r/$h.crt" -noout -pubkey 2>/dev/null) == "$(openssl pkey -in "$r/$h.key" -pubout 2>/dev/null)" ]] ||
    bad+=" $h:key"
done <"$work/hosts.txt"
if [[ -z $bad ]]; then
  sf_ok certificates "each host's certificate verifies against the Secret's CA, names its host and matches its key"
else
  sf_bad certificates "the Secret's TLS material is wrong:$bad"
fi

# 4: run the pods' commands here (the graph writes out/vwap_bars.csv in its working directory)
mkdir -p "$work/seq/out" "$work/data/work/out"
(cd "$work/seq" && "$build/bin/sf-exec" "$src/graphs/vwap.xml") >"$work/seq.log" 2>&1 || sf_bad run "the one-process run failed" "$work/seq.log"
pids=()
if [[ -s $work/cmds.sh ]]; then
  while read -r h cwd args; do
    r=$work/pod-$h
    (cd "$cwd" && export SF_TLS_CA SF_TLS_CERT SF_TLS_KEY && SF_TLS_CA=$(cat "$r/SF_TLS_CA") &&
      SF_TLS_CERT=$(cat "$r/SF_TLS_CERT") && SF_TLS_KEY=$(cat "$r/SF_TLS_KEY") && PATH=$build/bin:$PATH &&
      eval "exec timeout -k 5 60 $args") >"$work/$h.log" 2>&1 &
    pids+=($!)
  done <"$work/cmds.sh"
  # The pods wait up to their --connect-timeout (300 s) for a peer: when one of them fails (a port
  # taken, say), stop the others at once rather than after the 60 s timeout, and show the logs.
  st=0 left=${#pids[@]}
  while ((left > 0)); do
    wait -n "${pids[@]}" 2>/dev/null
    s=$?
    ((s == 127)) && break # none left
    left=$((left - 1))
    if [[ $s != 0 && $st == 0 ]]; then
      st=$s
      kill "${pids[@]}" 2>/dev/null
    fi
  done
  if [[ $st != 0 ]]; then
    sf_bad run "the pods' commands failed (exit $st)" "$work/h0.log" "$work/h1.log" "$work/h2.log"
  elif ! cmp -s "$work/seq/out/vwap_bars.csv" "$work/data/work/out/vwap_bars.csv"; then
    sf_bad run "the pods' out/vwap_bars.csv differs from the one-process run's"
  else
    sf_ok run "the pods' commands, run here: out/vwap_bars.csv ($(wc -l <"$work/seq/out/vwap_bars.csv") lines) equals the one-process run's"
  fi
fi

# 5: errors
mkdir -p "$work/full" && echo keep >"$work/full/x"
"$L" --emit kubernetes "$work/full" "$work/par.xml" >"$work/full.log" 2>&1
st=$?
want="sf-launch: error: --emit kubernetes: '$work/full' exists and is not an empty directory"
if [[ $st == 1 && $(cat "$work/full.log") == "$want" && $(ls "$work/full") == x && -z $(ls -d "$work"/full.tmp-* 2>/dev/null) ]]; then
  sf_ok errors "a non-empty DIR: exit 1, said so, nothing written"
else
  sf_bad errors "a non-empty DIR: exit $st, expected 1 and exactly: $want" "$work/full.log"
fi
"$L" --emit kubernetes --insecure-plaintext "$work/plain" "$work/par.xml" >"$work/plain.log" 2>&1
st=$?
if [[ $st == 2 && ! -e $work/plain ]] && grep -q "^sf-launch: --emit kubernetes: --insecure-plaintext" "$work/plain.log"; then
  sf_ok errors "--insecure-plaintext: exit 2, nothing written"
else
  sf_bad errors "--insecure-plaintext with --emit: exit $st, expected 2" "$work/plain.log"
fi
"$L" --emit kubernetes "$work/par.xml" >"$work/nodir.log" 2>&1
st=$?
if [[ $st == 2 ]]; then
  sf_ok errors "no DIR: exit 2 ($(head -n 1 "$work/nodir.log"))"
else
  sf_bad errors "no DIR: exit $st, expected 2" "$work/nodir.log"
fi

echo "kubernetes: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
