#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# package.bats -- the Debian packages: built from a copy of the tree
# (packaging/build-deb.sh), lintian clean, and, installed into a scratch
# root, they run the demo and carry a unit systemd accepts

load helpers

# the packages are built once for the whole file (the tree compiles once)
setup_file() {
	command -v dpkg-buildpackage >/dev/null || return 0
	export DEBS=$BATS_FILE_TMPDIR/deb
	export ROOT=$BATS_FILE_TMPDIR/root
	git -C "$TOP" status --porcelain --ignored >"$BATS_FILE_TMPDIR/before" \
		2>/dev/null || true
	# the unit tests run in make check-unit already
	DEB_BUILD_OPTIONS=nocheck "$TOP/packaging/build-deb.sh" "$DEBS" \
		>"$BATS_FILE_TMPDIR/build.log" 2>&1
	echo $? >"$BATS_FILE_TMPDIR/build.rc"
	git -C "$TOP" status --porcelain --ignored >"$BATS_FILE_TMPDIR/after" \
		2>/dev/null || true
	mkdir -p "$ROOT"
	for d in "$DEBS"/*.deb; do
		[[ $d == *-dbgsym_* ]] || dpkg -x "$d" "$ROOT"
	done
}

setup() {
	command -v dpkg-buildpackage >/dev/null ||
		skip "dpkg-buildpackage is missing (packaging/install-deps.sh installs dpkg-dev)"
	setup_env
	MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
}

teardown() { teardown_daemon; }

@test "build-deb.sh builds the four packages and leaves the source tree as it was" {
	if [ "$(cat "$BATS_FILE_TMPDIR/build.rc")" != 0 ]; then
		tail -n 40 "$BATS_FILE_TMPDIR/build.log"
		return 1
	fi
	for p in rpmemd rpmemctl librpmemctl1 librpmemctl-dev; do
		ls "$DEBS/${p}_"*.deb >/dev/null ||
			{ echo "no $p package"; return 1; }
	done
	[ ! -e "$TOP/debian" ]
	diff "$BATS_FILE_TMPDIR/before" "$BATS_FILE_TMPDIR/after"
}

@test "lintian finds no error and no warning in the packages" {
	[ -f "$DEBS/lintian.txt" ] || skip "lintian is missing (packaging/install-deps.sh installs it)"
	cat "$DEBS/lintian.txt"
	refute grep -E '^[EW]: ' "$DEBS/lintian.txt"
	grep -q '^lintian: exit 0' "$BATS_FILE_TMPDIR/build.log"
}

@test "each package holds its files: daemon and unit, CLI, completion and the OCF resource agent, library, headers" {
	run dpkg -c "$DEBS"/rpmemd_*.deb
	[[ "$output" == *"./usr/sbin/rpmemd"* ]]
	[[ "$output" == *"./usr/lib/systemd/system/rpmemd.service"* ]]
	[[ "$output" == *"./usr/lib/sysusers.d/rpmemd.conf"* ]]
	[[ "$output" == *"./etc/rpmemd/rpmemd.conf"* ]]
	run dpkg -c "$DEBS"/rpmemctl_*.deb
	[[ "$output" == *"./usr/bin/rpmemctl"* ]]
	[[ "$output" == *"./usr/share/bash-completion/completions/rpmemctl"* ]]
	# the Pacemaker resource agent ocf:rpmem:rpmem, executable
	grep -qE '^-rwxr-xr-x .* \./usr/lib/ocf/resource\.d/rpmem/rpmem$' \
		<<<"$output"
	run dpkg -c "$DEBS"/librpmemctl1_*.deb
	[[ "$output" == *"./usr/lib/$MA/librpmemctl.so.1"* ]]
	run dpkg -c "$DEBS"/librpmemctl-dev_*.deb
	[[ "$output" == *"./usr/include/librpmemctl.h"* ]]
	[[ "$output" == *"./usr/lib/$MA/pkgconfig/librpmemctl.pc"* ]]
	# rpmemd depends on libsystemd (sd_notify) and libseccomp (its
	# filter), the library on neither
	run dpkg-deb -f "$DEBS"/rpmemd_*.deb Depends
	[[ "$output" == *libsystemd0* ]]
	[[ "$output" == *libseccomp2* ]]
	run dpkg-deb -f "$DEBS"/librpmemctl1_*.deb Depends
	[[ "$output" != *libsystemd0* ]]
	[[ "$output" != *libseccomp2* ]]
}

@test "the installed rpmemd and rpmemctl run the demo: mirror, sync, verify, status, stop" {
	# tests/demo.sh runs \$RPMEM_BUILD/rpmemd and \$RPMEM_BUILD/rpmemctl
	mkdir -p "$W/bin"
	ln -s "$ROOT/usr/sbin/rpmemd" "$W/bin/rpmemd"
	ln -s "$ROOT/usr/bin/rpmemctl" "$W/bin/rpmemctl"
	run env RPMEM_BUILD="$W/bin" RPMEM_DEMO_PORT="$PORT" \
		LD_LIBRARY_PATH="$ROOT/usr/lib/$MA" "$TOP/tests/demo.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"replica is byte-identical"* ]]
	[[ "$output" == *"demo complete"* ]]
	"$ROOT/usr/bin/rpmemctl" --version | grep -q "$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")"
}

@test "an application builds on the installed -dev package and mirrors through the installed library" {
	start_daemon
	export PKG_CONFIG_SYSROOT_DIR=$ROOT
	export PKG_CONFIG_PATH=$ROOT/usr/lib/$MA/pkgconfig
	flags=$(pkg-config --cflags --libs librpmemctl)
	cc -o "$W/app" "$TOP/tests/example/replica_example.c" $flags
	LD_LIBRARY_PATH=$ROOT/usr/lib/$MA ldd "$W/app" |
		grep -q "librpmemctl.so.1 => $ROOT/usr/lib/$MA/"
	LD_LIBRARY_PATH=$ROOT/usr/lib/$MA "$W/app" "$W/app.pool" "$T/r1/app"
	cmp "$W/app.pool" "$R1/app"
}

@test "the packaged resource agent gives its meta-data, valid against ra-api-1.dtd, with every action of a promotable clone" {
	command -v xmllint >/dev/null && [ -f /usr/share/resource-agents/ra-api-1.dtd ] ||
		skip "xmllint or resource-agents' ra-api-1.dtd is missing (Debian packages libxml2-utils, resource-agents)"
	run env OCF_ROOT=/usr/lib/ocf "$ROOT/usr/lib/ocf/resource.d/rpmem/rpmem" meta-data
	[ "$status" -eq 0 ]
	(cd /usr/share/resource-agents && xmllint --noout --valid - <<<"$output")
	for a in start stop promote demote monitor notify meta-data validate-all; do
		grep -q "<action name=\"$a\"" <<<"$output"
	done
}

@test "systemd-analyze verify accepts the installed unit, a Type=notify service with a watchdog" {
	command -v systemd-analyze >/dev/null ||
		skip "systemd-analyze is missing (packaging/install-deps.sh installs systemd)"
	unit=$ROOT/usr/lib/systemd/system/rpmemd.service
	grep -qx 'Type=notify' "$unit"
	grep -qx 'NotifyAccess=main' "$unit"
	grep -qx 'WatchdogSec=30s' "$unit"
	grep -qx 'ExecStart=/usr/sbin/rpmemd -c /etc/rpmemd/rpmemd.conf' "$unit"
	# the same unit with the scratch root's paths (rpmemd is not in /usr)
	mkdir -p "$W/units"
	sed "s|/usr/sbin/rpmemd|$ROOT/usr/sbin/rpmemd|g" "$unit" \
		>"$W/units/rpmemd.service"
	run systemd-analyze verify --man=no "$W/units/rpmemd.service"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# and what ExecStartPre runs accepts the packaged configuration
	sed "s|/var/lib/rpmemd/default|$R1|" "$ROOT/etc/rpmemd/rpmemd.conf" \
		>"$W/pkg.conf"
	run "$ROOT/usr/sbin/rpmemd" -n -c "$W/pkg.conf"
	[ "$status" -eq 0 ]
}
