#!/usr/bin/env bash
# Prints the path of a helm binary, building it from the Go module proxy when none is installed.
# The build is cached in $CAPSTAN_HELM_DIR (default: $HOME/.cache/capstan/helm-<version>), so only the
# first run pays for it (a few minutes on two cores). Exit 3 when helm is missing and cannot be built
# (no Go toolchain, or the proxy unreachable): callers treat that as "skip", anything else as failure.
set -euo pipefail

HELM_VERSION="${CAPSTAN_HELM_VERSION:-v3.16.4}"
if command -v helm >/dev/null 2>&1 && [ -z "${CAPSTAN_HELM_FORCE_BUILD:-}" ]; then
  command -v helm
  exit 0
fi
dir="${CAPSTAN_HELM_DIR:-${HOME:-/tmp}/.cache/capstan/helm-${HELM_VERSION}}"
if [ -x "$dir/helm" ]; then
  echo "$dir/helm"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "ensure-helm: helm is not installed and no Go toolchain is available to build it" >&2
  exit 3
fi
mkdir -p "$dir"
echo "ensure-helm: building helm ${HELM_VERSION} with $(go version) into $dir (first run only)" >&2
# -trimpath and no VCS stamping keep the build independent of the surrounding checkout.
if ! GOBIN="$dir" GOFLAGS="-buildvcs=false -trimpath" CGO_ENABLED=0 \
    go install "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}" >&2; then
  echo "ensure-helm: building helm ${HELM_VERSION} failed" >&2
  exit 3
fi
echo "$dir/helm"
