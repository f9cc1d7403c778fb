#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# completion.bats -- bash completion of rpmemctl: commands, options, option
# values, and REGION/POOL names asked from a live target

load helpers

COMPLETION=$TOP/completion/rpmemctl
BASH_COMPLETION=/usr/share/bash-completion/bash_completion

setup() { setup_env; }
teardown() { teardown_daemon; }

# comp [--bc] WORD... -- complete the last WORD of "rpmemctl WORD...":
# COMP_WORDS split at ':' as bash splits them, COMP_LINE as typed; with
# --bc, bash-completion is loaded first (as in an interactive shell).
# COMPREPLY, one per line, in $output (bats' run)
comp() {
	local bc=
	[ "$1" != --bc ] || { bc=$BASH_COMPLETION; shift; }
	run bash -c '
		bc=$1 completion=$2
		shift 2
		if [ -n "$bc" ]; then
			. "$bc" || exit 9
		fi
		. "$completion" || exit 9
		COMP_WORDS=()
		for w in "$@"; do
			while [[ $w == *:* ]]; do
				[ -z "${w%%:*}" ] || COMP_WORDS+=("${w%%:*}")
				COMP_WORDS+=(:)
				w=${w#*:}
			done
			[ -z "$w" ] && [ "$w" != "${!#}" ] || COMP_WORDS+=("$w")
		done
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_rpmemctl || exit 8
		printf "%s\n" "${COMPREPLY[@]}"' \
		comp "$bc" "$COMPLETION" "$RPMEMCTL" "$@"
}

# has WORD -- $output has the line WORD
has() {
	grep -qxF -- "$1" <<<"$output"
}

@test "the script registers _rpmemctl for rpmemctl" {
	run bash -c ". '$COMPLETION' && complete -p rpmemctl"
	[ "$status" -eq 0 ]
	[ "$output" = "complete -F _rpmemctl rpmemctl" ]
}

@test "completes every command of rpmemctl's command table, and help" {
	comp ""
	[ "$status" -eq 0 ]
	# the table in cmd/rpmemctl.c is what the binary runs
	table=$(sed -nE 's/^\t\{ "([a-z-]+)", cmd_.*/\1/p' "$TOP/cmd/rpmemctl.c")
	[ "$(wc -l <<<"$table")" -ge 9 ]
	diff <(sort <<<"$table"$'\nhelp') <(sort <<<"$output")
	comp s
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "scrub status sync " ]
	comp help m
	[ "$output" = mirror ]
}

@test "completes a command's own options and the credentials, not another command's" {
	comp sync --
	[ "$status" -eq 0 ]
	for o in --pull --dry-run --block-size --transport --json --quiet \
		--psk-file --tls-ca --config; do
		has "$o" || { echo "missing $o"; return 1; }
	done
	refute has --full
	comp remove -
	has --force
	has -f
	refute has --pull
	# before the command: the global options
	comp --v
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "--verbose --version " ]
}

@test "completes --transport's values, a FILE argument's files and no value for SIZE" {
	comp mirror -t ""
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "auto rdma tcp " ]
	comp sync --transport r
	[ "$output" = rdma ]
	touch "$W/key.psk"
	comp --psk-file "$W/key."
	[ "$output" = "$W/key.psk" ]
	comp bench -s ""
	[ -z "$output" ]
	# an option's argument is not taken for the command
	comp --psk-file "$W/key.psk" li
	[ "$output" = list ]
}

@test "completes a local file, then REGION/ and REGION/POOL names asked from the target" {
	mkdir -p "$W/r2"
	sed -i "s|^regions = (|regions = (\n  { name = \"r2\"; type = \"dir\"; path = \"$W/r2\"; },|" "$CONF"
	start_daemon
	for p in p1 p2 q1; do
		rc create "$T/r1/$p" 1M
		[ "$status" -eq 0 ]
	done
	mkfile "$W/local.bin" 1
	comp mirror "$W/loc"
	[ "$output" = "$W/local.bin" ]
	# bash replaces only what follows the ':': the replies start there
	comp mirror "$W/local.bin" "$T/"
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "$PORT/r1/ $PORT/r2/ " ]
	comp mirror "$W/local.bin" "$T/r1/p"
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "$PORT/r1/p1 $PORT/r1/p2 " ]
	# mirror, sync and verify take more targets after the first
	comp sync "$W/local.bin" "$T/r1/p1" "$T/r1/p"
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "$PORT/r1/p1 $PORT/r1/p2 " ]
	comp list "rpmem://$T/r1/q"
	[ "$output" = "$PORT/r1/q1" ]
	# create names a new pool: only its region is completed
	comp create "$T/r"
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "$PORT/r1 $PORT/r2 " ]
	# scrub and export take TARGET first, import a file first
	comp scrub "$T/r1/q"
	[ "$output" = "$PORT/r1/q1" ]
	comp versions "$T/r1/q"
	[ "$output" = "$PORT/r1/q1" ]
	# promote and demote take TARGET; promote --to a local file first
	comp promote "$T/r1/q"
	[ "$output" = "$PORT/r1/q1" ]
	comp demote "$T/r1/q"
	[ "$output" = "$PORT/r1/q1" ]
	comp promote --to "$W/loc"
	[ "$output" = "$W/local.bin" ]
	comp promote --to "$W/local.bin" "$T/r1/q"
	[ "$output" = "$PORT/r1/q1" ]
	comp export "$T/r1/q1" "$W/loc"
	[ "$output" = "$W/local.bin" ]
	comp import "$W/loc"
	[ "$output" = "$W/local.bin" ]
	comp import "$W/local.bin" "$T/r1/p"
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "$PORT/r1/p1 $PORT/r1/p2 " ]
	# the names came from the daemon: each completion was a session
	[ "$(grep -c 'client said BYE' "$DLOG")" -ge 7 ]
}

@test "versions: --at, --create, --prune, --keep and its retention rules" {
	comp versions --
	has --create
	has --prune
	has --keep
	has --dry-run
	comp sync --
	has --at
	comp scrub --
	has --at
	comp sync --
	has --discard-target
	has --discard-local
	comp mirror --
	has --discard-target
	comp promote --
	has --to
	has --force
	comp versions --keep ""
	[ "$(tr '\n' ' ' <<<"$output")" = "last= hourly= daily= weekly= monthly= " ]
	comp versions --keep last=3,d
	[ "$output" = "last=3,daily=" ]
}

@test "with bash-completion loaded, HOST:PORT/REGION/POOL completes the same" {
	[ -r "$BASH_COMPLETION" ] || skip "bash-completion is not installed"
	start_daemon
	rc create "$T/r1/p1" 1M
	[ "$status" -eq 0 ]
	comp --bc remove "$T/"
	[ "$output" = "$PORT/r1/" ]
	comp --bc remove "$T/r1/"
	[ "$output" = "$PORT/r1/p1" ]
	comp --bc sync --
	has --pull
}

@test "a target nobody serves completes nothing and prints nothing" {
	comp list "$T/"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
