#!/usr/bin/env bash
# Builds test/tools/linearizability-checker (Porcupine over a recorded history of one resource type,
# used by the checker's own tests and the failover tests) and prints the binary's path; see
# build-go-program.sh. Only Porcupine and Go's standard library: seconds on a warm module cache.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
exec bash "$here/build-go-program.sh" linearizability-checker "$here/../test/tools/linearizability-checker" "the linearizability checker's tests and the failover tests"
