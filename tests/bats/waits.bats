#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# waits.bats -- the tests wait for conditions, never for a length of time:
# every sleep in tests/bats and the VM bed is in the one polling helper
# (poll under wait_for/alive_until in helpers.bash, vm_poll in
# tests/vm/guest/lib.sh) or says on its line, or in the comment just
# above, "not a wait:" and why (time passing is the test's subject, a
# random kill point, a pacing)

load helpers

setup() { W=$BATS_TEST_TMPDIR; }

# sleeps FILE... -- FILE:LINE: TEXT of each sleep command that is neither
# in a polling helper nor marked "not a wait:"
sleeps() {
	awk '
	FNR == 1 { fn = ""; mark = 0 }
	match($0, /^[A-Za-z_][A-Za-z0-9_]*\(\)/) { fn = substr($0, 1, RLENGTH - 2) }
	/^}/ { fn = "" }
	/^[ \t]*#/ { if (/not a wait:/) mark = 1; next }
	{
		code = $0
		sub(/[ \t]#.*/, "", code)
		helper = (fn == "poll" && FILENAME ~ /tests\/bats\/helpers\.bash$/) ||
			(fn == "vm_poll" && FILENAME ~ /tests\/vm\/guest\/lib\.sh$/)
		if (code ~ /(^|[^A-Za-z0-9_.\/-])sleep([ \t]|$)/ && !helper &&
		    !mark && $0 !~ /not a wait:/)
			print FILENAME ":" FNR ": " $0
		mark = 0
	}' "$@"
}

@test "no test in tests/bats or the VM bed waits with a sleep: every sleep is in the polling helper or says why it is not a wait" {
	cd "$TOP"
	# all but this file, whose fixture below holds sleeps on purpose
	run sleeps $(ls tests/bats/*.bats | grep -vx tests/bats/waits.bats) \
		tests/bats/*.bash tests/vm/*.sh tests/vm/suites/*.sh \
		tests/vm/suites/*.bats tests/vm/guest/*
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "the sleep check finds a sleep in a wait loop and a bare one, and passes one marked not a wait or in the helper" {
	cat >"$W/t.bats" <<'T'
poll() {
	sleep 0.05
}
t() {
	for _ in $(seq 50); do
		grep -q ready out && break
		sleep 0.1
	done
	until [ -e f ]; do sleep 1; done
	run x
	sleep 2
	# not a wait: a random point for the kill
	sleep "0.$RANDOM"
	(sleep 2; kill -CONT "$P") & # not a wait: the pause is the subject
	python3 -c "import time; time.sleep(1)"
}
T
	run sleeps "$W/t.bats"
	echo "$output"
	[ "${#lines[@]}" -eq 4 ]
	[[ "${lines[0]}" == *"t.bats:2: "* ]]
	[[ "${lines[1]}" == *"t.bats:7: "* ]]
	[[ "${lines[2]}" == *"t.bats:9: "* ]]
	[[ "${lines[3]}" == *"t.bats:11: "* ]]
	# poll is exempt in helpers.bash only
	mkdir -p "$W/tests/bats"
	cp "$W/t.bats" "$W/tests/bats/helpers.bash"
	run sleeps "$W/tests/bats/helpers.bash"
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == *"helpers.bash:7: "* ]]
}

@test "wait_for gives up after its timeout, naming what it waited for" {
	run wait_for -t 1 test -e "$W/never"
	[ "$status" -eq 1 ]
	[[ "$output" == "gave up waiting for: test -e $W/never (after 1 s)" ]]
	# and returns as soon as the condition holds
	(: >"$W/soon") &
	wait_for test -e "$W/soon"
}

@test "alive_until gives up once the process it watches has exited, naming both" {
	sh -c 'exit 0' &
	local pid=$!
	wait "$pid"
	run alive_until "$pid" test -e "$W/never"
	[ "$status" -eq 1 ]
	[[ "$output" == "gave up waiting for: test -e $W/never (process $pid exited)" ]]
	# a live process: until the condition holds, or the timeout
	sleep 30 & # not a wait: a process that lives on while watched
	pid=$!
	run alive_until -t 1 "$pid" test -e "$W/never"
	kill "$pid"
	[ "$status" -eq 1 ]
	[[ "$output" == *"(after 1 s)" ]]
}

@test "the VM bed's vm_wait_for and vm_alive_until poll the same way" {
	run bash -c '. "$1/tests/vm/guest/lib.sh"
		vm_wait_for -t 1 test -e "$2/never"' _ "$TOP" "$W"
	[ "$status" -eq 1 ]
	[[ "$output" == *"gave up waiting for: test -e $W/never (after 6 tries 0.2 s apart)" ]]
	run bash -c '. "$1/tests/vm/guest/lib.sh"
		sh -c "exit 0" & p=$!; wait $p
		vm_alive_until "$p" test -e "$2/never"' _ "$TOP" "$W"
	[ "$status" -eq 1 ]
	[[ "$output" == *"(process "*" exited)" ]]
	: >"$W/there"
	run bash -c '. "$1/tests/vm/guest/lib.sh"
		vm_wait_for test -e "$2/there"' _ "$TOP" "$W"
	[ "$status" -eq 0 ]
}

# third_look -- true at its third call; sets n and pid as a careless
# condition function might
third_look() {
	n=0 pid=
	echo x >>"$W/looks"
	[ "$(wc -l <"$W/looks")" -ge 3 ]
}

@test "a condition that sets n or pid does not cut wait_for's polling short" {
	wait_for third_look
	[ "$(wc -l <"$W/looks")" -eq 3 ]
	rm "$W/looks"
	run bash -c '. "$1/tests/vm/guest/lib.sh"; W=$2
		'"$(declare -f third_look)"'
		vm_wait_for -t 5 third_look' _ "$TOP" "$W"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$W/looks")" -eq 3 ]
}
