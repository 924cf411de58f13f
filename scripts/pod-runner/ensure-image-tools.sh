#!/usr/bin/env bash
# Installs, from Debian's packages when missing, the host tools the pod runner copies into its agnhost
# image (test/tools/pod-runner/container-image.ts): curl and OpenBSD nc (netcat-openbsd), which the
# image has and kube's tests call in exec hooks, probes and exec (busybox's nc has no UDP).
set -euo pipefail
missing=()
[[ -x /usr/bin/curl ]] || missing+=(curl)
[[ -x /usr/bin/nc.openbsd || -x /bin/nc.openbsd ]] || missing+=(netcat-openbsd)
((${#missing[@]} == 0)) && exit 0
echo "ensure-image-tools: installing ${missing[*]} from Debian's packages" >&2
SUDO=
[[ $(id -u) == 0 ]] || SUDO=sudo
$SUDO apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
