#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# init.sh -- PID 1 of a test guest: set the guest up, run the suites, power off
#
# Started by the initramfs through switch_root, with the host's root file
# system (read-only 9p) as /. Reads its parameters from the kernel command
# line (rpmem.role, rpmem.suites, rpmem.results, rpmem.src, rpmem.build,
# rpmem.wait), mounts the writable results export, runs guest/setup.sh for
# its role and then each suite's role function, and writes
# $RESULTS/<role>.status ("done" on a complete run).

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

# shellcheck disable=SC2317 # called by the EXIT trap
poweroff_now()
{
	sync
	echo o >/proc/sysrq-trigger
	# not a wait: the power-off under way ends this process
	sleep 30
}
trap poweroff_now EXIT

VM_ROLE='' VM_SUITES='' RESULTS='' RPMEM_SRC='' RPMEM_BUILD=''
VM_WAIT_TIMEOUT=300
for arg in $(</proc/cmdline); do
	case "$arg" in
	rpmem.role=*) VM_ROLE=${arg#*=} ;;
	rpmem.suites=*) VM_SUITES=${arg#*=} ;;
	rpmem.results=*) RESULTS=${arg#*=} ;;
	rpmem.src=*) RPMEM_SRC=${arg#*=} ;;
	rpmem.build=*) RPMEM_BUILD=${arg#*=} ;;
	rpmem.wait=*) VM_WAIT_TIMEOUT=${arg#*=} ;;
	esac
done
export VM_ROLE RESULTS RPMEM_SRC RPMEM_BUILD VM_WAIT_TIMEOUT

mountpoint -q /tmp || mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /dev/pts /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm

# the results export sits at the same path as on the host
mkdir -p "$RESULTS" 2>/dev/null
if ! mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 \
	results "$RESULTS"; then
	echo "init.sh: cannot mount the results export on $RESULTS"
	exit 1
fi
exec > >(exec tee -a "$RESULTS/$VM_ROLE.log") 2>&1
# shellcheck disable=SC1091
[ -r "$RESULTS/vm.env" ] && . "$RESULTS/vm.env"
echo "init.sh: $VM_ROLE up after $(cut -d' ' -f1 /proc/uptime) s, suites $VM_SUITES"
echo running >"$RESULTS/$VM_ROLE.status"

VM_GUEST_DIR=$RPMEM_SRC/tests/vm/guest
# shellcheck source=lib.sh
. "$VM_GUEST_DIR/lib.sh"
# shellcheck source=setup.sh
. "$VM_GUEST_DIR/setup.sh"

if ! vm_setup; then
	echo "init.sh: setup of the $VM_ROLE failed"
	echo "setup-failed" >"$RESULTS/$VM_ROLE.status"
	vm_abort "setup of the $VM_ROLE failed"
	exit 1
fi
echo "init.sh: $VM_ROLE set up after $(cut -d' ' -f1 /proc/uptime) s"

IFS=, read -r -a suites <<<"$VM_SUITES"
for suite in "${suites[@]}"; do
	vm_run_suite "$suite"
done

echo "init.sh: $VM_ROLE finished after $(cut -d' ' -f1 /proc/uptime) s"
echo "done" >"$RESULTS/$VM_ROLE.status"
exit 0
