#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# install.bats -- make install puts everything in place; the library is a proper shared library

load helpers

@test "make install DESTDIR PREFIX installs binaries, library, header, pkg-config, man pages, unit, config, bash completion" {
	S=$BATS_TEST_TMPDIR/stage
	run make -C "$TOP" install DESTDIR="$S" PREFIX=/usr
	[ "$status" -eq 0 ]
	for f in usr/bin/rpmemctl usr/sbin/rpmemd usr/lib/librpmemctl.so.1 \
		usr/lib/librpmemctl.so usr/include/librpmemctl.h \
		usr/lib/pkgconfig/librpmemctl.pc usr/share/man/man1/rpmemctl.1 \
		usr/share/man/man3/librpmemctl.3 usr/share/man/man5/rpmemd.conf.5 \
		usr/share/man/man8/rpmemd.8 usr/lib/systemd/system/rpmemd.service \
		usr/lib/rpmem/librpmem_preload.so usr/share/man/man7/rpmem_preload.7 \
		etc/rpmemd/rpmemd.conf \
		usr/share/bash-completion/completions/rpmemctl \
		usr/lib/ocf/resource.d/rpmem/rpmem; do
		[ -e "$S/$f" ] || { echo "missing $f"; return 1; }
	done
	grep -q '^ExecStart=/usr/sbin/rpmemd' "$S/usr/lib/systemd/system/rpmemd.service"
	grep -q '^libdir=/usr/lib' "$S/usr/lib/pkgconfig/librpmemctl.pc"
}

@test "an application builds against the installed header and pkg-config file" {
	S=$BATS_TEST_TMPDIR/stage
	make -C "$TOP" install DESTDIR="$S" PREFIX=/usr >/dev/null
	export PKG_CONFIG_SYSROOT_DIR=$S PKG_CONFIG_PATH=$S/usr/lib/pkgconfig
	flags=$(pkg-config --cflags --libs librpmemctl)
	run cc -o "$BATS_TEST_TMPDIR/app" "$TOP/tests/example/replica_example.c" $flags
	[ "$status" -eq 0 ]
}

# rpmemctl is built on the public API only: cmd/ compiles against the
# installed librpmemctl.h alone (the Makefile gives it -Ilib -Icmd, no
# lib/common) and links against the installed shared library, which
# exports nothing else; besides it, only libxxhash (cmd/xstream.c hashes
# export streams with it)
@test "rpmemctl builds from cmd/ against only the installed header and shared library" {
	S=$BATS_TEST_TMPDIR/stage
	make -C "$TOP" install DESTDIR="$S" PREFIX=/usr >/dev/null
	export PKG_CONFIG_SYSROOT_DIR=$S PKG_CONFIG_PATH=$S/usr/lib/pkgconfig
	flags=$(pkg-config --cflags --libs librpmemctl)
	app=$BATS_TEST_TMPDIR/rpmemctl
	run cc -std=gnu11 -D_GNU_SOURCE -DRPMEM_VERSION='"public"' \
		-o "$app" "$TOP"/cmd/*.c -I"$TOP/cmd" $flags -lxxhash -lm
	echo "$output"
	[ "$status" -eq 0 ]
	# every library symbol it uses comes from a version node of the map
	run objdump -T "$app"
	[ -z "$(grep -E 'UND.*rpmem(ctl)?_' <<<"$output" | grep -v 'LIBRPMEMCTL_[0-9]')" ]
	grep -q 'LIBRPMEMCTL_2.*rpmemctl_target_parse' <<<"$output"
	export LD_LIBRARY_PATH=$S/usr/lib
	run "$app" --version
	[ "$status" -eq 0 ]
	[[ "$output" == *public* ]]
	run "$app" psk-gen -q -i app@h1 "$BATS_TEST_TMPDIR/k.psk"
	[ "$status" -eq 0 ]
	grep -qE '^app@h1:[0-9a-f]{64}$' "$BATS_TEST_TMPDIR/k.psk"
	run "$app" create host/r1/.. 1M
	[ "$status" -eq 2 ]
	[[ "$output" == *"host/r1/.."* ]]
}

@test "the shared library exports only rpmemctl_ symbols and is librpmemctl.so.1" {
	run sh -c "nm -D --defined-only '$BUILD/librpmemctl.so.1' | awk '\$2 == \"T\" {print \$3}'"
	[ "$status" -eq 0 ]
	[ -n "$output" ]
	refute grep -v '^rpmemctl_' <<<"$output"
	run readelf -d "$BUILD/librpmemctl.so.1"
	[[ "$output" == *"SONAME"*"librpmemctl.so.1"* ]]
}

@test "the shared library exports exactly the symbols of its map, each under its own version node" {
	# "NODE symbol" from lib/librpmemctl.map and from the library
	map=$(awk '/^LIBRPMEMCTL_[0-9]+ *\{/ { node = $1 }
		/^[ \t]+rpmemctl_[a-z0-9_]+;/ { sub(";", "", $1); print node, $1 }' \
		"$TOP/lib/librpmemctl.map" | LC_ALL=C sort)
	lib=$(objdump -T "$BUILD/librpmemctl.so.1" |
		awk '$4 != "*UND*" && $4 != "*ABS*" && $NF ~ /^rpmemctl_/ {
			print $(NF - 1), $NF }' | LC_ALL=C sort)
	[ -n "$map" ]
	diff <(echo "$map") <(echo "$lib")
	# both nodes are there, the new one inheriting the released one
	grep -q '^LIBRPMEMCTL_1 rpmemctl_pool_sync$' <<<"$lib"
	grep -q '^LIBRPMEMCTL_2 rpmemctl_pool_sync2$' <<<"$lib"
	run readelf -V "$BUILD/librpmemctl.so.1"
	[[ "$output" == *"Name: LIBRPMEMCTL_2"*"Parent 1: LIBRPMEMCTL_1"* ]]
}

@test "rpmemd.conf example passes rpmemd -n once its region exists" {
	R=$BATS_TEST_TMPDIR/default
	mkdir -p "$R"
	sed "s|/var/lib/rpmemd/default|$R|" "$TOP/etc/rpmemd.conf" >"$BATS_TEST_TMPDIR/e.conf"
	run "$RPMEMD" -n -c "$BATS_TEST_TMPDIR/e.conf"
	[ "$status" -eq 0 ]
	[[ "$output" == *"configuration OK"* ]]
}
