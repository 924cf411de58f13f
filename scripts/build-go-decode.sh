#!/usr/bin/env bash
# Builds test/clients/go-decode (a client-go program that lists and watches with the typed clientset,
# used by test/e2e/client-decoding.test.ts) into a cache directory and prints the binary's path on stdout. The binary is named by a hash
# of the Go version and the program's sources, so an unchanged program is never rebuilt.
# The first build downloads client-go's modules and compiles them: minutes. Run this before the test
# suite (node's --test-timeout applies to a whole test file) to keep that out of the tests' time.
#
# Environment: CAPSTAN_GO_CACHE (default ~/.cache/capstan/go-decode), GOPROXY as usual.
set -euo pipefail

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../test/clients/go-decode" && pwd)"
cache="${CAPSTAN_GO_CACHE:-$HOME/.cache/capstan/go-decode}"

if ! command -v go >/dev/null 2>&1; then
  echo "build-go-decode: Go toolchain not found on PATH; the client-go decoding test needs Go to build $src" >&2
  exit 2
fi

hash="$({ go version; cat "$src/go.mod" "$src/go.sum" "$src/main.go"; } | sha256sum | cut -c1-16)"
bin="$cache/go-decode-$hash"
if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
tmp="$bin.$$.tmp"
log="$(mktemp)"
trap 'rm -f "$tmp" "$log"' EXIT
start=$SECONDS
if ! (cd "$src" && GOFLAGS='-mod=mod -buildvcs=false' go build -o "$tmp" . >"$log" 2>&1); then
  if grep -Eq 'proxy\.golang\.org|dial tcp|i/o timeout|no such host|connection refused|TLS handshake|reading https?:' "$log"; then
    echo "build-go-decode: Go module download failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))" >&2
  fi
  echo "build-go-decode: go build of $src failed after $((SECONDS - start)) s:" >&2
  cat "$log" >&2
  exit 1
fi
mv "$tmp" "$bin"
echo "build-go-decode: built $bin in $((SECONDS - start)) s" >&2
echo "$bin"
