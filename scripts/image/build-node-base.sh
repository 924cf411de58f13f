#!/usr/bin/env bash
# Builds a local stand-in for the official `node:20-bookworm-slim` image and prints its name, for
# machines that cannot pull base images (the Dockerfile keeps node:20-bookworm-slim as its default;
# the image script passes this one with --build-arg NODE_IMAGE=...).
#
# Made as the official node images are made: a Debian bookworm root file system (debootstrap's
# minbase variant, from Debian's mirror), this machine's Node.js and npm under /usr/local, and a
# `node` user and group with uid/gid 1000. It also carries this machine's CA bundle (the one
# NODE_EXTRA_CA_CERTS names, default Debian's) with NODE_EXTRA_CA_CERTS set, because npm reaches
# the registry here through TLS that only that bundle trusts.
#
# Cached: the image is tagged with a hash of the Node.js binary, npm, the CA bundle and this script,
# and reused while podman still holds it (a rerun takes a second; the first build a few minutes).
# Env: CAPSTAN_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=podman-flags.sh
. "$here/podman-flags.sh"

node_bin="$(readlink -f "$(command -v node)")"
npm_dir="$(npm root -g)/npm"
ca_bundle="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"
mirror="${CAPSTAN_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
[ -f "$ca_bundle" ] || { echo "build-node-base: CA bundle $ca_bundle not found" >&2; exit 1; }
[ -f "$npm_dir/package.json" ] || { echo "build-node-base: npm not found at $npm_dir" >&2; exit 1; }

node_version="$("$node_bin" --version)"
# Contents only (not paths), so that every checkout and way of calling this script agrees on the key.
key="$( { for f in "$node_bin" "$ca_bundle" "$npm_dir/package.json" "$0"; do sha256sum <"$f"; done; echo "$mirror"; } | sha256sum | cut -c1-12)"
image="localhost/capstan-node-base:${node_version#v}-bookworm-slim-${key}"
if "${PODMAN[@]}" image exists "$image"; then
  echo "$image"
  exit 0
fi

work="$(mktemp -d /var/tmp/capstan-node-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
echo "build-node-base: debootstrap bookworm (minbase) from $mirror into $rootfs" >&2
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 20 "$work/debootstrap.log" >&2
  exit 1
}

# Node.js and npm where the official images put them.
install -D -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
mkdir -p "$rootfs/usr/local/lib/node_modules"
cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
# The machine's CA bundle, where Debian keeps its own (no ca-certificates package is installed).
install -D -m 0644 "$ca_bundle" "$rootfs/etc/ssl/certs/ca-certificates.crt"
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# As slim as the official slim image: no documentation, no package lists or caches.
rm -rf "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
  "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
  "$rootfs"/var/log/*.log "$rootfs"/tmp/*
chroot "$rootfs" /usr/local/bin/node --version >/dev/null

tar -C "$rootfs" --numeric-owner -cf "$work/rootfs.tar" .
"${PODMAN[@]}" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=${node_version#v}" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  --quiet "$work/rootfs.tar" "$image" >/dev/null
echo "build-node-base: built $image" >&2
echo "$image"
