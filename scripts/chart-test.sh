#!/usr/bin/env bash
# Installs, upgrades and uninstalls deploy/helm/capstan for each documented values combination
# against a Capstan it starts, then runs the installed pod template for real with podman: 3 replicas
# x 2 workers on one Redis, its probes, traffic to every pod, SIGTERM (test/podman/chart-run.ts).
# Needs root; installs podman, runc and debootstrap from Debian's packages and builds helm from the Go
# module proxy when missing; builds the image (scripts/image/build-image.sh: cached layers when
# scripts/image-test.sh ran first). Run after `npm run build` (CI runs it after `npm test`).
#   Env: CAPSTAN_IMAGE (default localhost/capstan:ci), NODE_IMAGE (see scripts/image-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
[ -f dist/test/podman/chart-run.js ] || { echo "chart-test: run npm run build first" >&2; exit 1; }
bash scripts/image/ensure-podman.sh >&2
command -v redis-server >/dev/null || { echo "chart-test: redis-server is needed (npm test installs it)" >&2; exit 1; }
CAPSTAN_HELM="$(bash scripts/ensure-helm.sh)"
export CAPSTAN_HELM
CAPSTAN_IMAGE="$(bash scripts/image/build-image.sh)"
export CAPSTAN_IMAGE
node --test --test-reporter=spec --test-timeout=1800000 dist/test/podman/chart-run.js
echo "chart-test: done in $(($(date +%s) - start)) s" >&2
