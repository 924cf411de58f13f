#!/usr/bin/env bash
# Builds test/clients/go-crd-field-selectors (client-go watches and dynamic informers with field
# selectors on a two-version custom resource, with its own conversion webhook; used by
# test/e2e/crd-field-selectors-client-go.test.ts) and prints the binary's path; see build-go-program.sh.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
exec bash "$here/build-go-program.sh" go-crd-field-selectors "$here/../test/clients/go-crd-field-selectors" "the client-go CRD field selector test"
