#!/usr/bin/env bash
# Prints the path of a static busybox for the pod runner's busybox image (and the shell tools of its
# agnhost image): Debian's busybox-static, installed with apt-get when no static busybox is found.
# Also installs Debian's bash-static, the image's /bin/sh (see test/tools/pod-runner/container-image.ts).
set -euo pipefail
SUDO=
[[ $(id -u) == 0 ]] || SUDO=sudo
if [[ ! -x /bin/bash-static ]]; then
  echo "ensure-busybox: installing Debian's bash-static" >&2
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq bash-static >&2
fi
static() { [[ -x $1 ]] && file -L "$1" 2>/dev/null | grep -q 'statically linked'; }
for b in /bin/busybox /usr/bin/busybox; do
  if static "$b"; then echo "$b"; exit 0; fi
done
echo "ensure-busybox: no static busybox; installing Debian's busybox-static" >&2
$SUDO apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq busybox-static >&2
for b in /bin/busybox /usr/bin/busybox; do
  if static "$b"; then echo "$b"; exit 0; fi
done
echo "ensure-busybox: busybox-static installed but no static busybox found" >&2
exit 2
