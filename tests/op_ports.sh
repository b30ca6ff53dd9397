#!/usr/bin/env bash
# tests/op_ports.sh BUILD_DIR SOURCE_DIR: a Custom operator with two input ports (op.h ABI 4).
#
# sf_ports (tests/ops/ports.c) emits, for each tuple, the port it came on, its first attribute and
# the schema of that port as op.h describes it (SF_IN for port 0, SF_IN2 for port 1). Two Beacons
# of different schemas feed its two ports; their tuples are merged as a fan-in is, by position,
# the first port's first on a tie: the output must be exactly the one worked out below. Then:
# the same at width 3 (the operator stays serial: --explain says rule 1), and the library with
# ABI version 3 (sf_count_v3) on two ports is refused at start-up with its message.
set -uo pipefail
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
. "$src/tests/lib.sh"
sf_need_bins "$build" sf-xform sf-exec || exit 2
trap sf_cleanup EXIT
sf_mktemp SF_WORK sf-op-ports
cd "$SF_WORK" || exit 2

graph() { # SYMBOL
  cat <<XML
<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="ports">
  <schema name="A"><attr name="id" type="int"/><attr name="name" type="string"/></schema>
  <schema name="B"><attr name="key" type="int"/><attr name="x" type="double"/><attr name="ok" type="bool"/></schema>
  <schema name="P"><attr name="port" type="int"/><attr name="id" type="int"/><attr name="what" type="string"/></schema>
  <operator name="a" kind="Beacon"><output stream="As" schema="A"/><param name="count">5</param>
    <set attr="id">seq</set><set attr="name">"a" + str(seq)</set></operator>
  <operator name="b" kind="Beacon"><output stream="Bs" schema="B"/><param name="count">3</param>
    <set attr="key">seq * 10</set><set attr="x">0.5</set><set attr="ok">true</set></operator>
  <operator name="both" kind="Custom">
    <input stream="As"/>
    <input stream="Bs"/>
    <output stream="Ps" schema="P"/>
    <library path="libsf_test_ops.so" symbol="$1"/>
    <model state="none" selectivity="one"/>
  </operator>
  <operator name="out" kind="FileSink"><input stream="Ps"/><param name="file">out.csv</param></operator>
</graph>
XML
}
graph sf_ports >ports.xml
# by position: a0 b0 (a tie: port 0 first) a1 b1 a2 b2 a3 a4
cat >expected.csv <<'CSV'
port,id,what
0,0,id:int name:string
1,0,key:int x:double ok:bool
0,1,id:int name:string
1,10,key:int x:double ok:bool
0,2,id:int name:string
1,20,key:int x:double ok:bool
0,3,id:int name:string
0,4,id:int name:string
CSV
if "$build/bin/sf-exec" ports.xml 2>run.log && cmp -s out.csv expected.csv; then
  sf_ok ports "two input ports: each tuple's port and its port's schema, merged by position"
else
  sf_bad ports "the output differs from the one worked out" run.log out.csv
fi
rm -f out.csv
if "$build/bin/sf-xform" -w 3 --explain ports.xml >ports3.xml 2>explain.log &&
  grep -q "both: not parallelized: it has 2 input ports (rule 1: exactly one)" explain.log &&
  "$build/bin/sf-exec" ports3.xml 2>run3.log && cmp -s out.csv expected.csv; then
  sf_ok width-3 "serial in a rewritten graph (rule 1), the same bytes"
else
  sf_bad width-3 "at width 3: not serial as expected, or the output differs" explain.log run3.log
fi
rm -f out.csv
graph sf_count_v3 >v3.xml
want="sf-exec: error: operator 'both': it has two input ports, which needs op.h ABI version 4 (SF_IN2); library 'libsf_test_ops.so' has version 3"
if ! "$build/bin/sf-exec" v3.xml 2>v3.log && [[ $(cat v3.log) == "$want" ]] && [[ ! -e out.csv ]]; then
  sf_ok abi-3 "a version-3 library on two ports refused at start-up, nothing written"
else
  sf_bad abi-3 "a version-3 library on two ports was not refused as expected" v3.log
fi
echo "op_ports: $SF_PASSED passed, $SF_FAILED failed"
[[ $SF_FAILED == 0 ]]
