#!/usr/bin/env bash
# Builds test/clients/go-cbor (client-go preferring CBOR, used by the CBOR client test) and prints the
# binary's path; see build-go-program.sh.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
exec bash "$here/build-go-program.sh" go-cbor "$here/../test/clients/go-cbor" "the client-go CBOR tests"
