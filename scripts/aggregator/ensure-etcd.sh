#!/usr/bin/env bash
# Prints the path of an etcd binary for the sample API server tests (the sample API server stores its
# objects in etcd): $ETCD when set, else the reference build's (../shared/reference/build.sh puts it in
# ~/.cache/kube-reference/bin), else one built once from the Go module proxy into ~/.cache/capstan/etcd
# (go.etcd.io/etcd/server/v3, the version kube 1.36.4 pins; a few minutes on 2 cores).
# Environment: ETCD, ETCD_VERSION (default v3.6.8), REF (default ~/.cache/kube-reference), CAPSTAN_GO_CACHE.
set -euo pipefail
version=${ETCD_VERSION:-v3.6.8}
if [[ -n ${ETCD:-} ]]; then
  [[ -x $ETCD ]] || { echo "ensure-etcd: ETCD=$ETCD is not executable" >&2; exit 2; }
  echo "$ETCD"
  exit 0
fi
reference=${REF:-$HOME/.cache/kube-reference}/bin/etcd
if [[ -x $reference ]]; then
  echo "$reference"
  exit 0
fi
cache=${CAPSTAN_GO_CACHE:-$HOME/.cache/capstan/etcd}
bin=$cache/etcd-$version
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "ensure-etcd: Go toolchain not found on PATH" >&2; exit 2; }
# etcd's server module replaces its sibling modules with local paths, so a wrapper module requires it.
src=$cache/src-$version
mkdir -p "$src"
cd "$src"
cat >go.mod <<GOMOD
module capstan.local/etcd

go 1.24

require go.etcd.io/etcd/server/v3 $version
GOMOD
start=$SECONDS
GOFLAGS=-mod=mod go build -trimpath -ldflags '-s -w' -o "$bin.$$.tmp" go.etcd.io/etcd/server/v3 >&2
mv "$bin.$$.tmp" "$bin"
echo "ensure-etcd: built $bin in $((SECONDS - start)) s" >&2
echo "$bin"
