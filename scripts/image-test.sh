#!/usr/bin/env bash
# Builds the container image and runs it for real with podman (test/podman/image-run.ts): CMD, start
# to ready, HEALTHCHECK, anonymous access, the admin credentials as docs/production.md copies them,
# SIGTERM, and Redis with two workers. Needs root (podman's storage and bridge network); installs
# podman, runc and debootstrap from Debian's packages when missing. Run after `npm run build` (CI runs
# it after `npm test`, which builds). Prints the image size and start-to-ready time.
#   Env: CAPSTAN_IMAGE (image name, default localhost/capstan:ci), NODE_IMAGE (base image, default:
#   a local stand-in for node:20-bookworm-slim, see scripts/image/build-node-base.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
[ -f dist/test/podman/image-run.js ] || { echo "image-test: run npm run build first" >&2; exit 1; }
bash scripts/image/ensure-podman.sh >&2
command -v redis-server >/dev/null || { echo "image-test: redis-server is needed (npm test installs it)" >&2; exit 1; }
image="$(bash scripts/image/build-image.sh)"
export CAPSTAN_IMAGE="$image"
node --test --test-reporter=spec --test-timeout=1200000 dist/test/podman/image-run.js
echo "image-test: done in $(($(date +%s) - start)) s" >&2
