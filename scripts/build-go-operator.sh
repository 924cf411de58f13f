#!/usr/bin/env bash
# Builds test/clients/go-operator (a controller-runtime operator reconciling Widgets into owned
# ConfigMaps, used by test/e2e/controller-runtime-operator.test.ts) and prints the binary's path;
# see build-go-program.sh.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
exec bash "$here/build-go-program.sh" go-operator "$here/../test/clients/go-operator" "the controller-runtime operator test"
