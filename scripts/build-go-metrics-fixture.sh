#!/usr/bin/env bash
# Builds test/aggregator/go-metrics-fixture (a standard-library extension API server serving
# metrics.k8s.io/v1beta1 from fixtures, for the aggregation tests) and prints the binary's path;
# see build-go-program.sh.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
exec bash "$here/build-go-program.sh" go-metrics-fixture "$here/../test/aggregator/go-metrics-fixture" "the metrics.k8s.io aggregation tests"
