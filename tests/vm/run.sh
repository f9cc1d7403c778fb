#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh -- boot a target and an initiator qemu guest and run test suites in them
#
# Usage: tests/vm/run.sh [-l] [-h] [SUITE...]     (default suite: smoke)
#
# Both guests run Debian's kernel from /boot under qemu TCG, with the host's
# root file system exported read-only over 9p as their root, Soft-RoCE on a
# virtio NIC joined by a qemu socket back end, and (target only) two emulated
# PMem ranges. Each SUITE is tests/vm/suites/SUITE.sh; see README.md.
#
# Environment (all optional):
#   RPMEM_SRC        repository root seen by the suites (default: this repo)
#   RPMEM_BUILD      build tree seen by the suites (default: $RPMEM_SRC/build)
#   VM_RESULTS       per-run results directory (default: a new directory
#                    under /tmp/rpmem-vm/); must not exist or be empty
#   VM_TIMEOUT       seconds before each qemu is killed (default 1800)
#   VM_WAIT_TIMEOUT  seconds a guest waits for its peer at a sync point
#                    (default 300)
#   VM_KERNEL        kernel image (default: newest /boot/vmlinuz-*)
#   VM_TARGET_MEM    target RAM (default 2G; PMem ranges sit at 1G-1.75G)
#   VM_INITIATOR_MEM initiator RAM (default 1G)
#   VM_SMP           virtual CPUs per guest (default 1)
#   VM_NET           udp (default): -netdev socket,udp=..,localaddr=..;
#                    unix: -netdev stream over a unix socket (its transmit
#                    queue stalled in one of four full runs, see README.md);
#                    tcp: -netdev socket,listen=../connect=.. (adds ~20 ms
#                    of Nagle delay to every RDMA round trip)
#   VM_UDP_RMEM      receive buffer of each guest's UDP socket, bytes
#                    (default 16 MiB; needs root: net.core.rmem_default is
#                    raised while the two sockets are made, then restored)
#   VM_QEMU          qemu binary (default qemu-system-x86_64)
#   VM_ACCEL         qemu -accel argument (default tcg,thread=multi)
#   VM_APPEND        extra kernel command line for both guests
#   VM_KEEP_WORK=1   keep the work directory (initramfs) for inspection
#   VM_LOCK_WAIT     seconds to wait for another run.sh to finish (default 0)
# Host variables named RPMEM_*, PERFTEST_* or SUITE_* are passed on to the
# suites (through $RESULTS/vm.env).

set -euo pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# the bed's polling helpers (vm_poll, vm_wait_for, vm_alive_until)
# shellcheck source=guest/lib.sh
. "$VM_DIR/guest/lib.sh"
RPMEM_SRC=${RPMEM_SRC:-$(cd "$VM_DIR/../.." && pwd)}
case "$RPMEM_SRC/" in
/run/* | /dev/*)
	# the guests mount fresh file systems there after their root
	echo "tests/vm/run.sh: the project's tree ($RPMEM_SRC) must not live under /run or /dev" >&2
	exit 2
	;;
esac
RPMEM_BUILD=${RPMEM_BUILD:-$RPMEM_SRC/build}
VM_TIMEOUT=${VM_TIMEOUT:-1800}
VM_WAIT_TIMEOUT=${VM_WAIT_TIMEOUT:-300}
VM_TARGET_MEM=${VM_TARGET_MEM:-2G}
VM_INITIATOR_MEM=${VM_INITIATOR_MEM:-1G}
VM_SMP=${VM_SMP:-1}
VM_NET=${VM_NET:-udp}
VM_UDP_RMEM=${VM_UDP_RMEM:-16777216}
VM_QEMU=${VM_QEMU:-qemu-system-x86_64}
VM_ACCEL=${VM_ACCEL:-tcg,thread=multi}
VM_APPEND=${VM_APPEND:-}
VM_LOCK_WAIT=${VM_LOCK_WAIT:-0}

TARGET_MAC=52:54:00:77:00:01
INITIATOR_MAC=52:54:00:77:00:02
PMEM_MEMMAP="memmap=256M!1G memmap=256M!1536M"

# virtio PCI transport and 9p, in the order the initramfs must load them
INITRAMFS_MODULES="virtio_pci 9pnet_virtio 9p"

WORK=
declare -A PID=()

die()
{
	echo "vm: error: $*" >&2
	echo "vm: 0 passed, 1 failed"
	exit 2
}

missing_dep()
{
	echo "vm: error: $*" >&2
	echo "vm: the qemu test bed needs the VM packages; install them with" >&2
	echo "vm:     sudo $RPMEM_SRC/packaging/install-deps.sh" >&2
	echo "vm: 0 passed, 1 failed"
	exit 2
}

usage()
{
	sed -n '3,4p' "$0" | sed 's/^# //'
	echo "Suites:"
	list_suites | sed 's/^/  /'
}

list_suites()
{
	local f

	for f in "$VM_DIR"/suites/*.sh; do
		[ -e "$f" ] || continue
		f=${f##*/}
		echo "${f%.sh}"
	done
}

# rmem_raise -- while qemu makes its UDP sockets, sockets get VM_UDP_RMEM
# bytes of receive buffer (the default, 208 KiB, drops the frames of a
# burst whenever the receiving qemu falls behind: tests/vm/README.md)
rmem_raise()
{
	local f=/proc/sys/net/core/rmem_default cur

	[ "$VM_NET" = udp ] && [ -w "$f" ] || return 0
	cur=$(cat "$f")
	[ "$cur" -lt "$VM_UDP_RMEM" ] || return 0
	RMEM_SAVED=$cur
	echo "$VM_UDP_RMEM" >"$f" || RMEM_SAVED=
}

# rmem_restore -- the host's own default back
rmem_restore()
{
	[ -n "${RMEM_SAVED:-}" ] || return 0
	echo "$RMEM_SAVED" >/proc/sys/net/core/rmem_default || true
	RMEM_SAVED=
}

cleanup()
{
	local role

	rmem_restore
	for role in "${!PID[@]}"; do
		kill -TERM "${PID[$role]}" 2>/dev/null || true
	done
	for role in "${!PID[@]}"; do
		wait "${PID[$role]}" 2>/dev/null || true
	done
	PID=()
	if [ -n "$WORK" ] && [ -z "${VM_KEEP_WORK:-}" ]; then
		rm -rf "$WORK"
	fi
}

on_signal()
{
	echo "vm: interrupted, stopping guests" >&2
	cleanup
	echo "vm: 0 passed, 1 failed"
	exit 130
}

# newest /boot/vmlinuz-<ver> that has a matching /lib/modules/<ver>
find_kernel()
{
	local k ver

	if [ -n "${VM_KERNEL:-}" ]; then
		[ -r "$VM_KERNEL" ] || missing_dep "VM_KERNEL=$VM_KERNEL not readable"
		ver=${VM_KERNEL##*/vmlinuz-}
		KERNEL=$VM_KERNEL
		KVER=$ver
		[ -e "/lib/modules/$KVER/modules.dep" ] ||
			missing_dep "no /lib/modules/$KVER/modules.dep for $VM_KERNEL"
		return
	fi
	for k in $(printf '%s\n' /boot/vmlinuz-* | sort -rV); do
		[ -e "$k" ] || continue
		ver=${k#/boot/vmlinuz-}
		[ -e "/lib/modules/$ver/modules.dep" ] || continue
		KERNEL=$k
		KVER=$ver
		[ -r "$KERNEL" ] ||
			die "$KERNEL is not readable (run as root or chmod it)"
		return
	done
	missing_dep "no /boot/vmlinuz-* with matching /lib/modules (package linux-image-amd64)"
}

check_deps()
{
	local t miss=

	command -v "$VM_QEMU" >/dev/null ||
		missing_dep "$VM_QEMU not found (package qemu-system-x86)"
	for t in busybox cpio gzip modprobe timeout ss flock; do
		command -v "$t" >/dev/null || miss="$miss $t"
	done
	# tools the guests run from the host root
	for t in ip rdma rping ib_write_bw ib_write_lat ndctl daxctl mkfs.ext4 \
		 nc bats; do
		command -v "$t" >/dev/null || miss="$miss $t"
	done
	[ -z "$miss" ] || missing_dep "missing host tools:$miss"
	file -L "$(command -v busybox)" 2>/dev/null | grep -q 'statically linked' ||
		missing_dep "busybox is not static (package busybox-static)"
	find_kernel
	case "$RPMEM_SRC$RPMEM_BUILD" in
	*[[:space:]]*) die "RPMEM_SRC/RPMEM_BUILD must not contain blanks" ;;
	esac
}

# tiny initramfs: static busybox, the virtio/9p modules and /init
build_initramfs()
{
	local root=$WORK/initramfs m

	mkdir -p "$root"/{bin,dev,proc,sys,mnt,modules}
	cp "$(command -v busybox)" "$root/bin/busybox"
	# the dependency order of the modules, each once
	for m in $INITRAMFS_MODULES; do
		modprobe -S "$KVER" --show-depends "$m" ||
			die "modprobe -S $KVER --show-depends $m failed"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' >"$WORK/mods"
	[ -s "$WORK/mods" ] || die "modprobe --show-depends found no modules for $KVER"
	: >"$root/modules/order"
	while read -r m; do
		cp "$m" "$root/modules/"
		echo "${m##*/}" >>"$root/modules/order"
	done <"$WORK/mods"
	cp "$VM_DIR/guest/initramfs-init" "$root/init"
	chmod 755 "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) \
		>"$WORK/initramfs.cpio.gz"
}

# the environment of the suites, sourced by guest/init.sh
write_env()
{
	local v

	echo "# generated by tests/vm/run.sh"
	for v in $(compgen -e | grep -E '^(RPMEM|PERFTEST|SUITE)_'); do
		printf 'export %s=%q\n' "$v" "${!v}"
	done
	printf 'export %s=%q\n' RPMEM_SRC "$RPMEM_SRC" RPMEM_BUILD "$RPMEM_BUILD"
}

port_busy()
{
	[ -n "$(ss -Htuan "sport = :$1" 2>/dev/null)" ]
}

# target_listening -- the target's qemu has its link's socket: the unix
# one, or a listener on $PORT
target_listening()
{
	if [ "$VM_NET" = unix ]; then
		[ -S "$LINK_SOCK" ]
	else
		[ -n "$(ss -Htuln "sport = :$PORT" 2>/dev/null)" ]
	fi
}

# port_bound PORT -- a UDP socket is bound to PORT here
port_bound()
{
	[ -n "$(ss -Huan "sport = :$1" 2>/dev/null)" ]
}

# start the target guest on a free port (its socket back end listens or
# binds there); sets INITIATOR_NET for the initiator's back end
start_target()
{
	local _

	for _ in 1 2 3 4 5; do
		PORT=$((20000 + (RANDOM * 7 + $$) % 40000))
		port_busy "$PORT" && continue
		PORT2=$((PORT + 1))
		LINK_SOCK=$WORK/link.$PORT.sock
		case "$VM_NET" in
		unix)
			TARGET_NET=stream,server=on,addr.type=unix,addr.path=$LINK_SOCK
			INITIATOR_NET=stream,server=off,addr.type=unix,addr.path=$LINK_SOCK
			;;
		udp)
			port_busy "$PORT2" && continue
			TARGET_NET=socket,udp=127.0.0.1:$PORT2,localaddr=127.0.0.1:$PORT
			INITIATOR_NET=socket,udp=127.0.0.1:$PORT,localaddr=127.0.0.1:$PORT2
			;;
		*)
			TARGET_NET=socket,listen=127.0.0.1:$PORT
			INITIATOR_NET=socket,connect=127.0.0.1:$PORT
			;;
		esac
		start_guest target "$VM_TARGET_MEM" "$TARGET_MAC" \
			"$TARGET_NET" "$PMEM_MEMMAP"
		vm_alive_until -t 10 "${PID[target]}" target_listening &&
			return 0
		kill "${PID[target]}" 2>/dev/null || true
		wait "${PID[target]}" 2>/dev/null || true
		unset 'PID[target]'
		echo "vm: target qemu did not listen on port $PORT, retrying" >&2
	done
	die "could not start the target qemu, see $RESULTS/target.qemu.log"
}

# start_guest ROLE MEM MAC NETDEV_ADDR EXTRA_APPEND
start_guest()
{
	local role=$1 mem=$2 mac=$3 addr=$4 extra=$5
	local append

	append="console=ttyS0 panic=-1 oops=panic quiet loglevel=4"
	append+=" mitigations=off nokaslr $extra $VM_APPEND"
	append+=" rpmem.role=$role rpmem.suites=$SUITES_CSV"
	append+=" rpmem.results=$RESULTS rpmem.src=$RPMEM_SRC"
	append+=" rpmem.build=$RPMEM_BUILD rpmem.init=$VM_DIR/guest/init.sh"
	append+=" rpmem.wait=$VM_WAIT_TIMEOUT"

	timeout -k 10 "$VM_TIMEOUT" "$VM_QEMU" \
		-name "rpmem-$role" -nodefaults -no-reboot \
		-machine pc -accel "$VM_ACCEL" -cpu max -smp "$VM_SMP" -m "$mem" \
		-kernel "$KERNEL" -initrd "$WORK/initramfs.cpio.gz" \
		-append "$append" \
		-display none -monitor none \
		-serial "file:$RESULTS/$role.console" \
		-device virtio-rng-pci \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$RESULTS,mount_tag=results,security_model=none,multidevs=remap" \
		-virtfs "local,path=$RPMEM_SRC,mount_tag=srctree,security_model=none,readonly=on,multidevs=remap" \
		-netdev "$addr,id=n0" \
		-device "virtio-net-pci,netdev=n0,mac=$mac" \
		</dev/null >"$RESULTS/$role.qemu.log" 2>&1 &
	PID[$role]=$!
	STARTED[$role]=$SECONDS
}

guest_done()
{
	[ "$(cat "$RESULTS/$1.status" 2>/dev/null)" = "done" ]
}

# nic_stalled ROLE -- ROLE's guest's virtio NIC stopped transmitting: its
# kernel logs "NETDEV WATCHDOG: ... transmit queue 0 timed out" every 5 s
# from then on (qemu's emulated link, not rpmem; tests/vm/README.md)
nic_stalled()
{
	grep -q "NETDEV WATCHDOG" "$RESULTS/$1.console" 2>/dev/null
}

# wait for both guests; a guest that dies without finishing takes its peer
# down after a short grace period, since the peer can only wait for it
wait_guests()
{
	local deadline= stalled= tick=0

	# each qemu runs under `timeout $VM_TIMEOUT`: the bound is beyond it
	vm_poll $(((VM_TIMEOUT + 300) * 2)) 0.5 "" guests_gone
}

# guests_gone -- one look at the guests for wait_guests (its deadline,
# stalled and tick): reap those that exited, stop the other once its
# deadline passed; true when none is left
guests_gone()
{
	local role rc peer

	[ ${#PID[@]} -gt 0 ] || return 0
	# a stalled link never comes back: every later test would wait
	# out its timeouts, so the guests are stopped (check.sh boots
	# them once more when the bed's own checks fail)
	tick=$((tick + 1))
	if [ -z "$stalled" ] && [ $((tick % 10)) -eq 0 ]; then
		for role in target initiator; do
			nic_stalled "$role" || continue
			stalled=$role
			echo "vm: the $role guest's NIC stopped transmitting (see $RESULTS/$role.console); stopping the guests in 30 s" >&2
			deadline=$((SECONDS + 30))
			break
		done
	fi
	for role in "${!PID[@]}"; do
		kill -0 "${PID[$role]}" 2>/dev/null && continue
		rc=0
		wait "${PID[$role]}" || rc=$?
		unset "PID[$role]"
		RC[$role]=$rc
		echo "vm: $role guest exited (status $rc) after" \
		     "$((SECONDS - STARTED[$role])) s" >&2
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "vm: $role guest timed out after $VM_TIMEOUT s" >&2
		fi
		if guest_done "$role"; then
			deadline=${deadline:-$((SECONDS + 60))}
		else
			deadline=$((SECONDS + 5))
		fi
	done
	if [ -n "$deadline" ] && [ "$SECONDS" -ge "$deadline" ]; then
		for peer in "${!PID[@]}"; do
			echo "vm: stopping $peer guest" >&2
			kill -TERM "${PID[$peer]}" 2>/dev/null || true
		done
		deadline=$((SECONDS + 15))
	fi
	[ ${#PID[@]} -eq 0 ]
}

# print all TAP lines renumbered, then the summary; sets FAILED/PASSED
report()
{
	local suite role f line n=0 lines desc

	PASSED=0
	FAILED=0
	SKIPPED=0
	BED_PASSED=0
	BED_FAILED=0
	emit()
	{
		n=$((n + 1))
		# smoke, perftest and the link's check are the bed's (kernel
		# RDMA, PMem, qemu's NIC), not rpmem's
		local bed=0
		case "$2" in smoke/* | perftest/* | bed/*) bed=1 ;; esac
		if [ "$1" = ok ]; then
			echo "ok $n - $2"
			case "$2" in
			*"# SKIP"* | *"# skip"*) SKIPPED=$((SKIPPED + 1)) ;;
			*) if [ $bed = 1 ]; then BED_PASSED=$((BED_PASSED + 1)); else PASSED=$((PASSED + 1)); fi ;;
			esac
		else
			if [ $bed = 1 ]; then BED_FAILED=$((BED_FAILED + 1)); else FAILED=$((FAILED + 1)); fi
			echo "not ok $n - $2"
		fi
	}
	for role in target initiator; do
		if [ "${RC[$role]:-1}" -eq 124 ] || [ "${RC[$role]:-1}" -eq 137 ]; then
			emit "not ok" "$role guest timed out after $VM_TIMEOUT s"
		elif ! guest_done "$role"; then
			emit "not ok" "$role guest did not finish (status '$(cat "$RESULTS/$role.status" 2>/dev/null || echo none)'), see $RESULTS/$role.console"
		fi
		if nic_stalled "$role"; then
			emit "not ok" "bed/$role: the guest's NIC stopped transmitting ($(grep -m1 -o 'transmit queue [0-9]* timed out' "$RESULTS/$role.console"), $RESULTS/$role.console); the tests after it failed for that"
		else
			emit ok "bed/$role: the guest's NIC kept transmitting"
		fi
	done
	for suite in "${SUITES[@]}"; do
		lines=0
		for role in target initiator; do
			f=$RESULTS/$suite.$role.tap
			[ -e "$f" ] || continue
			while IFS= read -r line; do
				case "$line" in
				"not ok "*)
					desc=${line#not ok }
					desc=${desc#"${desc%%[!0-9]*}"}
					desc=${desc# }; desc=${desc#- }
					emit "not ok" "$suite/$role: $desc"
					lines=$((lines + 1))
					;;
				"ok "*)
					desc=${line#ok }
					desc=${desc#"${desc%%[!0-9]*}"}
					desc=${desc# }; desc=${desc#- }
					emit ok "$suite/$role: $desc"
					lines=$((lines + 1))
					;;
				"# suite finished") ;;
				"#"*)
					echo "$line"
					;;
				esac
			done <"$f"
			grep -qx '# suite finished' "$f" ||
				emit "not ok" "$suite/$role: suite did not finish"
		done
		[ "$lines" -gt 0 ] || emit "not ok" "$suite: no results"
	done
	echo "1..$n"
}

main()
{
	local s

	while [ $# -gt 0 ]; do
		case "$1" in
		-h | --help) usage; exit 0 ;;
		-l | --list) list_suites; exit 0 ;;
		--) shift; break ;;
		-*) usage >&2; exit 2 ;;
		*) break ;;
		esac
	done
	[ $# -gt 0 ] || set -- smoke
	SUITES=("$@")
	for s in "${SUITES[@]}"; do
		[[ "$s" =~ ^[A-Za-z0-9_-]+$ ]] || die "bad suite name '$s'"
		[ -f "$VM_DIR/suites/$s.sh" ] ||
			die "no suite '$s' ($VM_DIR/suites/$s.sh); have: $(list_suites | tr '\n' ' ')"
	done
	SUITES_CSV=$(IFS=,; echo "${SUITES[*]}")

	check_deps

	# one pair of guests at a time: the machine has two cores
	mkdir -p /tmp/rpmem-vm
	exec 9>/tmp/rpmem-vm/lock
	flock -w "$VM_LOCK_WAIT" 9 ||
		die "another tests/vm/run.sh is running (lock /tmp/rpmem-vm/lock)"

	if [ -z "${VM_RESULTS:-}" ]; then
		VM_RESULTS=$(mktemp -d "/tmp/rpmem-vm/results.$(date +%Y%m%d-%H%M%S).XXXX")
	fi
	mkdir -p "$VM_RESULTS"
	RESULTS=$(cd "$VM_RESULTS" && pwd)
	[ -z "$(ls -A "$RESULTS")" ] || die "results directory $RESULTS is not empty"
	case "$RESULTS" in
	*[[:space:],]*) die "results path must not contain blanks or commas" ;;
	esac
	mkdir -p "$RESULTS/.sync"
	write_env >"$RESULTS/vm.env"
	ln -sfn "$RESULTS" /tmp/rpmem-vm/latest

	WORK=$(mktemp -d /tmp/rpmem-vm/work.XXXX)
	declare -gA RC=() STARTED=()
	trap cleanup EXIT
	trap on_signal INT TERM HUP

	echo "# kernel $KERNEL, suites: ${SUITES[*]}"
	echo "# results in $RESULTS"
	build_initramfs
	local t0=$SECONDS
	rmem_raise
	start_target
	start_guest initiator "$VM_INITIATOR_MEM" "$INITIATOR_MAC" \
		"$INITIATOR_NET" ""
	if [ -n "${RMEM_SAVED:-}" ]; then
		# until the initiator's socket exists (it binds PORT2)
		vm_wait_for -t 10 port_bound "$PORT2" || true
		rmem_restore
	fi
	wait_guests
	echo "# guests ran for $((SECONDS - t0)) s"
	report
	# the bed's own checks apart; a broken bed fails the run all the same
	echo "vm-bed: $BED_PASSED passed, $BED_FAILED failed"
	echo "vm: $PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ] && [ "$BED_FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
}

main "$@"
