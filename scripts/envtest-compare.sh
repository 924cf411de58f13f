#!/usr/bin/env bash
# Times the envtest suite of test/clients/go-envtest on Capstan (an `envtest-assets` directory) and
# on the reference kube-apiserver and etcd, RUNS times each (alternating), and prints the medians of
#   start: envtest's Environment.Start (control plane up, /healthz answered, CRD served, webhook installed)
#   stop:  envtest's Environment.Stop (SIGTERM to both processes until they exit)
#   total: the whole suite (start, tests, stop)
# Needs a built Capstan (npm run build) and Go; REFERENCE_ASSETS is a directory with the reference
# kube-apiserver and etcd (default ~/.cache/kube-reference/bin).
#
# Usage: scripts/envtest-compare.sh [RUNS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
reference="${REFERENCE_ASSETS:-$HOME/.cache/kube-reference/bin}"
for bin in kube-apiserver etcd; do
  [[ -x "$reference/$bin" ]] || { echo "envtest-compare: $reference/$bin not found (set REFERENCE_ASSETS)" >&2; exit 2; }
done
suite="$(bash scripts/build-go-envtest.sh)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
node dist/src/main.js envtest-assets "$work/capstan" >/dev/null

# run NAME ASSETS: one run of the suite; appends "start stop total" to $work/NAME.times.
run() {
  local out
  if ! out="$(cd "$work" && KUBEBUILDER_ASSETS="$2" "$suite" -test.count=1 2>"$work/$1.err")"; then
    echo "envtest-compare: the suite failed on $1:" >&2
    echo "$out" >&2
    tail -20 "$work/$1.err" >&2
    exit 1
  fi
  sed -n 's/^ENVTEST_TIMING {"startMs":\([0-9]*\),"stopMs":\([0-9]*\),"totalMs":\([0-9]*\)}$/\1 \2 \3/p' <<<"$out" >>"$work/$1.times"
}

# median COLUMN FILE
median() {
  cut -d' ' -f"$1" "$2" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

for ((i = 1; i <= runs; i++)); do
  run capstan "$work/capstan"
  run reference "$reference"
done
printf '%-10s %5s %11s %10s %11s   %s\n' backend runs 'start (ms)' 'stop (ms)' 'total (ms)' 'each run: start/stop/total'
for name in capstan reference; do
  printf '%-10s %5s %11s %10s %11s   %s\n' "$name" "$runs" "$(median 1 "$work/$name.times")" "$(median 2 "$work/$name.times")" "$(median 3 "$work/$name.times")" \
    "$(tr ' \n' '/ ' <"$work/$name.times")"
done
