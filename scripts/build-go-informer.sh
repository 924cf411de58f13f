#!/usr/bin/env bash
# Builds test/informers/go-informer (a client-go SharedInformer used by the informer conformance
# tests) and prints the binary's path; see build-go-program.sh.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
exec bash "$here/build-go-program.sh" go-informer "$here/../test/informers/go-informer" "the client-go informer tests"
