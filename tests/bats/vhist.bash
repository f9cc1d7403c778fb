# SPDX-License-Identifier: BSD-3-Clause
# vhist.bash -- a daemon that keeps versions, and the changes that make
# them, for the files that test a pool's history (versions.bats,
# history.bats, vrepair.bats)

# versions_conf [POLICY [QUOTA]] -- region r1 keeps versions by POLICY
# (default all), under versions_quota QUOTA if given
versions_conf() {
	local q=""
	[ -n "${2:-}" ] && q="versions_quota = \"$2\";"
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
max_sessions = 16;
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; versions = "${1:-all}";${q:+ $q} }
);
CONF
}

# change I -- write a marker into src at blocks I*7 and I*7+1
change() {
	printf 'version-%04d' "$1" |
		dd of="$W/src" bs=1 seek=$(($1 * 7 * 4096 + 100)) conv=notrunc 2>/dev/null
	printf 'second-%04d' "$1" |
		dd of="$W/src" bs=1 seek=$((($1 * 7 + 1) * 4096 + 9)) conv=notrunc 2>/dev/null
}
