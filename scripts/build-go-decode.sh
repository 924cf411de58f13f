#!/usr/bin/env bash
# Builds test/clients/go-decode (a client-go program that lists and watches with the typed clientset,
# used by test/e2e/client-decoding.test.ts) and prints the binary's path; see build-go-program.sh.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
exec bash "$here/build-go-program.sh" go-decode "$here/../test/clients/go-decode" "the client-go decoding test"
