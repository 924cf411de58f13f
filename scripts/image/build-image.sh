#!/usr/bin/env bash
# Builds the project's Dockerfile with podman and prints the image's name (localhost/capstan:ci by
# default; CAPSTAN_IMAGE overrides). NODE_IMAGE is the base: when unset, node:20-bookworm-slim is used
# if podman already has it, else a local stand-in is built (build-node-base.sh), since this kind of
# machine cannot pull base images. Unchanged stages come from podman's layer cache.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=podman-flags.sh
. "$here/podman-flags.sh"

image="${CAPSTAN_IMAGE:-localhost/capstan:ci}"
base="${NODE_IMAGE:-}"
if [ -z "$base" ]; then
  if "${PODMAN[@]}" image exists docker.io/library/node:20-bookworm-slim; then
    base=docker.io/library/node:20-bookworm-slim
  else
    base="$(bash "$here/build-node-base.sh")"
  fi
fi
echo "build-image: building $image from NODE_IMAGE=$base" >&2
# --format docker keeps the HEALTHCHECK (the OCI format has none); builds reach the registries
# through the host's network.
"${PODMAN[@]}" build --format docker --network host "${PODMAN_ULIMITS[@]}" \
  --build-arg "NODE_IMAGE=$base" -t "$image" -f "$root/Dockerfile" "$root" >&2
echo "$image"
