# SPDX-License-Identifier: BSD-3-Clause
# access.bash -- identities with pre-shared keys and access rules for the
# BATS suites that test who may do what (load after helpers)

# default_rules -- backup1 writes r1, monitor reads everything, ops is an
# admin and writes everywhere (to set the scene); nobody has a key only
default_rules() {
	cat <<'RULES'
access = (
  { identity = "backup1"; regions = [ "r1" ]; rights = [ "write" ]; },
  { identity = "monitor"; regions = [ "*" ]; rights = [ "read" ]; },
  { identity = "ops"; rights = [ "admin" ]; },
  { identity = "ops"; regions = [ "*" ]; rights = [ "write" ]; }
);
RULES
}

# access_conf -- $CONF with regions r1, r2, TLS (PSK) and the access
# rules read from stdin
access_conf() {
	local rules
	rules=$(cat)
	cat >"$CONF" <<CONF
listen = ["127.0.0.1"];
port = $PORT;
log = { level = "info"; target = "stderr"; };
max_sessions = 16;
regions = (
  { name = "r1"; type = "dir"; path = "$R1"; },
  { name = "r2"; type = "dir"; path = "$R2"; }
);
tls = { psk_file = "$W/server.psk"; };
$rules
CONF
}

# access_keys -- a PSK file $W/ID.psk for each identity, all of them in
# the daemon's $W/server.psk
access_keys() {
	: >"$W/server.psk"
	chmod 600 "$W/server.psk"
	for id in backup1 monitor ops nobody; do
		"$RPMEMCTL" -q psk-gen -i "$id" "$W/$id.psk"
		cat "$W/$id.psk" >>"$W/server.psk"
	done
}

# as ID COMMAND ARGS... -- rpmemctl COMMAND as identity ID
as() {
	local id=$1 cmd=$2
	shift 2
	run "$RPMEMCTL" "$cmd" --psk-file "$W/$id.psk" "$@"
}

