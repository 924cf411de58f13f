#!/usr/bin/env bash
# Runs kube's conformance tests (e2e.test) against a fresh Capstan, in one command:
#   scripts/run-conformance.sh FOCUS [extra e2e.test flags...]
# e.g. scripts/run-conformance.sh '\[sig-api-machinery\] (Garbage collector|Namespaces).*\[Conformance\]'
#
# Starts Capstan (dist/src/main.js, embedded store, every controller it has) on a free loopback port,
# creates a fake Ready Node (no kubelet behind it: the suite wants one schedulable node), runs e2e.test
# with --ginkgo.focus FOCUS, stops Capstan and exits with e2e.test's status.
#
# Environment:
#   E2E_TEST        the e2e.test binary (default: on PATH, else ~/.cache/kube-reference/bin/e2e.test,
#                   which ../shared/reference/build.sh --e2e builds)
#   CAPSTAN_FLAGS   extra flags for Capstan (e.g. --controllers=-garbage-collector)
#   KEEP_DIR=1      keep the work directory (kubeconfig, Capstan's log, e2e.test's output)
#   KCM_CONTROLLERS also run kube-controller-manager with these controllers only (its --controllers,
#                   e.g. replicationcontroller,replicaset,deployment), for tests that wait for a
#                   controller Capstan does not have; Capstan's own garbage collector stays in charge.
#                   KCM is the binary (default: on PATH, else next to the default e2e.test).
#   POD_RUNNER=1    also run the test-only pod runner (test/tools/pod-runner/) as the fake node's
#                   kubelet and scheduler: it binds pending pods to fake-node and runs pods whose
#                   containers are all agnhost or pause images as host processes (agnhost built by
#                   scripts/pod-runner/build-agnhost.sh, one network namespace per pod on bridge
#                   capstan-pods, 10.244.0.0/16), for tests that deploy a webhook pod. Needs root.
#                   Deployments and Services also need KCM_CONTROLLERS=deployment,replicaset,endpoint,endpointslice.
#                   The sample-apiserver and etcd images of the Aggregator test run natively built
#                   binaries (scripts/aggregator/build-sample-apiserver.sh, ensure-etcd.sh), and pods
#                   reach Capstan at the kubernetes Service's cluster IP (the runner forwards it).
#
# Capstan serves HTTPS on a free port with certificates generated in the work directory; e2e.test
# uses the admin kubeconfig it writes (client certificate in system:masters). The script's own calls
# (readiness, the fake Node) go to the plain-HTTP loopback port. Capstan publishes kube-root-ca.crt
# in every namespace, which the framework waits for in every test's setup.
# Not part of `npm test`: e2e.test is built from Go sources and absent on a fresh machine.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  sed -n '2,4p' "$0" >&2
  exit 2
fi
focus=$1
shift

root=$(cd "$(dirname "$0")/.." && pwd)
e2e=${E2E_TEST:-$(command -v e2e.test || echo "$HOME/.cache/kube-reference/bin/e2e.test")}
[[ -x $e2e ]] || { echo "run-conformance: e2e.test not found (set E2E_TEST, or run ../shared/reference/build.sh --e2e)" >&2; exit 2; }
[[ -f $root/dist/src/main.js ]] || (cd "$root" && npx tsc -p tsconfig.json)

work=$(mktemp -d "${TMPDIR:-/tmp}/capstan-conformance.XXXXXX")
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port=$(free_port)
secure_port=$(free_port)
kubeconfig=$work/kubeconfig
pid=
kcm_pid=
runner_pid=

cleanup() {
  if [[ -n $runner_pid ]] && kill -0 "$runner_pid" 2>/dev/null; then
    kill "$runner_pid"
    wait "$runner_pid" 2>/dev/null || true
  fi
  if [[ -n $kcm_pid ]] && kill -0 "$kcm_pid" 2>/dev/null; then
    kill "$kcm_pid"
    wait "$kcm_pid" 2>/dev/null || true
  fi
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  fi
  if [[ ${KEEP_DIR:-0} == 1 ]]; then echo "run-conformance: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# shellcheck disable=SC2086 # CAPSTAN_FLAGS is a list of flags
node "$root/dist/src/main.js" --insecure-port "$port" --secure-port "$secure_port" --cert-dir "$work/pki" --log-level=error \
  --kubelet-preferred-address-types=InternalIP,Hostname \
  --write-kubeconfig "$kubeconfig" ${CAPSTAN_FLAGS:-} >"$work/capstan.log" 2>&1 &
pid=$!

# Ready once it answers /readyz and has written the kubeconfig (polled, up to 60 s).
for _ in $(seq 1 600); do
  if [[ -f $kubeconfig ]] && curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
  kill -0 "$pid" 2>/dev/null || { cat "$work/capstan.log" >&2; echo "run-conformance: Capstan exited" >&2; exit 1; }
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { echo "run-conformance: Capstan not ready on port $port" >&2; exit 1; }

# A node registers with its status (create keeps it), so one POST makes it Ready and schedulable.
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' "http://127.0.0.1:$port/api/v1/nodes" --data @- <<EOF
{"apiVersion":"v1","kind":"Node","metadata":{"name":"fake-node","labels":{"kubernetes.io/hostname":"fake-node","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}},
 "status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},
  "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"fake node: no kubelet runs containers","lastHeartbeatTime":"$now","lastTransitionTime":"$now"}],
  "addresses":[{"type":"InternalIP","address":"10.0.0.10"},{"type":"Hostname","address":"fake-node"}]}}
EOF

if [[ -n ${KCM_CONTROLLERS:-} ]]; then
  kcm=${KCM:-$(command -v kube-controller-manager || echo "$HOME/.cache/kube-reference/bin/kube-controller-manager")}
  [[ -x $kcm ]] || { echo "run-conformance: kube-controller-manager not found (set KCM)" >&2; exit 2; }
  "$kcm" --kubeconfig "$kubeconfig" --controllers="$KCM_CONTROLLERS" --leader-elect=false --secure-port=0 >"$work/kcm.log" 2>&1 &
  kcm_pid=$!
fi

# kubectl (which e2e.test runs) gets no discovery cache: a cache written before a test created its
# CRD hides the CRD's short names from kubectl (it expands them from the cache before asking the
# server, kubernetes/kubernetes#65517), which fails "CustomResourcePublishOpenAPI ... same resource
# name as built-in" whenever an earlier test ran kubectl, against kube-apiserver as against Capstan.
# KUBECACHEDIR under a regular file cannot be created, so every kubectl call reads live discovery.
: >"$work/no-kubectl-cache"
export KUBECACHEDIR=$work/no-kubectl-cache/cache

if [[ ${POD_RUNNER:-0} == 1 ]]; then
  [[ $(id -u) == 0 ]] || { echo "run-conformance: POD_RUNNER=1 needs root (network namespaces)" >&2; exit 2; }
  agnhost=$("$root/scripts/pod-runner/build-agnhost.sh")
  sample_apiserver=$("$root/scripts/aggregator/build-sample-apiserver.sh")
  etcd=$("$root/scripts/aggregator/ensure-etcd.sh")
  busybox=$("$root/scripts/pod-runner/build-busybox.sh")
  "$root/scripts/pod-runner/ensure-image-tools.sh"
  node "$root/dist/test/tools/pod-runner/main.js" --server "http://127.0.0.1:$port" --agnhost "$agnhost" \
    --sample-apiserver "$sample_apiserver" --etcd "$etcd" --busybox "$busybox" --apiserver "127.0.0.1:$secure_port" \
    --node fake-node --kubelet-port 0 --work-dir "$work/pods" >"$work/pod-runner.log" 2>&1 &
  runner_pid=$!
  # Started once it logs that it runs the node's pods (polled, up to 30 s).
  for _ in $(seq 1 300); do
    grep -q 'running pods of node' "$work/pod-runner.log" && break
    kill -0 "$runner_pid" 2>/dev/null || { cat "$work/pod-runner.log" >&2; echo "run-conformance: pod runner exited" >&2; exit 1; }
    sleep 0.1
  done
fi

echo "run-conformance: Capstan on https://127.0.0.1:$secure_port (work dir $work)" >&2
status=0
"$e2e" --kubeconfig "$kubeconfig" --provider skeleton \
  --report-dir "$work" --ginkgo.focus "$focus" --ginkgo.v --ginkgo.no-color --ginkgo.timeout 2h "$@" || status=$?
exit $status
