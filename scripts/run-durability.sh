#!/usr/bin/env bash
# The durability tests (test/durability/*.durability.ts): several Capstan instances on one Redis, and
# failover of Redis under a mixed load (Sentinel: kill -9, SIGSTOP and a network partition of the
# primary; Redis Cluster: a shard master's kill -9), each history checked by the Porcupine
# linearizability checker. Too long for `npm test`; .ci/run runs this after it with the short size.
#   DURABILITY_SIZE=ci (default): 6 clients, one fault per scenario; about 5 minutes with the build
#   on 2 busy cores.
#   DURABILITY_SIZE=long: 12 clients, five faults in a row per scenario, longer load; about 20 minutes.
# Arguments, if any, name the files to run (e.g. dist/test/durability/sentinel-failover.durability.js).
# The partition fault needs root, ip and iptables (network namespaces); without them it is skipped
# with a message saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build >/dev/null
bash scripts/build-go-linearizability-checker.sh >/dev/null
if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(find dist/test/durability -name '*.durability.js' | sort)
fi
# One file at a time: each starts its own Redis topology and Capstan processes, and failover timing
# is what they measure.
exec node --test --test-concurrency=1 --test-timeout=900000 "${files[@]}"
