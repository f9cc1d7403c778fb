# SPDX-License-Identifier: BSD-3-Clause
# lib.sh -- helpers for suites inside the test guests: TAP output, peer sync, bats
#
# Sourced by init.sh. Suites use:
#   tap_ok DESC / tap_not_ok DESC / tap_skip DESC REASON / tap_diag MSG
#   tap_check DESC CMD...     run CMD (output to the suite log), ok if it
#                             exits 0
#   tap_bats [BATS-ARGS] FILE...  run bats, fold its TAP lines into ours
#   vm_signal NAME            tell the peer guest NAME happened
#   vm_wait NAME [SECONDS]    wait until the peer signalled NAME (returns 1
#                             on timeout or if the peer aborted)
#   vm_wait_for [-t SECS] CMD...  poll CMD until it succeeds; 1 after SECS
#                             (60), saying what it waited for: the one way
#                             a suite waits (for a condition, never a time)
#   vm_alive_until [-t SECS] PID CMD...  the same, and 1 as soon as the
#                             background process PID has exited without it
#   vm_serve CMD...           on the target: CMD (acting on the
#                             initiator's requests) until it is done
#   vm_retry N DELAY CMD...   run CMD up to N times until it succeeds
#   vm_start_server PORT SECS OUT CMD...  start a one-shot server in the
#                             background, return once it listens on PORT
#                             (RDMA CM or TCP); its pid is $VM_SERVER_PID
#   vm_listening PORT         true if something listens on PORT here
#   vm_log                    path of the per-suite, per-role log file
#   vm_ping ARGS...           ping (iputils or busybox)
# Signal names are scoped per suite; the same NAME may be used in several
# suites. Markers live in $RESULTS/.sync, which both guests see.

VM_PEER=initiator
[ "${VM_ROLE:-}" = initiator ] && VM_PEER=target

tap_line()
{
	TAP_N=$((TAP_N + 1))
	echo "$1 $TAP_N - $2" >>"$TAP_FILE"
	echo "[$VM_SUITE/$VM_ROLE] $1 $TAP_N - $2"
}

tap_ok()
{
	tap_line ok "$1"
}

tap_not_ok()
{
	tap_line "not ok" "$1"
}

tap_skip()
{
	tap_line ok "$1 # SKIP ${2:-}"
}

tap_diag()
{
	echo "# $VM_SUITE/$VM_ROLE: $*" >>"$TAP_FILE"
	echo "[$VM_SUITE/$VM_ROLE] # $*"
}

vm_log()
{
	echo "$RESULTS/$VM_SUITE.$VM_ROLE.log"
}

# tap_check DESC CMD... -- run CMD with its output in the suite log
tap_check()
{
	local desc=$1 rc=0

	shift
	echo "### $desc: $*" >>"$(vm_log)"
	"$@" >>"$(vm_log)" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then
		tap_ok "$desc"
	else
		echo "### exit status $rc" >>"$(vm_log)"
		tap_not_ok "$desc (exit $rc, see $VM_SUITE.$VM_ROLE.log)"
	fi
	return "$rc"
}

# vm_poll TRIES DELAY PID CMD... -- the one polling loop of the bed: CMD
# up to TRIES times, DELAY seconds apart, until it succeeds (0); 1 after
# the last try or once the background process PID (none if empty) has
# exited without it, saying what it waited for on stderr. A sleep
# anywhere else carries a "not a wait:" comment (tests/bats/waits.bats)
vm_poll()
{
	# names of its own: CMD may set variables of the caller's
	local _vp_n=$1 _vp_delay=$2 _vp_pid=$3 _vp_i

	shift 3
	for ((_vp_i = 1; _vp_i <= _vp_n; _vp_i++)); do
		"$@" && return 0
		if [ -n "$_vp_pid" ] && ! kill -0 "$_vp_pid" 2>/dev/null; then
			"$@" && return 0
			echo "gave up waiting for: $* (process $_vp_pid exited)" >&2
			return 1
		fi
		[ "$_vp_i" -lt "$_vp_n" ] && sleep "$_vp_delay"
	done
	echo "gave up waiting for: $* (after $_vp_n tries $_vp_delay s apart)" >&2
	return 1
}

# vm_wait_for [-t SECS] CMD... -- until CMD succeeds, polled every 0.2 s;
# 1 after SECS (default 60)
vm_wait_for()
{
	local secs=60

	if [ "$1" = -t ]; then
		secs=$2
		shift 2
	fi
	vm_poll $((secs * 5 + 1)) 0.2 "" "$@"
}

# vm_alive_until [-t SECS] PID CMD... -- vm_wait_for, and 1 as soon as the
# background process PID has exited without CMD succeeding
vm_alive_until()
{
	local secs=60

	if [ "$1" = -t ]; then
		secs=$2
		shift 2
	fi
	vm_poll $((secs * 5 + 1)) 0.2 "$@"
}

# vm_serve CMD... -- on the target: CMD, which acts on the requests the
# initiator left, every 0.2 s until the initiator is done or aborted (its
# run is bounded by its qemu's timeout; this bound, 2 h, is beyond it)
vm_serve()
{
	vm_poll 36000 0.2 "" vm_serve_once "$@"
}

# vm_serve_once CMD... -- true once the peer is done or aborted, else CMD
# and false
vm_serve_once()
{
	[ -e "$RESULTS/.sync/$VM_SUITE.$VM_PEER.__done" ] ||
		[ -e "$RESULTS/.sync/$VM_PEER.abort" ] && return 0
	"$@"
	return 1
}

# vm_retry N DELAY CMD... -- for clients racing a server that is starting:
# CMD up to N times, DELAY seconds apart
vm_retry()
{
	vm_poll "$1" "$2" "" "${@:3}"
}

# vm_listening PORT -- true if a local RDMA CM or TCP listener has PORT
vm_listening()
{
	rdma resource show cm_id 2>/dev/null |
		grep -Eq "state LISTEN.* src-addr [^ ]*:$1( |$)" && return 0
	[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
}

# vm_start_server PORT SECS OUT CMD... -- start a one-shot server in the
# background under `timeout SECS`, its output (line-buffered) to OUT, and
# wait until it listens on PORT (RDMA CM or TCP). Sets VM_SERVER_PID.
# Returns 1 if it exits or does not listen within 60 s.
vm_start_server()
{
	local port=$1 secs=$2 out=$3

	shift 3
	echo "### server on port $port: $*" >>"$out"
	timeout "$secs" stdbuf -oL -eL "$@" >>"$out" 2>&1 &
	VM_SERVER_PID=$!
	vm_alive_until "$VM_SERVER_PID" vm_listening "$port" 2>>"$out" &&
		return 0
	echo "### server on port $port is not listening" >>"$out"
	rdma resource show cm_id >>"$out" 2>&1
	return 1
}

# vm_ping ARGS... -- ping, from iputils if installed, else busybox
vm_ping()
{
	if command -v ping >/dev/null; then
		ping "$@"
	else
		busybox ping "$@"
	fi
}

vm_signal()
{
	: >"$RESULTS/.sync/$VM_SUITE.$VM_ROLE.$1"
}

vm_abort()
{
	echo "${1:-aborted}" >"$RESULTS/.sync/$VM_ROLE.abort"
}

# vm_wait NAME [TIMEOUT] -- wait for the peer's vm_signal NAME
vm_wait()
{
	local f=$RESULTS/.sync/$VM_SUITE.$VM_PEER.$1

	if ! vm_wait_for -t "${2:-$VM_WAIT_TIMEOUT}" \
	     vm_signalled "$f" 2>/dev/null; then
		echo "vm_wait $1: timed out waiting for $VM_PEER" >&2
		return 1
	fi
	[ -e "$f" ] && return 0
	echo "vm_wait $1: $VM_PEER aborted:" \
	     "$(cat "$RESULTS/.sync/$VM_PEER.abort")" >&2
	return 1
}

# vm_signalled F -- the peer's marker F is there, or the peer aborted
vm_signalled()
{
	[ -e "$1" ] || [ -e "$RESULTS/.sync/$VM_PEER.abort" ]
}

# tap_bats [BATS-ARGS] FILE... -- run bats and re-emit its results as ours
tap_bats()
{
	local line out=/tmp/bats.$$.out rc=0 desc seen=0

	echo "### bats $*" >>"$(vm_log)"
	bats --tap "$@" >"$out" 2>>"$(vm_log)" || rc=$?
	cat "$out" >>"$(vm_log)"
	while IFS= read -r line; do
		case "$line" in
		"not ok "*)
			desc=${line#not ok }
			tap_not_ok "bats: ${desc#"${desc%%[!0-9]*}" }"
			seen=1
			;;
		"ok "*)
			desc=${line#ok }
			tap_ok "bats: ${desc#"${desc%%[!0-9]*}" }"
			seen=1
			;;
		esac
	done <"$out"
	rm -f "$out"
	if [ "$seen" -eq 0 ]; then
		tap_not_ok "bats $* produced no results (exit $rc)"
	fi
	return "$rc"
}

# vm_plaintext_targets -- the suite's targets run rpmemd with
# allow_insecure_remote: let rpmemctl (and the preload library) reach
# them without credentials, as rpmemctl(1) asks (an rpmemctl.conf "*"
# entry with plaintext = true, for this suite's subshell only)
vm_plaintext_targets()
{
	export XDG_CONFIG_HOME=/tmp/$VM_SUITE.xdg
	mkdir -p "$XDG_CONFIG_HOME/rpmem"
	echo 'targets = ( { host = "*"; plaintext = true; } );' \
		>"$XDG_CONFIG_HOME/rpmem/rpmemctl.conf"
}

# vm_run_suite NAME -- run one suite's function for this role, in step
# with the peer:
#   target:    target_main; wait initiator done; target_post; signal done
#   initiator: wait target start; initiator_main; signal done; wait target
vm_run_suite()
{
	local suite=$1 file=$RPMEM_SRC/tests/vm/suites/$1.sh t0=$SECONDS

	(
		export VM_SUITE=$suite
		TAP_FILE=$RESULTS/$suite.$VM_ROLE.tap
		TAP_N=0
		: >"$TAP_FILE"
		cd /tmp || exit 1
		# shellcheck disable=SC1090
		. "$file"
		if [ "$VM_ROLE" = target ]; then
			vm_signal __start
			if declare -F target_main >/dev/null; then
				target_main
			fi
			vm_wait __done "$VM_WAIT_TIMEOUT" ||
				tap_not_ok "initiator did not finish $suite"
			if declare -F target_post >/dev/null; then
				target_post
			fi
		else
			if vm_wait __start "$VM_WAIT_TIMEOUT"; then
				if declare -F initiator_main >/dev/null; then
					initiator_main
				fi
			else
				tap_not_ok "target did not start $suite"
			fi
		fi
		# stop what the suite left running in the background
		# shellcheck disable=SC2046
		kill $(jobs -p) 2>/dev/null
		wait 2>/dev/null
		echo "# suite finished" >>"$TAP_FILE"
		if [ "$VM_ROLE" = target ]; then
			vm_signal __done
		else
			vm_signal __done
			vm_wait __done "$VM_WAIT_TIMEOUT" ||
				echo "target did not finish $suite" >&2
		fi
	)
	echo "vm: suite $suite ($VM_ROLE) took $((SECONDS - t0)) s"
}
