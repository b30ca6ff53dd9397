#!/usr/bin/env bash
# tools/setup.sh: installs the Debian packages StreamFission needs (when missing), then configures
# and builds with CMake into build/ (or $SF_BUILD; with $SF_SANITIZE, see below). Safe to run again: it only does what is missing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${SF_BUILD:-$top/build}

# clang and its runtime libraries: the sanitizer build of tools/test.sh and the fuzz targets;
# libmicrohttpd-dev: sf-exec --metrics (its HTTP server); librdkafka-dev: KafkaSource and KafkaSink
# (rt/kafka.c) and sf-kafka-mock; libjson-c-dev: sf-xform --profile and their format = json
# (rt/json_row.c)
packages=(build-essential cmake pkg-config libxml2-dev libxml2-utils libprotobuf-c-dev protobuf-c-compiler
          libgrpc-dev zlib1g-dev libjson-c-dev check libsubunit-dev graphviz iproute2 procps openssl clang libclang-rt-14-dev time libpcre2-dev
          libmicrohttpd-dev librdkafka-dev)
# SF_SETUP_EXTRA: more packages, for what only some runs need (tools/bench.sh: the TBB peer;
# tools/test.sh: slurm-wlm and munge, the single-node Slurm of tests/slurm.sh; prometheus and
# chromium, the promtool, server and headless browser of tests/metrics.sh; kcat, tests/kafka.sh's
# Kafka client)
read -r -a extra <<<"${SF_SETUP_EXTRA:-}"
packages+=("${extra[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# SF_SANITIZE (address, undefined, thread, address,undefined) builds with sanitizers; CC chooses the
# compiler of a new build tree (tools/test.sh's sanitizer tree uses clang, which also builds the fuzz
# targets).
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=${SF_BUILD_TYPE:-RelWithDebInfo} -DSF_SANITIZE="${SF_SANITIZE:-}" >/dev/null
cmake --build "$build" -j"$(nproc)"
echo "setup: built into $build"
