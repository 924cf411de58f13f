#!/usr/bin/env bash
# Installs what the test suite needs beyond npm packages, on a fresh Debian machine:
# redis-server (tests spawn their own servers on free ports). kubectl and Go are part of the image.
set -euo pipefail
if ! command -v redis-server >/dev/null 2>&1; then
  echo "redis-server not found: installing it from Debian's packages" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
fi
redis-server --version >&2
# The client-go informer test drives Capstan with a small client-go program: build it once (cached
# by source hash; the first build downloads client-go from the Go module proxy, a few minutes).
bash "$(dirname "$0")/build-go-informer.sh" >/dev/null
# The client decoding test lists and watches with client-go's typed clientset (same modules, cached
# by source hash) and with the official Python client (a venv, installed once from PyPI).
bash "$(dirname "$0")/build-go-decode.sh" >/dev/null
# The CBOR client test drives Capstan with client-go preferring CBOR (same modules, cached by source hash).
bash "$(dirname "$0")/build-go-cbor.sh" >/dev/null
bash "$(dirname "$0")/build-go-apply.sh" >/dev/null
bash "$(dirname "$0")/build-go-operator.sh" >/dev/null
# The CR field selector test runs client-go watches and dynamic informers (same modules).
bash "$(dirname "$0")/build-go-crd-field-selectors.sh" >/dev/null
# The envtest drop-in test runs a controller-runtime envtest suite (a Go test binary, same modules).
bash "$(dirname "$0")/build-go-envtest.sh" >/dev/null
bash "$(dirname "$0")/ensure-python-client.sh" >/dev/null
# The metrics.k8s.io aggregation test runs a standard-library extension API server (built once). kube's
# sample API server and etcd are built by scripts/aggregator/test-sample-apiserver.sh, not here.
bash "$(dirname "$0")/build-go-metrics-fixture.sh" >/dev/null
# The Helm chart tests lint and render with helm, built from the Go module proxy when missing
# (cached under ~/.cache/capstan; exit status 3 means it cannot be built here and the test says so).
bash "$(dirname "$0")/ensure-helm.sh" >/dev/null || [ $? -eq 3 ]
# The linearizability checker (Porcupine) of the checker's tests and the failover scripts.
bash "$(dirname "$0")/build-go-linearizability-checker.sh" >/dev/null
