#!/usr/bin/env bash
# Installs podman, runc and debootstrap from Debian's packages when any is missing (the image and chart
# scripts need them; they run as root in CI). Prints the podman version.
set -euo pipefail
missing=()
for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ensure-podman: installing ${missing[*]} from Debian's packages" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends podman runc debootstrap >/dev/null
fi
podman --version
