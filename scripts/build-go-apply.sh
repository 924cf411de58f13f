#!/usr/bin/env bash
# Builds test/clients/go-apply (client-go apply configurations and controller-runtime's client.Apply,
# used by test/e2e/go-apply-clients.test.ts) and prints the binary's path; see build-go-program.sh.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
exec bash "$here/build-go-program.sh" go-apply "$here/../test/clients/go-apply" "the Go server-side apply client test"
