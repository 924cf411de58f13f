#!/usr/bin/env bash
# Builds kube's agnhost test image binary (k8s.io/kubernetes/test/images/agnhost) natively, once,
# and prints its path on stdout. The pod runner (test/tools/pod-runner.ts) runs it in place of the
# registry.k8s.io/e2e-test-images/agnhost image. Cached under ~/.cache/capstan/agnhost by version.
#
# k8s.io/kubernetes cannot be required as-is (its go.mod replaces every k8s.io staging module with
# ./staging/...), so a wrapper module requires it and replaces each staging module with its published
# v0.<minor>.<patch> tag, as ../shared/reference/build.sh does for the control plane.
# Environment: K8S_VERSION (default v1.36.4), CAPSTAN_GO_CACHE (default ~/.cache/capstan/agnhost).
set -euo pipefail
version=${K8S_VERSION:-v1.36.4}
staging="v0.${version#v1.}"
cache=${CAPSTAN_GO_CACHE:-$HOME/.cache/capstan/agnhost}
bin=$cache/agnhost-$version
src=$cache/src-$version
# Files the agnhost image has in its working directory (porter's TLS pair, localhost.crt and .key),
# kept beside the binary: the pod runner copies them into each pod's directory, the working
# directory of its containers.
files=$bin-files
image_files() {
  [[ -f $files/localhost.crt && -f $files/localhost.key ]] && return 0
  local dir
  dir=$(cd "$cache" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  mkdir -p "$files"
  cp "$dir/test/images/agnhost/porter/localhost.crt" "$dir/test/images/agnhost/porter/localhost.key" "$files/"
  chmod 644 "$files"/localhost.*
}
if [[ -x $bin ]]; then
  image_files >&2
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "build-agnhost: Go toolchain not found on PATH" >&2; exit 2; }
mkdir -p "$src"
cd "$src"
export GOFLAGS=-mod=mod
kmod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
{
  echo "module capstan.local/agnhost"
  echo
  grep -m1 '^go ' "$kmod"
  grep -m1 '^godebug ' "$kmod" || true
  echo
  echo "require k8s.io/kubernetes $version"
  echo
  echo "replace ("
  grep -E '^\s*k8s.io/[^ ]+ => ./staging/' "$kmod" | awk -v v="$staging" '{print "\t" $1 " => " $1 " " v}'
  echo ")"
} >go.mod
cat >tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/test/images/agnhost"
GO
start=$SECONDS
go build -p 1 -trimpath -o "$bin.$$.tmp" k8s.io/kubernetes/test/images/agnhost >&2
mv "$bin.$$.tmp" "$bin"
image_files >&2
echo "build-agnhost: built $bin in $((SECONDS - start)) s" >&2
echo "$bin"
