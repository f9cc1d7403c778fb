#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# layers.bats -- the daemon's storage is three layers, each a folder
# (daemon/storage/pool, journal, history: docs/ARCHITECTURE.md, "The
# storage layers"): no file includes a header of a layer above its own,
# and the build gives each folder only the include paths below it

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

# cflags LAYER -- the compiler flags the Makefile gives a file of
# daemon/storage/LAYER
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
