#!/usr/bin/env bash
# Runs test/separate/sample-apiserver.test.ts (kube's sample API server behind Capstan), which npm test
# leaves out: its first run builds k8s.io/sample-apiserver and etcd from the Go module proxy (on a fresh
# machine about 6 CPU-minutes, 3 to 4 minutes on 2 idle cores, plus ~600 MB of module downloads); once
# both binaries are cached under ~/.cache/capstan the test takes about 10 s. Run after `npm run build`
# (`npm run test:sample-apiserver` does both).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/aggregator/build-sample-apiserver.sh >/dev/null
bash scripts/aggregator/ensure-etcd.sh >/dev/null
exec node --test --test-timeout=300000 dist/test/separate/sample-apiserver.test.js
