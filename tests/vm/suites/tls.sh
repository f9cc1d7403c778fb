# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# tls.sh -- TLS (PSK) control connections with the RDMA data plane, end to end
#
# Target: build/rpmemd on $TARGET_IP only, TLS with a PSK file holding two
# identities (backup1, reader), a dir region "dir" in /tmp; two
# rdma_selftest servers in TLS mode (one exposure per TLS session, the
# token bound to that session), one of them exposing read-only.
# Initiator:
#   1. lib/rdma/ alone (rdma_selftest): a client with its own session's
#      blob connects and verifies; the same blob replayed in another TLS
#      session, the nonce presented as a plain token, a v2 blob without
#      TLS and a connection 11 s after the exposure (past the 10 s token
#      lifetime) are all refused; a read-only exposure refuses an RDMA
#      write. The target checks afterwards that the mapping holds exactly
#      what the one accepted client wrote (the refused ones wrote nothing)
#      and that the read-only mapping is still zero.
#   2. rpmemctl --psk-file over --transport rdma: mirror, sync after a
#      change, verify, sync --pull into a fresh file; after mirror and
#      sync the target compares its pool file with the initiator's
#      (request markers, as in rdma.sh); status --json shows the session
#      on rdma; rpmemd logs every RDMA session with a TLS-bound token.
#   3. A read-only identity (rpmemd.conf access list) is refused a
#      mirror and the pool is unchanged, while it may still verify over
#      rdma; this runs only if `rpmemd -n` accepts an access list, and
#      is skipped with the reason otherwise.
#
# Needs: make, make build/tests/rdma_selftest.

TL_RPMEMD=$RPMEM_BUILD/rpmemd
TL_CTL=$RPMEM_BUILD/rpmemctl
TL_ST=$RPMEM_BUILD/tests/rdma_selftest
TL_SYNC=$RESULTS/.sync
TL_TMP=/tmp/tls.suite
TL_PID=
TL_ST_PID_rw=
TL_ST_PID_ro=
# selftest servers: RDMA port, TLS port
TL_ST_PORTS="7711 7712"
TL_RO_PORTS="7713 7714"

tl_out()
{
	echo "$RESULTS/tls.$1"
}

# --- target ---------------------------------------------------------------

# tl_keys -- PSK files for backup1 (read/write) and reader, the daemon's
# file with both lines; the initiator gets copies through $RESULTS
tl_keys()
{
	local id

	for id in backup1 reader; do
		"$TL_CTL" -q psk-gen -i "$id" "$TL_TMP/$id.psk" || return 1
		cat "$TL_TMP/$id.psk" >>"$TL_TMP/server.psk"
		cp "$TL_TMP/$id.psk" "$RESULTS/tls.$id.psk"
	done
	chmod 600 "$TL_TMP/server.psk"
}

# tl_write_configs -- main.conf (backup1 may write: a TLS daemon without
# access rules allows nothing); access.conf adds a read-only identity
tl_write_configs()
{
	cat >"$TL_TMP/base.conf" <<EOF
listen = ["$TARGET_IP"];
tls = { psk_file = "$TL_TMP/server.psk"; };
regions = ( { name = "dir"; type = "dir"; path = "$TL_TMP/dir"; } );
EOF
	cat "$TL_TMP/base.conf" - >"$TL_TMP/main.conf" <<EOF
access = (
	{ identity = "backup1"; regions = ["*"]; rights = ["read", "write"]; }
);
EOF
	cat "$TL_TMP/base.conf" - >"$TL_TMP/access.conf" <<EOF
access = (
	{ identity = "backup1"; regions = ["*"]; rights = ["read", "write"]; },
	{ identity = "reader"; regions = ["dir"]; rights = ["read"]; }
);
EOF
	cat "$TL_TMP"/*.conf >>"$(vm_log)"
}

# tl_start NAME -- rpmemd with NAME.conf; wait until both its TCP and
# its RDMA listener are up (not with a request: an access list may
# restrict what backup1 can ask)
tl_start()
{
	echo "=== rpmemd -c $1.conf ($(date +%T))" >>"$(tl_out rpmemd.log)"
	"$TL_RPMEMD" -d -c "$TL_TMP/$1.conf" >>"$(tl_out rpmemd.log)" 2>&1 &
	TL_PID=$!
	vm_retry 100 0.2 tl_up
}

# tl_up -- rpmemd runs and listens on 7636 (TCP) and 7637 (RDMA)
tl_up()
{
	kill -0 "$TL_PID" 2>/dev/null && vm_listening 7636 &&
		vm_listening 7637
}

# tl_stop -- SIGTERM rpmemd and wait; its exit status
tl_stop()
{
	local rc=0

	[ -n "$TL_PID" ] || return 0
	kill -TERM "$TL_PID" 2>/dev/null
	wait "$TL_PID" || rc=$?
	TL_PID=
	return "$rc"
}

# tl_req_cmp -- the target's pool file equals the initiator's copy
tl_req_cmp()
{
	local what

	what=$(cat "$RESULTS/tls.expect.what" 2>/dev/null)
	tap_check "target: pool file dir/tp is byte-identical to the initiator's file ($what)" \
		cmp "$TL_TMP/dir/tp" "$RESULTS/tls.expect.bin"
	vm_signal rep-cmp
}

# tl_req_authz -- restart rpmemd with the access list if it takes one
tl_req_authz()
{
	local why

	if why=$("$TL_RPMEMD" -n -c "$TL_TMP/access.conf" 2>&1); then
		tl_stop
		if tl_start access; then
			echo yes >"$RESULTS/tls.authz"
			tap_ok "rpmemd restarts with an access list (reader: read only)"
		else
			echo "no: rpmemd did not start with access.conf" \
				>"$RESULTS/tls.authz"
			tap_not_ok "rpmemd restarts with an access list"
		fi
	else
		echo "no: this rpmemd has no access list: ${why//$'\n'/ }" \
			>"$RESULTS/tls.authz"
	fi
	vm_signal rep-authz
}

# tl_serve -- act on the initiator's requests until it is done
tl_serve()
{
	vm_serve tl_requests
}

# tl_requests -- act on the requests the initiator made since the last look
tl_requests()
{
	local req

	for req in cmp authz; do
		if [ -e "$TL_SYNC/$VM_SUITE.initiator.req-$req" ]; then
			rm -f "$TL_SYNC/$VM_SUITE.initiator.req-$req" \
				"$TL_SYNC/$VM_SUITE.target.rep-$req"
			"tl_req_$req"
		fi
	done
}

# tl_st_server NAME RDMA-PORT TLS-PORT ARGS... -- a selftest server in
# TLS mode; pid in TL_ST_PID_<NAME>
tl_st_server()
{
	local name=$1 port=$2 tport=$3 out

	shift 3
	out=$(tl_out "st-$name")
	"$TL_ST" server "$TARGET_IP" "$port" 4M --tls-psk \
		"$TL_TMP/backup1.psk" --tls-port "$tport" "$@" \
		>"$out.server.out" 2>"$out.server.err" &
	printf -v "TL_ST_PID_$name" %s "$!"
	vm_retry 300 0.2 grep -q '^tls=listening' "$out.server.out"
}

# tl_st_hash NAME -- the hash of a selftest server's mapping (SIGUSR1)
tl_st_hash()
{
	local pid=TL_ST_PID_$1 out

	out=$(tl_out "st-$1").server.out
	kill -USR1 "${!pid}" 2>/dev/null || return 1
	vm_retry 100 0.2 grep -q '^hash=' "$out" || return 1
	sed -n 's/^hash=//p' "$out" | tail -n 1
}

target_main()
{
	local t

	rm -rf "$TL_TMP"
	mkdir -p "$TL_TMP/dir"
	for t in "$TL_RPMEMD" "$TL_CTL" "$TL_ST"; do
		if [ ! -x "$t" ]; then
			tap_not_ok "$t missing (make && make rdma-selftest)"
			vm_signal up
			return
		fi
	done
	tap_check "psk-gen makes the keys of backup1 and reader" tl_keys
	tl_write_configs
	if tl_start main; then
		tap_ok "rpmemd starts with TLS (PSK) on $TARGET_IP and a dir region"
	else
		tap_not_ok "rpmemd starts with TLS (PSK) on $TARGET_IP"
	fi
	tap_check "rpmemd listens for RDMA on $TARGET_IP:7637" \
		grep -q "rdma: listening on $TARGET_IP:7637" "$(tl_out rpmemd.log)"
	# shellcheck disable=SC2086
	tl_st_server rw $TL_ST_PORTS --sessions 5 ||
		tap_not_ok "selftest server (TLS) did not start"
	# shellcheck disable=SC2086
	tl_st_server ro $TL_RO_PORTS --readonly ||
		tap_not_ok "selftest server (TLS, read-only) did not start"
	vm_signal up
	tl_serve
}

target_post()
{
	local h want rc=0

	[ -d "$TL_TMP" ] || return
	# the one accepted selftest client left its pattern; the refused
	# ones changed nothing
	h=$(tl_st_hash rw)
	want=$(sed -n 's/^hash=//p' "$(tl_out st-rw).client.out" 2>/dev/null)
	if [ -n "$want" ] && [ "$h" = "$want" ]; then
		tap_ok "target: the selftest mapping holds exactly what the accepted TLS session wrote ($h)"
	else
		tap_not_ok "target: selftest mapping hash '$h', accepted client '$want'"
	fi
	head -c 4M /dev/zero >"$TL_TMP/zero"
	h=$(tl_st_hash ro)
	want=$("$TL_ST" hash "$TL_TMP/zero" 4M | sed -n 's/^hash=//p')
	if [ -n "$h" ] && [ "$h" = "$want" ]; then
		tap_ok "target: the read-only selftest mapping is unchanged (zero)"
	else
		tap_not_ok "target: read-only mapping hash '$h', zero '$want'"
	fi
	kill -TERM "$TL_ST_PID_rw" "$TL_ST_PID_ro" 2>/dev/null
	wait "$TL_ST_PID_rw" "$TL_ST_PID_ro" 2>/dev/null
	tl_stop || rc=$?
	if [ "$rc" -eq 0 ]; then
		tap_ok "rpmemd stops on SIGTERM with status 0"
	else
		tap_not_ok "rpmemd stops on SIGTERM with status 0 (got $rc)"
	fi
	rm -rf "$TL_TMP" "$RESULTS"/tls.*.bin "$RESULTS"/tls.*.psk
}

# --- initiator ------------------------------------------------------------

tl_ctl()
{
	"$TL_CTL" --psk-file "$TL_TMP/backup1.psk" "$@"
}

# tl_ask NAME -- ask the target to act; wait for its reply
tl_ask()
{
	rm -f "$TL_SYNC/$VM_SUITE.target.rep-$1"
	vm_signal "req-$1"
	vm_wait "rep-$1" 300
}

# tl_target_cmp FILE WHAT -- the target compares its pool with FILE
tl_target_cmp()
{
	cp "$1" "$RESULTS/tls.expect.bin"
	echo "$2" >"$RESULTS/tls.expect.what"
	tl_ask cmp || tap_not_ok "target did not compare ($2)"
}

# tl_json DESC FILTER CMD... -- CMD succeeds and its JSON satisfies FILTER
tl_json()
{
	local desc=$1 filter=$2 out rc=0

	shift 2
	echo "### $desc: $*" >>"$(vm_log)"
	out=$("$@" 2>>"$(vm_log)") || rc=$?
	echo "$out" >>"$(vm_log)"
	if [ "$rc" -eq 0 ] && jq -e "$filter" <<<"$out" >/dev/null 2>&1; then
		tap_ok "$desc"
	else
		tap_not_ok "$desc (exit $rc, see $VM_SUITE.$VM_ROLE.log)"
	fi
}

# tl_st_client NAME DESC WANT-RC GREP BLOB ARGS... -- a selftest client in
# TLS mode against server NAME; ok if it exits WANT-RC and its output has
# GREP
tl_st_client()
{
	local name=$1 desc=$2 want=$3 pat=$4 blob=$5 out rc=0 tport

	shift 5
	out=$(tl_out "st-$name").client
	[ "$name" = rw ] && tport=${TL_ST_PORTS#* } || tport=${TL_RO_PORTS#* }
	echo "### $desc" >>"$out.err"
	timeout 120 "$TL_ST" client "$TARGET_IP" "$blob" --quick \
		--tls-psk "$TL_TMP/backup1.psk" --tls-port "$tport" "$@" \
		>"$out.now" 2>>"$out.err" || rc=$?
	cat "$out.now" >>"$out.all"
	if [ "$rc" -eq "$want" ] && cat "$out.now" "$out.err" | grep -q "$pat"
	then
		tap_ok "$desc"
	else
		tap_not_ok "$desc (exit $rc, expected $want; see ${out##*/}.err)"
	fi
}

# tl_selftest -- lib/rdma/ with TLS-bound tokens, no daemon
tl_selftest()
{
	local blob0 err=$RESULTS/tls.st-rw.server.err

	tl_st_client rw "selftest: a client with its own TLS session's blob connects, writes and reads back" \
		0 'result=ok' -
	cp "$(tl_out st-rw).client.now" "$(tl_out st-rw).client.out"
	blob0=$(sed -n 's/^blob=//p' "$(tl_out st-rw).server.out" | head -n 1)
	tap_check "selftest: the target sent a version 2 (TLS-bound) blob" \
		grep -q 'version=2' "$(tl_out st-rw).client.out"
	tl_st_client rw "selftest: that blob replayed in another TLS session is refused" \
		3 'rejected' "$blob0"
	tl_st_client rw "selftest: the blob's nonce presented as a plain token (no TLS) is refused" \
		3 'rejected' - --raw-nonce
	echo "### v2 blob without TLS" >>"$(tl_out st-rw).client.err"
	tap_check "selftest: a TLS-bound blob without a TLS session fails on the initiator" \
		sh -c "! timeout 60 '$TL_ST' client '$TARGET_IP' '$blob0' --quick >'$(tl_out st-rw).notls.out' 2>&1 &&
		       grep 'bound the session token to a TLS session' '$(tl_out st-rw).notls.out'"
	tl_st_client rw "selftest: a connection 11 s after the exposure (token lifetime 10 s) is refused" \
		3 'rejected' - --wait 11
	tap_check "selftest: the target logged two wrong tokens and one expired token" \
		sh -c "[ \$(grep -c 'rejected a connection.*unknown or wrong session token' '$err') -eq 2 ] &&
		       [ \$(grep -c 'rejected a connection.*session token expired' '$err') -eq 1 ]"
	tl_st_client ro "selftest: a read-only exposure refuses an RDMA write" \
		0 'write_refused=ok' - --write-refused
}

# tl_st_session -- the target $T shows the session of the mirror into
# dir/st on rdma (in $seen)
tl_st_session()
{
	seen=$(tl_ctl status --json "$T" 2>/dev/null |
	       jq -c '.sessions[] | select(.region == "dir" and .pool == "st" and
					   .transport == "rdma")' 2>/dev/null)
	[ -n "$seen" ]
}

# tl_rpmemctl -- rpmemctl and rpmemd over TLS with the RDMA data plane
tl_rpmemctl()
{
	local T=$TARGET_IP seen='' pid log
	local MIB=$((1024 * 1024))

	log=$(tl_out rpmemd.log)
	head -c $((16 * MIB)) /dev/urandom >"$TL_TMP/a.bin"
	tl_json "mirror over TLS with --transport rdma" \
		'.transport == "rdma" and .identical' \
		tl_ctl mirror --json --transport rdma "$TL_TMP/a.bin" "$T/dir/tp"
	tl_target_cmp "$TL_TMP/a.bin" "after mirror"

	head -c 100 /dev/urandom |
		dd of="$TL_TMP/a.bin" bs=1 seek=$((5 * MIB + 3)) conv=notrunc \
			status=none
	tl_json "sync over TLS with --transport rdma sends the changed block" \
		'.transport == "rdma" and .blocks_changed == 1 and .identical' \
		tl_ctl sync --json --transport rdma "$TL_TMP/a.bin" "$T/dir/tp"
	tl_target_cmp "$TL_TMP/a.bin" "after sync"

	tl_json "verify over TLS with --transport rdma: identical" \
		'.transport == "rdma" and .identical' \
		tl_ctl verify --json --transport rdma "$TL_TMP/a.bin" "$T/dir/tp"

	rm -f "$TL_TMP/fresh.bin"
	tl_json "sync --pull over TLS with --transport rdma into a fresh file" \
		'.transport == "rdma"' \
		tl_ctl sync --json --pull --transport rdma "$TL_TMP/fresh.bin" \
		"$T/dir/tp"
	tap_check "the pulled file is byte-identical to the pool the target compared" \
		cmp "$TL_TMP/a.bin" "$TL_TMP/fresh.bin"

	# status while a session is open: a larger mirror in the background,
	# paced to last 16 s (one status poll is a process and a handshake)
	head -c $((32 * MIB)) /dev/urandom >"$TL_TMP/st.bin"
	tl_ctl -q mirror --bwlimit 2M --transport rdma "$TL_TMP/st.bin" "$T/dir/st" \
		>>"$(vm_log)" 2>&1 &
	pid=$!
	vm_alive_until "$pid" tl_st_session 2>>"$(vm_log)" || true
	wait "$pid"
	if [ -n "$seen" ]; then
		tap_ok "status --json over TLS shows the mirror's session on rdma"
	else
		tap_not_ok "status --json never showed a dir/st session on rdma"
	fi
	rm -f "$TL_TMP/st.bin"

	tap_check "rpmemd logs each RDMA session with a TLS-bound token, and no rejected connection" \
		sh -c "[ \$(grep -c 'rdma: session connected (.*token bound to TLS' '$log') -ge 5 ] &&
		       ! grep -q 'rdma: rejected a connection' '$log'"
	tap_check "rpmemd authenticated the sessions as backup1 by PSK" \
		grep -q "TLS, psk identity 'backup1'" "$log"
}

# tl_readonly -- a read-only identity is refused a write (needs an access
# list in rpmemd.conf; skipped otherwise)
tl_readonly()
{
	local T=$TARGET_IP why rc=0

	if ! tl_ask authz; then
		tap_not_ok "target did not answer the access-list request"
		return
	fi
	why=$(cat "$RESULTS/tls.authz" 2>/dev/null)
	if [ "$why" != yes ]; then
		tap_skip "a read-only identity is refused a mirror over rdma" \
			"${why#no: }"
		return
	fi
	head -c $((16 * 1024 * 1024)) /dev/urandom >"$TL_TMP/b.bin"
	"$TL_CTL" --psk-file "$TL_TMP/reader.psk" mirror --transport rdma \
		"$TL_TMP/b.bin" "$T/dir/tp" >>"$(vm_log)" 2>&1 || rc=$?
	if [ "$rc" -eq 4 ]; then
		tap_ok "a read-only identity is refused a mirror over rdma (exit 4)"
	else
		tap_not_ok "a read-only identity's mirror exited $rc, expected 4"
	fi
	tl_target_cmp "$TL_TMP/a.bin" "unchanged after the read-only identity's mirror"
	tap_check "the read-only identity may verify over rdma" \
		"$TL_CTL" --psk-file "$TL_TMP/reader.psk" -q verify \
		--transport rdma "$TL_TMP/a.bin" "$T/dir/tp"
}

initiator_main()
{
	local id

	if ! vm_wait up; then
		tap_not_ok "the target did not come up"
		return
	fi
	rm -rf "$TL_TMP"
	mkdir -p "$TL_TMP"
	for id in backup1 reader; do
		install -m 600 "$RESULTS/tls.$id.psk" "$TL_TMP/$id.psk"
	done
	tl_selftest
	tl_rpmemctl
	tl_readonly
	rm -rf "$TL_TMP"
}
