#!/usr/bin/env bash
# Runs every compiled test file with node's test runner (two files at a time).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find dist/test -name '*.test.js' | sort)
exec node --test --test-concurrency=2 --test-timeout=300000 "${files[@]}"
