#!/usr/bin/env bash
# Builds busybox 1.37.0, the version of kube's e2e busybox image (registry.k8s.io/e2e-test-images/
# busybox:1.37.0-1 is docker's busybox:1.37.0), as one static binary, once, and prints its path. The
# pod runner (test/tools/pod-runner/container-image.ts) makes the image's root from it.
#
# Debian's busybox packages will not do: they revert upstream's ash change that keeps environment
# variables whose names are not shell names (`data-1`, `p-data-1`), and kube's envFrom tests print
# those with `sh -c env`; bookworm's 1.35 predates it. So the source is Debian trixie's busybox source
# package (fetched with apt-get through a private source list: the system's apt configuration is not
# touched), built as upstream's code with Debian's static configuration and its two build fixes.
# Needs gcc, make, bzip2 and xz. Cached under ~/.cache/capstan/busybox.
# Environment: CAPSTAN_BUSYBOX_CACHE (default ~/.cache/capstan/busybox).
set -euo pipefail
version=1.37.0
cache=${CAPSTAN_BUSYBOX_CACHE:-$HOME/.cache/capstan/busybox}
bin=$cache/busybox-$version
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi
for tool in gcc make bzip2 xz apt-get; do
  command -v "$tool" >/dev/null || { echo "build-busybox: $tool not found" >&2; exit 2; }
done
mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$work/apt/sources.list"
apt_private=(-o "Dir::Etc::sourcelist=$work/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache" -o APT::Sandbox::User=root)
echo "build-busybox: fetching Debian trixie's busybox $version source package" >&2
apt-get "${apt_private[@]}" update >&2
(cd "$work/src" && apt-get "${apt_private[@]}" source --download-only busybox >&2)
cd "$work/src"
[[ -f busybox_$version.orig.tar.bz2 ]] || { echo "build-busybox: trixie's busybox source is not $version:" busybox_* >&2; exit 2; }
tar xjf "busybox_$version.orig.tar.bz2"
tar xJf busybox_*.debian.tar.xz
cd "busybox-$version"
# Build fixes only (tc without CBQ in new kernel headers; the SHA-NI guard); none of Debian's changes to behaviour.
for p in busybox-1.36.1-no-cbq.patch libbb-sha-add-missing-sha-NI-guard.patch; do patch -p1 <"../debian/patches/$p" >&2; done
# Debian's static configuration, without its systemd syslogd socket activation (a Debian patch).
grep -v -e SYSTEMD -e CONFIG_FEATURE_SYSLOGD_ ../debian/config/pkg/static >.config
{ yes "" || true; } | make oldconfig >/dev/null
start=$SECONDS
make -j"$(nproc)" busybox >&2
echo "build-busybox: built in $((SECONDS - start)) s" >&2
cp busybox "$bin.$$.tmp"
mv "$bin.$$.tmp" "$bin"
echo "$bin"
