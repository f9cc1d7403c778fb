#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# install-deps.sh -- install every build and test dependency of rpmem (Debian)
#
# Usage: packaging/install-deps.sh [--no-vm]
#   --no-vm   skip the packages only the qemu test bed (tests/vm) needs
set -eu

BUILD="build-essential pkgconf libpmem2-dev libpmem-dev libconfig-dev
	librpma-dev libxxhash-dev libndctl-dev libdaxctl-dev uuid-dev
	libibverbs-dev librdmacm-dev libssl-dev libsystemd-dev libseccomp-dev"
TEST="libcmocka-dev bats pmdk-tools libpmemobj-dev rsync netcat-openbsd
	clang libclang-rt-14-dev
	iperf3 procps openssl
	openssh-server openssh-client
	iproute2 xxd jq bc python3 python3-cryptography bash-completion strace
	restic borgbackup resource-agents libxml2-utils
	dpkg-dev debhelper lintian fakeroot systemd"
VM="qemu-system-x86 linux-image-amd64 busybox-static rdma-core
	ibverbs-utils rdmacm-utils ibverbs-providers ndctl daxctl perftest
	kmod e2fsprogs cpio pacemaker corosync crmsh"

PKGS="$BUILD $TEST"
[ "${1:-}" = "--no-vm" ] || PKGS="$PKGS $VM"

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || {
		echo "install-deps.sh: run as root (or install sudo)" >&2
		exit 1
	}
	SUDO=sudo
fi

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps.sh: all dependencies present"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
