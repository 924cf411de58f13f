#!/usr/bin/env bash
# Builds test/clients/go-envtest (an unmodified-style controller-runtime envtest suite, used by
# test/e2e/envtest-dropin.test.ts and scripts/envtest-compare.sh) into a Go test binary and prints
# its path; see build-go-program.sh. Run the binary from test/clients/go-envtest with
# KUBEBUILDER_ASSETS set.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
exec bash "$here/build-go-program.sh" go-envtest "$here/../test/clients/go-envtest" "the envtest drop-in test"
