#!/usr/bin/env bash
# Builds one of the test suite's client-go programs (a folder under test/ with its own go.mod) into a
# cache directory and prints the binary's path on stdout. The binary is named by a hash of the Go
# version and the program's sources, so an unchanged program is never rebuilt. The first build
# downloads client-go's modules and compiles them: minutes. Run it before the test suite (node's
# --test-timeout applies to a whole test file) to keep that out of the tests' time.
# A folder without main.go is a Go test package: it is compiled with `go test -c` into a test
# binary (run it with -test.v and the like, from the folder if it reads files there).
#
# Usage: build-go-program.sh NAME SOURCE_DIR PURPOSE
#   NAME names the binary and the cache folder; PURPOSE says which tests need it (in error messages).
# Environment: CAPSTAN_GO_CACHE (default ~/.cache/capstan/NAME), GOPROXY as usual.
set -euo pipefail

name="$1"
src="$(cd "$2" && pwd)"
purpose="$3"
cache="${CAPSTAN_GO_CACHE:-$HOME/.cache/capstan/$name}"

if ! command -v go >/dev/null 2>&1; then
  echo "build-$name: Go toolchain not found on PATH; $purpose need Go to build $src" >&2
  exit 2
fi

# Every .go file of the folder is part of the hash (a program may be split into several files).
sources=("$src"/*.go)
if [[ -f "$src/main.go" ]]; then
  build=(go build)
else
  build=(go test -c)
fi
hash="$({ go version; cat "$src/go.mod" "$src/go.sum" "${sources[@]}"; } | sha256sum | cut -c1-16)"
bin="$cache/$name-$hash"
if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
tmp="$bin.$$.tmp"
log="$(mktemp)"
trap 'rm -f "$tmp" "$log"' EXIT
start=$SECONDS
if ! (cd "$src" && GOFLAGS='-mod=mod -buildvcs=false' "${build[@]}" -o "$tmp" . >"$log" 2>&1); then
  if grep -Eq 'proxy\.golang\.org|dial tcp|i/o timeout|no such host|connection refused|TLS handshake|reading https?:' "$log"; then
    echo "build-$name: Go module download failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))" >&2
  fi
  echo "build-$name: go build of $src failed after $((SECONDS - start)) s:" >&2
  cat "$log" >&2
  exit 1
fi
mv "$tmp" "$bin"
echo "build-$name: built $bin in $((SECONDS - start)) s" >&2
echo "$bin"
