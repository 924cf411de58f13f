#!/usr/bin/env bash
# Builds kube's sample API server (k8s.io/sample-apiserver, the "wardle" extension API server the
# e2e Aggregator conformance test deploys) from the Go module proxy, once, and prints its path on
# stdout. Cached under ~/.cache/capstan/sample-apiserver by version; the first build compiles
# k8s.io/apiserver (several minutes on 2 cores), later calls print the cached path at once.
# Environment: SAMPLE_APISERVER_VERSION (default v0.36.4), CAPSTAN_GO_CACHE.
set -euo pipefail
version=${SAMPLE_APISERVER_VERSION:-v0.36.4}
cache=${CAPSTAN_GO_CACHE:-$HOME/.cache/capstan/sample-apiserver}
bin=$cache/sample-apiserver-$version
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "build-sample-apiserver: Go toolchain not found on PATH" >&2; exit 2; }
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
GOBIN=$tmp GOFLAGS=-mod=mod go install -trimpath -ldflags '-s -w' "k8s.io/sample-apiserver@$version" >&2
mv "$tmp/sample-apiserver" "$bin"
echo "build-sample-apiserver: built $bin in $((SECONDS - start)) s" >&2
echo "$bin"
