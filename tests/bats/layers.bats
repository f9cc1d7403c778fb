#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# layers.bats -- the daemon's storage is three layers, each a folder
# (daemon/storage/pool, journal, history: docs/ARCHITECTURE.md, "The
# storage layers"), and librpmemctl five (lib/client/base, session, pool,
# sync, replicate): no file includes a header of a layer above its own,
# the build gives each folder only the include paths below it, no object
# calls a function of a layer above its own, and no internal header is
# over 300 lines

load helpers

# layer_of H -- the storage layer (0 pool, 1 journal, 2 history) whose
# folder holds header H, or nothing if none does
layer_of() {
	local i=0 d
	for d in pool journal history; do
		[ -e "$TOP/daemon/storage/$d/$1" ] && echo $i && return
		i=$((i + 1))
	done
}

@test "daemon/storage's include graph has no upward edge: pool/ includes nothing of journal/ or history/, journal/ nothing of history/" {
	local i=0 d f h l bad=
	for d in pool journal history; do
		[ -d "$TOP/daemon/storage/$d" ]
		for f in "$TOP"/daemon/storage/$d/*.[ch]; do
			for h in $(sed -n 's/^#include "\(.*\)"$/\1/p' "$f"); do
				l=$(layer_of "$h")
				if [ -n "$l" ] && [ "$l" -gt "$i" ]; then
					bad+="${f#$TOP/} -> $h; "
				fi
			done
		done
		i=$((i + 1))
	done
	echo "upward: $bad"
	[ -z "$bad" ]
	# nothing is left beside the three layers
	[ -z "$(find "$TOP/daemon/storage" -maxdepth 1 -type f)" ]
}

# cflags LAYER -- the compiler flags the Makefile's INC_LAYER gives (LAYER
# pool: a file of daemon/storage/pool; client_pool: of lib/client/pool)
cflags() {
	make -s -C "$TOP" -f Makefile -f - "cflags-$1" <<'MK'
cflags-%: INC = $(INC_$(shell echo $* | tr a-z A-Z))
cflags-%:
	@echo $(ALL_CFLAGS)
MK
}

# compiles LAYER HEADER... -- a file of LAYER that includes HEADERs compiles
compiles() {
	local layer=$1 h src=
	shift
	for h in "$@"; do
		src+="#include \"$h\""$'\n'
	done
	(cd "$TOP" && printf '%s' "$src" |
		cc $(cflags "$layer") -fsyntax-only -x c -)
}

# refused LAYER HEADER -- a file of LAYER cannot include HEADER: not found
refused() {
	run compiles "$@"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"$2: No such file"* ]]
}

@test "the build gives a storage layer only the include paths of the layers below it: a pool file that includes journal.h or history.h does not compile" {
	[ -n "$(cflags pool)" ]
	compiles pool store.h
	refused pool journal.h
	refused pool versions.h
	compiles journal store.h journal.h undo.h
	refused journal history.h
	refused journal scrub.h
	compiles history store.h journal.h history.h versions.h scrub.h
}

@test "session/ and the service see an open pool only through store.h's calls: its fields (pool_int.h) do not compile outside daemon/storage" {
	compiles daemon store.h journal.h history.h versions.h scrub.h
	run compiles daemon pool_int.h
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"pool_int.h is the storage's own"* ]]
	# and nothing there tries
	run grep -rln 'pool_int\.h' "$TOP"/daemon/*.c "$TOP"/daemon/session
	[ "$status" -eq 1 ]
}

# state_fields HEADER STRUCT -- the member names of STRUCT in HEADER
state_fields() {
	sed -n "/^struct $2 {/,/^};/p" "$TOP/$1" | awk '/^\t[a-z]/ {
		sub(/\/\*.*/, ""); sub(/;.*/, ""); gsub(/\[[^]]*\]/, "")
		n = split($0, v, ",")
		for (i = 1; i <= n; i++) {
			k = split(v[i], w, /[ \t*]+/)
			print w[k]
		}
	}'
}

@test "an open pool's struct knows no layer above the pool: the journal's and history's state of a pool is theirs, each field touched only by its layer" {
	# what struct rpmemd_pool held of the layers above, and what their
	# own state structs hold now
	local f fields="undo_lock undo_cond undo uq swap old ver_reserved
		cut_lock cut_cond since_drain cut_want cuts cut_ret cut_gen
		room nroom room_lost"
	fields+=" $(state_fields daemon/storage/journal/journal_int.h rpmemd_pool_journal)"
	fields+=" $(state_fields daemon/storage/history/history_int.h rpmemd_pool_history)"
	echo "fields: $fields"
	[[ "$fields" == *" nroom "* ]] && [[ "$fields" == *" room_lost"* ]]
	[[ "$fields" == *" uq "* ]] && [[ "$fields" == *" cut_want "* ]]
	# none is a member of struct rpmemd_pool: each offsetof fails
	local src='#include <stddef.h>'$'\n''#include "pool_int.h"'$'\n' n=0
	for f in $fields; do
		src+="size_t o_$n = offsetof(struct rpmemd_pool, $f);"$'\n'
		n=$((n + 1))
	done
	run bash -c 'cd "$1" && printf "%s" "$2" | cc $3 -DRPMEMD_STORAGE_INTERNAL \
		-fsyntax-only -fmax-errors=0 -x c - 2>&1' _ "$TOP" "$src" "$(cflags pool)"
	for f in $fields; do
		[[ "$output" == *"has no member named '$f'"* ]] ||
			[[ "$output" == *"has no member named ‘$f’"* ]] ||
			{ echo "struct rpmemd_pool has $f"; false; }
	done
	# the pool layer names neither state, nor includes its header
	run grep -rnE 'rpmemd_pool_(journal|history)|(journal|history)_int\.h|(journal|history)_of\(' "$TOP"/daemon/storage/pool
	echo "$output"
	[ "$status" -eq 1 ]
	# each state is reached only from its own layer (the unit tests aside)
	run grep -rlE 'journal_of\(|journal_int\.h' "$TOP"/daemon --exclude-dir=journal
	echo "$output"
	[ "$status" -eq 1 ]
	run grep -rlE 'history_of\(|history_int\.h' "$TOP"/daemon --exclude-dir=history
	echo "$output"
	[ "$status" -eq 1 ]
}

# the layers of librpmemctl, bottom up
CLIENT_LAYERS="base session pool sync replicate"

# client_layer_of H -- the lib/client layer (0 base .. 4 replicate) whose
# folder holds header H, or nothing if none does
client_layer_of() {
	local i=0 d
	for d in $CLIENT_LAYERS; do
		[ -e "$TOP/lib/client/$d/$1" ] && echo $i && return
		i=$((i + 1))
	done
}

@test "lib/client's include graph has no upward edge, and nothing is left beside its five layers" {
	local i=0 d f h l bad=
	for d in $CLIENT_LAYERS; do
		[ -d "$TOP/lib/client/$d" ]
		for f in "$TOP"/lib/client/$d/*.[ch]; do
			for h in $(sed -n 's/^#include "\(.*\)"$/\1/p' "$f"); do
				l=$(client_layer_of "$h")
				if [ -n "$l" ] && [ "$l" -gt "$i" ]; then
					bad+="${f#$TOP/} -> $h; "
				fi
			done
		done
		i=$((i + 1))
	done
	echo "upward: $bad"
	[ -z "$bad" ]
	# one header for all (client.h) is gone, and no file stands outside
	run find "$TOP/lib/client" -maxdepth 1 -type f
	echo "$output"
	[ -z "$output" ]
}

@test "the build gives a client layer only the include paths of the layers below it: a session file that includes client_pool.h does not compile" {
	[ -n "$(cflags client_base)" ]
	compiles client_base client_base.h
	refused client_base client_session.h
	compiles client_session client_session.h client_share.h
	refused client_session client_pool.h
	compiles client_pool client_pool.h
	refused client_pool client_sync.h
	refused client_pool client_history.h
	compiles client_sync client_sync.h client_history.h sync_int.h
	refused client_sync client_replicate.h
	compiles client_replicate client_replicate.h
}

@test "each lib/client folder is compiled with its own layer's include paths" {
	local d f cmd u up
	for d in $CLIENT_LAYERS; do
		f=$(cd "$TOP" && ls lib/client/$d/*.c | head -1)
		cmd=$(make -s -n -B -C "$TOP" "build/${f%.c}.o" | grep -- "-c -o")
		echo "$cmd"
		[[ "$cmd" == *"-Ilib/client/$d "* ]]
		# and none of a layer above
		case $d in
		base) up="session pool sync replicate" ;;
		session) up="pool sync replicate" ;;
		pool) up="sync replicate" ;;
		sync) up="replicate" ;;
		replicate) up= ;;
		esac
		for u in $up; do
			[[ "$cmd" != *"-Ilib/client/$u "* ]]
		done
	done
}

# defined_in D... -- "symbol object" for each function or object that an
# object of lib/client/D defines
defined_in() {
	local d
	for d in "$@"; do
		nm -A --defined-only "$BUILD"/lib/client/$d/*.o
	done | awk '$2 ~ /[TDBR]/ {sub(/:[0-9a-f]*$/, "", $1); print $3, $1}'
}

@test "no object of lib/client calls a function of a layer above its own: the session's close runs hooks, history.c calls nothing of generations.c" {
	local d above= bad=
	[ -e "$BUILD/librpmemctl.a" ]
	for d in $(echo $CLIENT_LAYERS | tr ' ' '\n' | tac); do
		# the undefined symbols of layer d that a layer above defines
		if [ -n "$above" ]; then
			bad+=$(nm -u "$BUILD"/lib/client/$d/*.o |
			       awk 'NF == 2 {print $2}' | sort -u |
			       join - <(defined_in $above | sort -k1,1) |
			       awk -v d=$d '{printf "%s -> %s (%s); ", d, $1, $2}')
		fi
		above+=" $d"
	done
	echo "upward calls: $bad"
	[ -z "$bad" ]
	# history.c is generations.c's: it does not call back into it
	bad=$(nm -u "$BUILD/lib/client/sync/history.o" | awk '{print $2}' |
	      sort -u | join - <(nm --defined-only \
		"$BUILD/lib/client/sync/generations.o" |
		awk '$2 ~ /[TDBR]/ {print $3}' | sort -u))
	echo "history -> generations: $bad"
	[ -z "$bad" ]
}

@test "no internal header of lib/client is over 300 lines" {
	local h n bad=
	for h in $(find "$TOP/lib/client" -name '*.h'); do
		n=$(wc -l <"$h")
		echo "${h#$TOP/}: $n"
		[ "$n" -le 300 ] || bad+="${h#$TOP/} ($n) "
	done
	echo "over 300: $bad"
	[ -z "$bad" ]
}
