# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# deploy.sh -- README.md's "Deploying across hosts", run as written on the two guests
#
# The walk-through's shell blocks are marked in README.md with
# <!-- deploy:NAME --> on the line before the fence; this suite extracts
# each block and runs it with bash -e, changing only what must differ in
# the guests: 192.0.2.10 becomes $TARGET_IP, `sudo` is a function that
# runs its arguments (the guests run as root; there is no sudo), and the
# target runs the "target-nosystemd" block instead of "target-systemd"
# unless systemd runs (it never does here: init.sh is PID 1). The key
# file goes from the initiator to the target through $RESULTS, the copy
# the README leaves to scp.
#
# What installing would have done is done first: writable overlays of
# /etc, /var (target) and /root (initiator) on tmpfs, the user rpmemd from
# systemd/rpmemd.sysusers, the directories from systemd/rpmemd.tmpfiles,
# and the build tree first in PATH.
#
# Checks: each block exits 0; the walk-through never sets
# allow_insecure_remote; rpmemd runs as the user rpmemd, under its
# seccomp filter (the RDMA sessions below run with it), and listens on
# the target's address only; the target's pool file equals the
# initiator's pool.bin byte for byte; rpmemd's log shows the sessions
# over RDMA with a TLS-bound token and no plaintext connection.

DP_README=$RPMEM_SRC/README.md
DP_DIR=/tmp/deploy.suite
DP_OVL=/run/deploy-ovl

# dp_block NAME -- the shell block marked <!-- deploy:NAME --> in README.md
dp_block()
{
	awk -v mark="<!-- deploy:$1 -->" '
		$0 == mark { want = 1; next }
		want && /^```/ {
			if (inside) { inside = 0; want = 0 } else inside = 1
			next
		}
		inside { print }
	' "$DP_README"
}

# dp_run NAME -- run block NAME as the README has it (see the top)
dp_run()
{
	local name=$1 script=$DP_DIR/block.$1.sh

	{
		echo "set -e"
		echo "sudo() { \"\$@\"; }"
		echo "cd '$DP_DIR'"
		dp_block "$name" | sed "s/192\\.0\\.2\\.10/$TARGET_IP/g"
	} >"$script"
	if [ "$(dp_block "$name" | wc -l)" -eq 0 ]; then
		tap_not_ok "README block deploy:$name is missing"
		return 1
	fi
	tap_check "README block deploy:$name runs ($(dp_block "$name" |
		head -n 1 | cut -c 1-60))" bash -x "$script"
}

# dp_overlay DIR -- DIR writable: an overlay with its upper layer on tmpfs
dp_overlay()
{
	local d=$DP_OVL${1//\//_}

	mkdir -p "$d/upper" "$d/work" &&
		mount -t overlay overlay \
			-o "lowerdir=$1,upperdir=$d/upper,workdir=$d/work" "$1"
}

# dp_install DIRS... -- overlays on DIRS, then what a package install does
dp_install()
{
	local dir

	modprobe overlay || return 1
	for dir in "$@"; do
		dp_overlay "$dir" || return 1
	done
	if [ "$VM_ROLE" = target ]; then
		systemd-sysusers "$RPMEM_SRC/systemd/rpmemd.sysusers" &&
			systemd-tmpfiles --create \
				"$RPMEM_SRC/systemd/rpmemd.tmpfiles" &&
			id rpmemd && ls -ld /etc/rpmemd/tls /var/lib/rpmemd/default
	fi
}

# dp_uninstall DIRS... -- remove the overlays again
dp_uninstall()
{
	local dir

	for dir in "$@"; do
		umount -l "$dir" 2>/dev/null
	done
	rm -rf "$DP_OVL" "$DP_DIR"
}

# --- target ---------------------------------------------------------------

# dp_rpmemd_pid -- the pid of the rpmemd the walk-through started
dp_rpmemd_pid()
{
	pgrep -u rpmemd -x rpmemd | head -n 1
}

target_main()
{
	local start=target-nosystemd pid

	rm -rf "$DP_DIR"
	mkdir -p "$DP_DIR"
	export PATH=$RPMEM_BUILD:$PATH
	if ! tap_check "install: overlays on /etc and /var, user rpmemd, its directories" \
		dp_install /etc /var; then
		vm_signal up
		return
	fi
	tap_check "the walk-through never sets allow_insecure_remote" \
		sh -c "! sed -n '/^## Deploying across hosts/,/^## /p' '$DP_README' |
		       grep -q allow_insecure_remote"
	if ! vm_wait key 300; then
		tap_not_ok "the initiator made no key"
		vm_signal up
		return
	fi
	# the copy the README leaves to scp
	cp "$RESULTS/deploy.backup1.psk" "$DP_DIR/backup1.psk"
	dp_run target-key
	tap_check "the PSK file is mode 0600, owned by rpmemd, with backup1's line" \
		sh -c "[ \"\$(stat -c '%a %U' /etc/rpmemd/tls/psk)\" = '600 rpmemd' ] &&
		       grep -q '^backup1:' /etc/rpmemd/tls/psk"
	dp_run target-config
	[ -d /run/systemd/system ] && start=target-systemd
	tap_diag "systemd is $([ "$start" = target-systemd ] || echo "not ")running: block deploy:$start"
	dp_run "$start"
	if vm_retry 150 0.2 vm_listening 7636; then
		tap_ok "rpmemd listens on port 7636"
	else
		tap_not_ok "rpmemd does not listen on port 7636 (see /var/log/rpmemd.log below)"
		cat /var/log/rpmemd.log >>"$(vm_log)" 2>&1
	fi
	pid=$(dp_rpmemd_pid)
	tap_check "rpmemd runs as the user rpmemd with an unlimited locked-memory limit" \
		sh -c "[ -n '$pid' ] &&
		       grep -E '^Max locked memory +unlimited' /proc/$pid/limits"
	# the filter goes on once the RDMA listeners are up: wait for it
	tap_check "rpmemd serves under its own seccomp filter, with no_new_privs" \
		vm_retry 50 0.2 sh -c "[ -n '$pid' ] &&
		       grep -qx 'Seccomp:[[:space:]]*2' /proc/$pid/status &&
		       grep -qx 'NoNewPrivs:[[:space:]]*1' /proc/$pid/status"
	tap_check "rpmemd listens on the target's address only, RDMA included" \
		sh -c "ss -Hltn | awk '{ print \$4 }' | grep -qx '$TARGET_IP:7636' &&
		       ! ss -Hltn | awk '{ print \$4 }' | grep -E ':7636\$' |
			 grep -vqx '$TARGET_IP:7636' &&
		       grep -q 'rdma: listening on $TARGET_IP:7637' /var/log/rpmemd.log"
	vm_signal up
}

target_post()
{
	local pid log=/var/log/rpmemd.log

	[ -d "$DP_DIR" ] || return
	if [ -r "$RESULTS/deploy.pool.bin" ]; then
		tap_check "target: the pool file default/db1 is byte-identical to the initiator's pool.bin" \
			cmp /var/lib/rpmemd/default/db1 "$RESULTS/deploy.pool.bin"
	else
		tap_not_ok "the initiator left no copy of pool.bin"
	fi
	tap_check "rpmemd's log: the mirror and verify sessions ran over RDMA with a TLS-bound token" \
		sh -c "[ \$(grep -c 'rdma: session connected (.*token bound to TLS' '$log') -ge 2 ]"
	tap_check "rpmemd's log: no connection without TLS, no rejected RDMA connection" \
		sh -c "! grep -E 'does not use TLS|rdma: rejected' '$log'"
	cat "$log" >>"$(vm_log)" 2>&1
	pid=$(dp_rpmemd_pid)
	if [ -n "$pid" ]; then
		kill -TERM "$pid"
		vm_retry 100 0.2 sh -c "! kill -0 $pid 2>/dev/null"
	fi
	rm -f "$RESULTS/deploy.pool.bin" "$RESULTS/deploy.backup1.psk"
	dp_uninstall /var /etc
}

# --- initiator ------------------------------------------------------------

initiator_main()
{
	rm -rf "$DP_DIR"
	mkdir -p "$DP_DIR"
	export PATH=$RPMEM_BUILD:$PATH HOME=/root
	if ! tap_check "install: an overlay on /root (the initiator's home)" \
		dp_install /root; then
		return
	fi
	dp_run initiator-key
	cp ~/.config/rpmem/target1.psk "$RESULTS/deploy.backup1.psk"
	vm_signal key
	if ! vm_wait up 300; then
		tap_not_ok "the target's rpmemd did not come up"
		dp_uninstall /root
		return
	fi
	dp_run initiator-config
	dp_run initiator-mirror
	cp "$DP_DIR/pool.bin" "$RESULTS/deploy.pool.bin"
	tap_check "rpmemctl.conf alone gives the credentials: the pool lists without options" \
		sh -c "rpmemctl list --json '$TARGET_IP/default' |
		       jq -e '.pools[] | select(.name == \"db1\")'"
	dp_uninstall /root
}
