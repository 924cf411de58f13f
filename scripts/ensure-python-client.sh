#!/usr/bin/env bash
# Makes sure a Python venv with the official Kubernetes Python client (`kubernetes` from PyPI, the
# pinned version below) exists, installing it only when missing, and prints the venv's python on
# stdout. test/e2e/client-decoding.test.ts runs test/clients/python-decode with it.
#
# Environment: CAPSTAN_PYCLIENT_VENV (default ~/.cache/capstan/pyclient-venv); pip's usual settings.
set -euo pipefail

version="36.0.3" # the client generated from Kubernetes 1.36's API, Capstan's reference
venv="${CAPSTAN_PYCLIENT_VENV:-$HOME/.cache/capstan/pyclient-venv}"
python="$venv/bin/python"

installed() {
  [[ -x "$python" ]] && [[ "$("$python" -c 'import kubernetes; print(kubernetes.__version__)' 2>/dev/null)" == "$version" ]]
}

if ! installed; then
  if ! command -v python3 >/dev/null 2>&1; then
    echo "ensure-python-client: python3 not found on PATH; the client decoding test needs it" >&2
    exit 2
  fi
  start=$SECONDS
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  if ! { [[ -x "$python" ]] || python3 -m venv "$venv"; } >"$log" 2>&1 \
    || ! "$python" -m pip install --quiet "kubernetes==$version" >>"$log" 2>&1; then
    echo "ensure-python-client: installing kubernetes==$version into $venv failed (is PyPI reachable?):" >&2
    cat "$log" >&2
    exit 1
  fi
  installed || { echo "ensure-python-client: kubernetes==$version not importable from $python after install" >&2; exit 1; }
  echo "ensure-python-client: installed kubernetes==$version into $venv in $((SECONDS - start)) s" >&2
fi
echo "$python"
