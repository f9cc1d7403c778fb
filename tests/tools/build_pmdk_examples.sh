#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# build_pmdk_examples.sh -- build PMDK's libpmemobj examples, as Debian's
# libpmemobj-dev ships them, against Debian's libpmemobj
#
# Usage: tests/tools/build_pmdk_examples.sh SRC DEST
#
# Copies SRC (/usr/share/doc/libpmemobj-dev/examples) to DEST and builds,
# unmodified, the map example (DEST/mapcli: every back end of map/) and
# the queue example (DEST/queue_ex) with cc: their Makefiles need PMDK's
# source tree, and so does ex_common.h, which Debian does not ship (its
# stand-in: tests/tools/pmdk_ex_common.h).
set -eu
tools=$(cd "$(dirname "$0")" && pwd)
cp -r "$1/." "$2"
cp "$tools/pmdk_ex_common.h" "$2/ex_common.h"
cd "$2"
cc -w -I. -Imap -Itree_map -Ihashmap -Ilist_map -o mapcli \
	map/mapcli.c map/map.c map/map_*.c tree_map/*.c hashmap/*.c \
	list_map/skiplist_map.c -lpmemobj -pthread
cc -w -o queue_ex queue/queue.c -lpmemobj
