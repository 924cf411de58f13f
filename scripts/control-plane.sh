#!/usr/bin/env bash
# Runs a whole control plane on this machine: Capstan (embedded store unless CAPSTAN flags say otherwise),
# kube-controller-manager, kube-scheduler and kwok (simulated nodes and kubelets), each with its own
# identity, until Ctrl-C or SIGTERM stops them all. See docs/control-plane.md.
#
#   scripts/control-plane.sh [--port N] [--nodes N] [--work-dir DIR] [--bin DIR] [--server S] [-- SERVER_FLAGS...]
#
#   SERVER_FLAGS are Capstan's flags, or kube-apiserver's with --server reference.
#
#   --server S      capstan (default), or reference: the reference kube-apiserver + etcd of
#                   ../shared/reference/kube-up.sh (REFERENCE_DIR moves it) in Capstan's place, with the same
#                   components and identities (static tokens instead of certificates), to compare the two
#   --port N        Capstan's HTTPS port (default 6443; 0 picks a free one)
#   --nodes N       kwok nodes to create (default 2; 0 for none)
#   --work-dir DIR  certificates, kubeconfigs and logs (default .capstan/control-plane; kept on exit)
#   --bin DIR       where kube-controller-manager, kube-scheduler and kwok are (default $KUBE_BIN, else
#                   ~/.cache/kube-reference/bin, which ../shared/reference/build.sh fills); KCM, SCHEDULER
#                   and KWOK name single binaries instead
# Environment: KCM_ARGS, SCHEDULER_ARGS, KWOK_ARGS: extra flags for that component. CAPSTAN_NODE_ARGS: extra
# flags for the node running Capstan (e.g. "--cpu-prof --cpu-prof-dir=DIR"; its workers inherit them).
# KWOK_STAGES: a directory of kwok Stage files (default: kwok's own "fast" stages from the Go module cache).
#
# Once everything is up it prints one line, "control-plane: ready KUBECONFIG=<admin kubeconfig>", and
# waits; if a component exits, the script names it, prints the end of its log, stops the others and exits 1.
#
# Identities (client certificates issued from Capstan's CA with `capstan client-kubeconfig`):
#   kube-controller-manager  system:kube-controller-manager, with --use-service-account-credentials (each
#                            controller then acts as kube-system/<controller> ServiceAccount, which kube's
#                            bootstrap RBAC binds to system:controller:<controller>)
#   kube-scheduler           system:kube-scheduler
#   kwok                     kwok-controller, bound to the ClusterRole kwok-controller (created here)
# Capstan runs none of the controllers kube-controller-manager has (--controllers=, see the doc).
# The components' logs are kube-controller-manager.log, kube-scheduler.log and kwok.log in the work dir.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
port=6443
nodes=2
work=$root/.capstan/control-plane
bin=${KUBE_BIN:-$HOME/.cache/kube-reference/bin}
kind=capstan
while [[ $# -gt 0 ]]; do
  case $1 in
    --port) port=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --work-dir) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --server) kind=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "control-plane: unknown argument $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
capstan_flags=("$@")
[[ $kind == capstan || $kind == reference ]] || { echo "control-plane: --server is capstan or reference, not $kind" >&2; exit 2; }

kcm=${KCM:-$bin/kube-controller-manager}
scheduler=${SCHEDULER:-$bin/kube-scheduler}
kwok=${KWOK:-$bin/kwok}
for b in "$kcm" "$scheduler" "$kwok"; do
  [[ -x $b ]] || { echo "control-plane: $b not found: build it with ../shared/reference/build.sh, or pass --bin DIR" >&2; exit 2; }
done
stages=${KWOK_STAGES:-}
if [[ -z $stages ]]; then
  modcache=$(go env GOMODCACHE 2>/dev/null || echo "$HOME/go/pkg/mod")
  stages=$modcache/sigs.k8s.io/kwok@v0.8.0/kustomize/stage
fi
stage_files=()
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
  pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  if [[ -f $stages/$f ]]; then stage_files+=("$stages/$f"); fi
done
if [[ ${#stage_files[@]} -eq 0 ]]; then
  mapfile -t stage_files < <(find "$stages" -maxdepth 1 -name '*.yaml' 2>/dev/null | sort)
fi
[[ ${#stage_files[@]} -gt 0 ]] || { echo "control-plane: no kwok Stage files in $stages (set KWOK_STAGES)" >&2; exit 2; }
[[ -f $root/dist/src/main.js ]] || (cd "$root" && npx tsc -p tsconfig.json)

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
mkdir -p "$work/kcm" "$work/scheduler"
admin=$work/admin.kubeconfig
rm -f "$admin"

pids=()
declare -A name_of # pid -> component, for the line that says which one exited
starting_pid=
reference_pgid=
stop() {
  trap - EXIT INT TERM
  local p
  for p in "${pids[@]}" $starting_pid; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}" $starting_pid; do wait "$p" 2>/dev/null || true; done
  if [[ -n $reference_pgid ]]; then kill -- "-$reference_pgid" 2>/dev/null || true; fi
}
trap 'stop; exit 1' EXIT
trap 'stop; exit 0' INT TERM

log() { echo "control-plane: $*" >&2; }
# Waits (up to 120 s) until "$@" succeeds; fails if process $1 is gone.
wait_for() {
  local pid=$1 what=$2; shift 2
  for _ in $(seq 1 1200); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { log "$what exited; its log: $work/$what.log"; tail -20 "$work/$what.log" >&2; return 1; }
    sleep 0.1
  done
  log "$what not ready within 120 s; its log: $work/$what.log"
  return 1
}
# Starts component $1 (log: $work/$1.log) with the command after $2, in which @PORT@ stands for a port of its
# own, and returns once its log has line $2 (@PORT@ likewise), which it writes once it listens. free_port
# names a port that was free a moment ago; when another process takes it first, the component exits with
# "address already in use" and is started again on another port (5 tries). Sets started_pid, started_port.
start_listening() {
  local name=$1 listening=$2 arg args
  shift 2
  for _ in 1 2 3 4 5; do
    started_port=$(free_port)
    args=()
    for arg in "$@"; do args+=("${arg//@PORT@/$started_port}"); done
    "${args[@]}" >"$work/$name.log" 2>&1 &
    starting_pid=$!
    for _ in $(seq 1 1200); do
      if grep -qF "${listening//@PORT@/$started_port}" "$work/$name.log"; then
        started_pid=$starting_pid starting_pid=
        pids+=("$started_pid")
        name_of[$started_pid]=$name
        return 0
      fi
      kill -0 "$starting_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$starting_pid" 2>/dev/null; then
      log "$name not listening on :$started_port within 120 s; its log: $work/$name.log"
      return 1
    fi
    wait "$starting_pid" 2>/dev/null || true
    starting_pid=
    if ! grep -q "address already in use" "$work/$name.log"; then
      log "$name exited; its log: $work/$name.log"
      tail -20 "$work/$name.log" >&2
      return 1
    fi
    log "$name: port $started_port was taken before it listened; starting it on another"
  done
  log "$name found no free port in 5 tries"
  return 1
}

if [[ $kind == capstan ]]; then
  # With --port 0 Capstan binds a free port itself and writes it into the admin kubeconfig.
  node --max-semi-space-size=64 ${CAPSTAN_NODE_ARGS:-} "$root/dist/src/main.js" --secure-port "$port" --cert-dir "$work/pki" --authorization-mode=Node,RBAC \
    --controllers= --write-kubeconfig "$admin" "${capstan_flags[@]}" >"$work/capstan.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  name_of[$server_pid]=capstan
  wait_for "$server_pid" capstan test -s "$admin"
  server=$(sed -n 's/^ *server: *//p' "$admin" | head -1)
  wait_for "$server_pid" capstan kubectl --kubeconfig "$admin" get --raw /readyz
  log "capstan serves $server"
  issue() { node "$root/dist/src/main.js" client-kubeconfig --cert-dir "$work/pki" --server "$server" --user "$1" --out "$2"; }
  issue system:kube-controller-manager "$work/kcm.kubeconfig"
  issue system:kube-scheduler "$work/scheduler.kubeconfig"
  issue kwok-controller "$work/kwok.kubeconfig"
  sa_key=$work/pki/service-account.key
  kcm_pki=(--root-ca-file "$work/pki/ca.crt" --cluster-signing-cert-file "$work/pki/ca.crt" --cluster-signing-key-file "$work/pki/ca.key")
else
  reference=${REFERENCE_DIR:-$root/../shared/reference}
  tokens=$work/tokens.csv
  : >"$tokens"
  for user in system:kube-controller-manager system:kube-scheduler kwok-controller; do
    echo "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n'),$user,$user" >>"$tokens"
  done
  token_of() { grep ",$1,$1$" "$tokens" | cut -d, -f1; }
  read -r server admin_token reference_pgid < <(KUBE_UP_CONTROLLERS=0 KUBE_UP_TOKENS=$tokens "$reference/kube-up.sh" "${capstan_flags[@]}" 2>"$work/kube-up.log")
  [[ -n $reference_pgid ]] || { log "kube-up.sh failed:"; cat "$work/kube-up.log" >&2; exit 1; }
  reference_dir=$(sed -n 's/^kube-up: dir \([^,]*\),.*/\1/p' "$work/kube-up.log")
  server_pid=$reference_pgid
  "$reference/kubeconfig-token.sh" "$server" "$admin_token" "$admin"
  "$reference/kubeconfig-token.sh" "$server" "$(token_of system:kube-controller-manager)" "$work/kcm.kubeconfig"
  "$reference/kubeconfig-token.sh" "$server" "$(token_of system:kube-scheduler)" "$work/scheduler.kubeconfig"
  "$reference/kubeconfig-token.sh" "$server" "$(token_of kwok-controller)" "$work/kwok.kubeconfig"
  log "reference kube-apiserver serves $server (its files: $reference_dir)"
  sa_key=$reference_dir/sa.key
  kcm_pki=(--root-ca-file "$reference_dir/certs/apiserver.crt")
fi
port=${server##*:}
kubectl --kubeconfig "$admin" apply -f "$root/scripts/control-plane/kwok-rbac.yaml" >/dev/null

serving='Serving securely on 127.0.0.1:@PORT@'
# shellcheck disable=SC2086 # *_ARGS are lists of flags
start_listening kube-controller-manager "$serving" "$kcm" --kubeconfig "$work/kcm.kubeconfig" \
  --authentication-kubeconfig "$work/kcm.kubeconfig" --authorization-kubeconfig "$work/kcm.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port @PORT@ --cert-dir "$work/kcm" --use-service-account-credentials \
  --service-account-private-key-file "$sa_key" "${kcm_pki[@]}" --service-cluster-ip-range 10.96.0.0/12 ${KCM_ARGS:-}
kcm_pid=$started_pid kcm_port=$started_port
# shellcheck disable=SC2086
start_listening kube-scheduler "$serving" "$scheduler" --kubeconfig "$work/scheduler.kubeconfig" \
  --authentication-kubeconfig "$work/scheduler.kubeconfig" --authorization-kubeconfig "$work/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port @PORT@ --cert-dir "$work/scheduler" ${SCHEDULER_ARGS:-}
scheduler_pid=$started_pid scheduler_port=$started_port
stage_args=()
for f in "${stage_files[@]}"; do stage_args+=(--config "$f"); done
# kwok also serves its nodes' kubelet API (logs, exec, port-forward) on a port of its own: every pod's
# log is kwok-pod.log (CRI log lines), exec runs the command here in the work dir, and any port
# forwarded reaches the API server's port.
printf '%s stdout F kwok serves this log for every pod\n' "$(date -u +%Y-%m-%dT%H:%M:%S.000000000Z)" >"$work/kwok-pod.log"
cat >"$work/kwok-kubelet.yaml" <<EOF
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: every-pod}
spec: {logs: [{logsFile: $work/kwok-pod.log}]}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata: {name: every-pod}
spec: {execs: [{local: {workDir: $work}}]}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterPortForward
metadata: {name: every-pod}
spec: {forwards: [{target: {address: 127.0.0.1, port: $port}}]}
EOF
# shellcheck disable=SC2086
start_listening kwok '"Starting HTTP server"' "$kwok" --kubeconfig "$work/kwok.kubeconfig" \
  --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --node-lease-duration-seconds 40 --node-ip 127.0.0.1 \
  --node-port @PORT@ --config "$work/kwok-kubelet.yaml" "${stage_args[@]}" ${KWOK_ARGS:-}
kwok_pid=$started_pid

healthz() { curl -ksf "https://127.0.0.1:$1/healthz"; }
wait_for "$kcm_pid" kube-controller-manager healthz "$kcm_port"
wait_for "$scheduler_pid" kube-scheduler healthz "$scheduler_port"
log "kube-controller-manager on :$kcm_port, kube-scheduler on :$scheduler_port"

for i in $(seq 1 "$nodes"); do
  kubectl --kubeconfig "$admin" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
EOF
done
if [[ $nodes -gt 0 ]]; then
  wait_for "$kwok_pid" kwok kubectl --kubeconfig "$admin" wait --for=condition=Ready node -l type=kwok --timeout=1s
fi
log "$nodes kwok node(s) Ready"
echo "control-plane: ready KUBECONFIG=$admin"

# Until a signal, or until a component exits.
set +e
wait -n -p exited "${pids[@]}"
status=$?
what=
[[ -z ${exited:-} ]] || what=${name_of[$exited]:-}
log "${what:-a component} exited ($status); the others are stopped (logs in $work)"
[[ -z $what ]] || tail -20 "$work/$what.log" >&2
exit 1
