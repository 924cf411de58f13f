#!/usr/bin/env bash
# CI for the whole control plane (not part of `npm test`, which skips test/control-plane/ when the
# binaries are missing): builds kube-controller-manager, kube-scheduler 1.36.4 and kwok 0.8.0 from the
# Go module proxy when they are not in $KUBE_BIN (default ~/.cache/kube-reference/bin) with the
# reference build script (../shared/reference/build.sh, or REFERENCE_BUILD), then runs
# test/control-plane/control-plane.test.ts against Capstan.
#
# Size and time on 2 cores: the first build downloads the modules and compiles for 10-20 minutes
# (later builds reuse Go's caches); the test itself takes about 40 s (one control plane, 2 kwok nodes).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${KUBE_BIN:-$HOME/.cache/kube-reference/bin}
if [[ ! -x $bin/kube-controller-manager || ! -x $bin/kube-scheduler || ! -x $bin/kwok ]]; then
  build=${REFERENCE_BUILD:-../shared/reference/build.sh}
  [[ -x $build ]] || { echo "ci-control-plane: no binaries in $bin and no build script at $build (set REFERENCE_BUILD)" >&2; exit 2; }
  REF=$(dirname "$bin") "$build"
fi
[[ -f dist/src/main.js ]] || npm run build
KUBE_BIN=$bin exec node --test --test-timeout=900000 dist/test/control-plane/control-plane.test.js
