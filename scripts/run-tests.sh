#!/usr/bin/env bash
# Runs every compiled test file with node's test runner (two files at a time), except those of
# dist/test/separate, which have their own scripts (their first run builds large Go programs). The TAP
# log is followed by a list of the failed tests, if any (scripts/test-failures-reporter.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find dist/test -path dist/test/separate -prune -o -name '*.test.js' -print | sort)
exec node --test --test-concurrency=2 --test-timeout=300000 \
  --test-reporter=tap --test-reporter-destination=stdout \
  --test-reporter=./scripts/test-failures-reporter.mjs --test-reporter-destination=stdout \
  "${files[@]}"
