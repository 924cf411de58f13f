#!/usr/bin/env bash
# Prints the path of the ginkgo command-line tool that runs e2e.test with parallel processes
# (`ginkgo --procs N e2e.test -- ...`, as kube's hack/ginkgo-e2e.sh does), building it once from the
# Go module proxy into ~/.cache/capstan/ginkgo-VERSION. VERSION (default v2.28.1) is the ginkgo that
# k8s.io/kubernetes v1.36.4 requires: the CLI and the suite must speak the same protocol.
set -euo pipefail
version=${GINKGO_VERSION:-v2.28.1}
bin=$HOME/.cache/capstan/ginkgo-$version
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "ensure-ginkgo: Go toolchain not found on PATH" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GOBIN=$tmp go install "github.com/onsi/ginkgo/v2/ginkgo@$version" >&2
mkdir -p "$(dirname "$bin")"
mv "$tmp/ginkgo" "$bin"
echo "$bin"
