#!/usr/bin/env bash
# Regenerates test/golden/cel-cost/estimates.json from test/fixtures/cel-cost/corpus.json with
# kube-apiserver's own CEL compilation and CRD validation (test/tools/cel-cost-golden, built with
# build-go-program.sh). Used by test/unit/cel-cost-golden.test.ts.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(bash "$here/build-go-program.sh" cel-cost-golden "$here/../test/tools/cel-cost-golden" "the CEL cost goldens")"
mkdir -p "$here/../test/golden/cel-cost"
"$bin" "$here/../test/fixtures/cel-cost/corpus.json" "$here/../test/golden/cel-cost/estimates.json"
echo "wrote test/golden/cel-cost/estimates.json" >&2
