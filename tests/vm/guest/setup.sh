# SPDX-License-Identifier: BSD-3-Clause
# setup.sh -- network, Soft-RoCE and (target) PMem set-up of a test guest
#
# Sourced by init.sh; vm_setup exports the variables suites rely on:
#   TARGET_IP INITIATOR_IP MY_IP PEER_IP  guest addresses on eth0
#   RDMA_DEV      Soft-RoCE device (rxe0) on eth0 of either guest
#   RDMA_GID_INDEX  index of this guest's RoCE v2 IPv4 GID on RDMA_DEV (for
#                 tools that do not use rdma_cm, e.g. perftest without -R)
#   PMEM_DEV      /dev/pmem0 (target): fsdax namespace0.0
#   FSDAX_DIR     /run/rpmem/fsdax (target): ext4 on PMEM_DEV, mounted -o dax
#   DEVDAX        /dev/dax1.0 (target): devdax namespace1.0, 4K aligned
# On the initiator the PMem variables name the target's paths.

export TARGET_IP=192.168.77.1
export INITIATOR_IP=192.168.77.2
export RDMA_DEV=rxe0
export PMEM_DEV=/dev/pmem0
export FSDAX_DIR=/run/rpmem/fsdax
export DEVDAX=/dev/dax1.0

if [ "$VM_ROLE" = target ]; then
	export MY_IP=$TARGET_IP PEER_IP=$INITIATOR_IP
else
	export MY_IP=$INITIATOR_IP PEER_IP=$TARGET_IP
fi

vm_step()
{
	echo "+ $*"
	"$@" || {
		echo "setup: '$*' failed"
		return 1
	}
}

vm_setup_net()
{
	hostname "$VM_ROLE"
	ip link set lo up
	vm_step modprobe virtio_net || return 1
	vm_wait_for -t 30 test -e /sys/class/net/eth0 || true
	vm_step ip addr add "$MY_IP/24" dev eth0 || return 1
	vm_step ip link set eth0 up || return 1
}

vm_setup_rdma()
{
	vm_step modprobe -a rdma_rxe ib_uverbs rdma_ucm || return 1
	vm_step rdma link add "$RDMA_DEV" type rxe netdev eth0 || return 1
	rdma link show
	ulimit -l unlimited
	vm_find_gid || return 1
}

# vm_find_gid -- set RDMA_GID_INDEX to the RoCE v2 GID of MY_IP
vm_find_gid()
{
	local gid a b c d

	IFS=. read -r a b c d <<<"$MY_IP"
	gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
		"$a" "$b" "$c" "$d")
	vm_wait_for -t 30 vm_gid_of "$gid" && return 0
	echo "setup: no RoCE v2 GID for $MY_IP on $RDMA_DEV"
	return 1
}

# vm_gid_of GID -- set RDMA_GID_INDEX to the index of GID if it is there
# as a RoCE v2 one
vm_gid_of()
{
	local port=/sys/class/infiniband/$RDMA_DEV/ports/1 f n

	for f in "$port"/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = "$1" ] || continue
		n=${f##*/}
		[ "$(cat "$port/gid_attrs/types/$n" 2>/dev/null)" = "RoCE v2" ] ||
			continue
		export RDMA_GID_INDEX=$n
		echo "RoCE v2 GID of $MY_IP: index $n"
		return 0
	done
	return 1
}

vm_setup_pmem()
{
	# --ignore-install: skip Debian's "ndctl load-keys" hook for libnvdimm
	vm_step modprobe --ignore-install -a nd_e820 nd_pmem dax_pmem \
		device_dax || return 1
	udevadm settle 2>/dev/null
	vm_wait_for -t 30 test -e /sys/bus/nd/devices/namespace1.0 || true
	echo "namespaces as the kernel found them:"
	ndctl list -N
	vm_step ndctl create-namespace -f -e namespace0.0 -m fsdax -M mem \
		>/dev/null || return 1
	vm_step ndctl create-namespace -f -e namespace1.0 -m devdax -a 4K \
		>/dev/null || return 1
	vm_wait_for -t 30 test -e "$PMEM_DEV" -a -e "$DEVDAX" || true
	vm_step mkfs.ext4 -q -F -b 4096 "$PMEM_DEV" || return 1
	mkdir -p "$FSDAX_DIR"
	vm_step mount -o dax "$PMEM_DEV" "$FSDAX_DIR" || return 1
	ndctl list -N
}

vm_setup()
{
	vm_setup_net || return 1
	vm_setup_rdma || return 1
	if [ "$VM_ROLE" = target ]; then
		vm_setup_pmem || return 1
	fi
	return 0
}
