#!/usr/bin/env bash
# npm run conformance: kube's [Conformance] tests (e2e.test 1.36) on Capstan and, as the baseline, on
# the reference kube-apiserver, each with the same control plane around it, then one result table.
#
#   npm run conformance -- [--target T]... [--sig S[,S...] | --focus RE] [--parallel N] [--out DIR]
#                          [--timeout D] [--table-only]
#
#   --target T    reference (kube-apiserver + etcd of ../shared/reference/kube-up.sh), capstan-memory
#                 (embedded store), capstan-redis2 (--storage=redis --workers 2 on a redis-server
#                 started on a free port). Repeatable; default: all three, in that order.
#   --sig S       only these sigs (apps,cli,...): focus \[sig-(S|...)\].*\[Conformance\]
#   --focus RE    ginkgo focus instead (default \[Conformance\])
#   --skip RE     also skip these tests (e.g. '\[Serial\]'), besides the out-of-scope ones
#   --parallel N  ginkgo processes (default 1; N > 1 runs e2e.test under the ginkgo CLI, which
#                 scripts/conformance/ensure-ginkgo.sh builds once; [Serial] tests still run alone)
#   --out DIR     results (default .capstan/conformance): DIR/TARGET/{junit_01.xml,e2e.log,run.txt,
#                 control-plane/*.log,pod-runner.log}, and DIR/table.md for all targets found in DIR
#   --timeout D   ginkgo's suite timeout per target (default 3h)
#   --table-only  only rewrite DIR/table.md from the results already there
#
# Per target: scripts/control-plane.sh starts the server, kube-controller-manager (all its default
# controllers; Capstan runs none of its own, --controllers=) and kube-scheduler, each with its own
# identity (--nodes 0: no kwok node). Then one Node, fake-node (Ready, 4 CPU, 8Gi, 110 pods), and the
# test-only pod runner (test/tools/pod-runner/) as its kubelet with --no-bind: kube-scheduler binds
# pods on both sides, the runner only runs them. Tests listed in scripts/conformance/out-of-scope.json
# are skipped (they need what this set-up lacks: see the reasons there). Needs root (the pod runner's
# network namespaces) and the binaries of ~/.cache/kube-reference/bin (../shared/reference/build.sh
# --e2e). Every process started here is stopped on exit.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${KUBE_BIN:-$HOME/.cache/kube-reference/bin}
e2e=${E2E_TEST:-$bin/e2e.test}
targets=()
focus='\[Conformance\]'
parallel=1
out=$root/.capstan/conformance
timeout=3h
table_only=0
extra_skip=
while [[ $# -gt 0 ]]; do
  case $1 in
    --target) targets+=("$2"); shift 2 ;;
    --sig) focus="\\[sig-(${2//,/|})\\].*\\[Conformance\\]"; shift 2 ;;
    --focus) focus=$2; shift 2 ;;
    --skip) extra_skip=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --table-only) table_only=1; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "conformance: unknown argument $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(reference capstan-memory capstan-redis2)
for t in "${targets[@]}"; do
  case $t in reference|capstan-memory|capstan-redis2) ;; *) echo "conformance: unknown target $t" >&2; exit 2 ;; esac
done
[[ $parallel =~ ^[1-9][0-9]*$ ]] || { echo "conformance: --parallel wants a positive number" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
scope=$root/scripts/conformance/out-of-scope.json
tool=$root/dist/test/tools/conformance/main.js
[[ -f $tool && -f $root/dist/src/main.js ]] || (cd "$root" && npx tsc -p tsconfig.json)

log() { echo "conformance: $*" >&2; }

write_table() {
  # The table covers every target with results in DIR, so runs of one target at a time add up.
  node "$tool" table --dir "$out" --scope "$scope" --focus "$focus" --targets reference,capstan-memory,capstan-redis2 >/dev/null
  log "table: $out/table.md"
}
if [[ $table_only == 1 ]]; then write_table; exit 0; fi

[[ $(id -u) == 0 ]] || { log "needs root (the pod runner creates network namespaces)"; exit 2; }
[[ -x $e2e ]] || { log "$e2e not found (../shared/reference/build.sh --e2e builds it, or set E2E_TEST)"; exit 2; }
skip=$(node "$tool" skip-regex --scope "$scope")
[[ -z $extra_skip ]] || skip="$skip|$extra_skip"
ginkgo=
[[ $parallel == 1 ]] || ginkgo=$("$root/scripts/conformance/ensure-ginkgo.sh")
agnhost=$("$root/scripts/pod-runner/build-agnhost.sh")
busybox=$("$root/scripts/pod-runner/build-busybox.sh")
"$root/scripts/pod-runner/ensure-image-tools.sh"
sample_apiserver=$("$root/scripts/aggregator/build-sample-apiserver.sh")
etcd=$("$root/scripts/aggregator/ensure-etcd.sh")

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# The processes of the current target, stopped in reverse order of start.
cp_pid=
runner_pid=
redis_pid=
e2e_pid=
# e2e.test (or ginkgo and its e2e.test processes) runs in its own process group: TERM lets ginkgo
# report, KILL follows when a spec's clean-up does not end within 30 s.
stop_e2e() {
  if [[ -n $e2e_pid ]] && kill -0 -- "-$e2e_pid" 2>/dev/null; then
    kill -TERM -- "-$e2e_pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 -- "-$e2e_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$e2e_pid" 2>/dev/null || true
  fi
}
stop_target() {
  local p
  stop_e2e
  for p in "$runner_pid" "$cp_pid" "$redis_pid"; do
    if [[ -n $p ]] && kill -0 "$p" 2>/dev/null; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  e2e_pid= runner_pid= cp_pid= redis_pid=
  return 0
}
trap 'stop_target' EXIT
trap 'stop_target; exit 130' INT TERM

# Waits up to $2 seconds for "$@" (from $3) to succeed while process $1 lives.
wait_for() {
  local pid=$1 seconds=$2; shift 2
  for _ in $(seq 1 $((seconds * 10))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

run_target() {
  local t=$1 dir=$out/$1
  rm -rf "$dir"
  mkdir -p "$dir"
  local capstan_flags=() server=capstan insecure_port
  insecure_port=$(free_port)
  case $t in
    # Without kube-proxy a cluster IP leads nowhere: the reference reaches webhook and extension servers
    # at their endpoints, as Capstan reaches a cluster IP (docs/aggregation.md).
    reference) server=reference capstan_flags=(--enable-aggregator-routing=true) ;;
    capstan-memory) capstan_flags=(--insecure-port "$insecure_port") ;;
    capstan-redis2)
      local redis_port
      redis_port=$(free_port)
      redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$dir/redis.log" 2>&1 &
      redis_pid=$!
      wait_for "$redis_pid" 30 redis-cli -p "$redis_port" ping || { log "redis-server did not start"; return 1; }
      capstan_flags=(--insecure-port "$insecure_port" --storage=redis "--redis-url=redis://127.0.0.1:$redis_port" --workers 2)
      ;;
  esac

  # The fake node's kubelet API (the pod runner's container logs) is at its InternalIP, as kubeadm
  # clusters prefer it; its Hostname address names no host.
  capstan_flags+=(--kubelet-preferred-address-types=InternalIP,Hostname)
  log "$t: starting the control plane"
  "$root/scripts/control-plane.sh" --port 0 --nodes 0 --work-dir "$dir/control-plane" --server "$server" -- "${capstan_flags[@]}" \
    >"$dir/control-plane.out" 2>&1 &
  cp_pid=$!
  wait_for "$cp_pid" 600 grep -q '^control-plane: ready KUBECONFIG=' "$dir/control-plane.out" ||
    { log "$t: control plane not ready:"; tail -20 "$dir/control-plane.out" >&2; return 1; }
  local kubeconfig=$dir/control-plane/admin.kubeconfig
  local url
  url=$(kubectl --kubeconfig "$kubeconfig" config view --raw -o jsonpath='{.clusters[0].cluster.server}')

  # One node, Ready from its creation (create keeps a Node's status on both servers); the runner heartbeats it.
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  kubectl --kubeconfig "$kubeconfig" create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Node","metadata":{"name":"fake-node","labels":{"kubernetes.io/hostname":"fake-node","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}},
 "status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},
  "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"pod runner","lastHeartbeatTime":"$now","lastTransitionTime":"$now"}],
  "addresses":[{"type":"InternalIP","address":"10.0.0.10"},{"type":"Hostname","address":"fake-node"}]}}
EOF

  local runner_server runner_auth=()
  if [[ $t == reference ]]; then
    runner_server=$url
    runner_auth=(--token "$(kubectl --kubeconfig "$kubeconfig" config view --raw -o jsonpath='{.users[0].user.token}')")
  else
    runner_server=http://127.0.0.1:$insecure_port
  fi
  NODE_TLS_REJECT_UNAUTHORIZED=0 node "$root/dist/test/tools/pod-runner/main.js" --server "$runner_server" "${runner_auth[@]}" \
    --no-bind --agnhost "$agnhost" --sample-apiserver "$sample_apiserver" --etcd "$etcd" --busybox "$busybox" --apiserver "${url#https://}" \
    --node fake-node --kubelet-port 0 --work-dir "$dir/pods" >"$dir/pod-runner.log" 2>&1 &
  runner_pid=$!
  wait_for "$runner_pid" 60 grep -q 'running pods of node' "$dir/pod-runner.log" ||
    { log "$t: pod runner did not start:"; tail -20 "$dir/pod-runner.log" >&2; return 1; }

  # kubectl (which e2e.test runs) gets no discovery cache: see scripts/run-conformance.sh.
  : >"$dir/no-kubectl-cache"
  local e2e_args=(--kubeconfig "$kubeconfig" --provider skeleton --report-dir "$dir")
  local start_s load_before status=0
  start_s=$(date +%s)
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  log "$t: running e2e.test (focus $focus, parallel $parallel; log $dir/e2e.log)"
  if [[ $parallel == 1 ]]; then
    KUBECACHEDIR=$dir/no-kubectl-cache/cache setsid "$e2e" "${e2e_args[@]}" --ginkgo.focus "$focus" --ginkgo.skip "$skip" \
      --ginkgo.v --ginkgo.no-color --ginkgo.timeout "$timeout" >"$dir/e2e.log" 2>&1 &
  else
    KUBECACHEDIR=$dir/no-kubectl-cache/cache setsid "$ginkgo" --procs "$parallel" --focus "$focus" --skip "$skip" -v --no-color \
      --timeout "$timeout" "$e2e" -- "${e2e_args[@]}" >"$dir/e2e.log" 2>&1 &
  fi
  e2e_pid=$!
  # Without its kubelet the rest of the run would measure nothing: a pod runner that exits ends it.
  local runner_died=no
  while kill -0 "$e2e_pid" 2>/dev/null; do
    if ! kill -0 "$runner_pid" 2>/dev/null; then
      runner_died=yes
      log "$t: the pod runner exited (see $dir/pod-runner.log); stopping e2e.test"
      stop_e2e
      break
    fi
    sleep 2
  done
  wait "$e2e_pid" || status=$?
  e2e_pid=
  cat >"$dir/run.txt" <<EOF
started: $(date -u -d "@$start_s" +%Y-%m-%dT%H:%M:%SZ)
minutes: $(( ($(date +%s) - start_s + 30) / 60 ))
parallel: $parallel
extra skip: ${extra_skip:-none}
load average before: $load_before
load average after: $(cut -d' ' -f1-3 /proc/loadavg)
e2e.test exit: $status
pod runner exited early: $runner_died
EOF
  log "$t: e2e.test exited $status after $(( ($(date +%s) - start_s) / 60 )) min"
  stop_target
}

for t in "${targets[@]}"; do
  run_target "$t" || { log "$t: set-up failed (logs in $out/$t)"; stop_target; }
done
write_table
cat "$out/table.md"
