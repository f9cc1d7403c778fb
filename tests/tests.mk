# SPDX-License-Identifier: BSD-3-Clause
# tests.mk -- test targets; included by the top-level Makefile

TEST_TOOLS := $(B)/tests/hold_pool $(B)/tests/state_churn $(B)/tests/replica_example \
	      $(B)/tests/old_sync_user $(B)/tests/dirty_writer \
	      $(B)/tests/lib_errors $(B)/tests/handshake_fuzz $(B)/tests/decode_fuzz \
	      $(B)/tests/truncate_shim.so $(B)/tests/seccomp_probe.so \
	      $(B)/tests/pobj_app $(B)/tests/pmem2_app $(B)/tests/log_app \
	      $(B)/tests/sessclient $(B)/tests/xxh3_blocks \
	      $(B)/tests/sess_probe $(B)/tests/rpmemd-reorder \
	      $(B)/tests/rpmemd-rdma-reorder \
	      $(B)/tests/rpmemd-crash $(B)/tests/delay_line $(B)/tests/secure_app
VM_SUITES  ?= smoke perftest pmem rdma-lib devdax rdma rdma-preload faults tls deploy failover

$(B)/tests/hold_pool: tests/tools/hold_pool.c $(B)/librpmem.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/librpmem.a $(LDFLAGS) $(LDLIBS)

$(B)/tests/xxh3_blocks: tests/tools/xxh3_blocks.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -lxxhash

$(B)/tests/state_churn: tests/tools/state_churn.c $(B)/librpmem.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/librpmem.a $(LDFLAGS) $(LDLIBS)

# the example links the shared library, the way applications do
$(B)/tests/replica_example: tests/example/replica_example.c $(B)/librpmemctl.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -L$(B) -lrpmemctl -Wl,-rpath,'$$ORIGIN/..'

# a LIBRPMEMCTL_1 program: the released header only (none of the tree's
# headers), linked against today's shared library
$(B)/tests/old_sync_user: tests/abi/old_sync_user.c tests/abi/librpmemctl-v1.h \
			  $(B)/librpmemctl.so
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE $(CFLAGS) -o $@ $< \
		-L$(B) -lrpmemctl -Wl,-rpath,'$$ORIGIN/..'

# so does the error and log probe: only the public API, as an application
$(B)/tests/lib_errors: tests/tools/lib_errors.c $(B)/librpmemctl.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -L$(B) -lrpmemctl -Wl,-rpath,'$$ORIGIN/..'

# a session holding no pool, or asking what it may not (access.bats)
$(B)/tests/sess_probe: tests/tools/sess_probe.c $(B)/librpmemctl.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -L$(B) -lrpmemctl -Wl,-rpath,'$$ORIGIN/..'

# replica persists while the target is gone (tests/bats/dirtylog.bats)
$(B)/tests/dirty_writer: tests/tools/dirty_writer.c $(B)/librpmemctl.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -L$(B) -lrpmemctl -Wl,-rpath,'$$ORIGIN/..'

# a preload that truncates a file at a chosen frame (tests/bats/integrity.bats)
$(B)/tests/truncate_shim.so: tests/tools/truncate_shim.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -shared -o $@ $< -ldl
# what a compromised rpmemd could still call (tests/bats/confine.bats)
$(B)/tests/seccomp_probe.so: tests/tools/seccomp_probe.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -shared -o $@ $<

# an ordinary libpmemobj application: replication comes by LD_PRELOAD
$(B)/tests/pobj_app: tests/preload/pobj_app.c tests/tools/lat.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -lpmemobj -lpthread

# the same for libpmem2's function pointers
$(B)/tests/pmem2_app: tests/preload/pmem2_app.c tests/tools/lat.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -lpmem2

# linked with the preload library (DT_NEEDED, before libc), found by an
# absolute DT_RPATH: a set-uid copy ignores LD_PRELOAD and $ORIGIN
# (preload.bats)
$(B)/tests/secure_app: tests/preload/secure_app.c $(B)/$(PRELOAD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -Wl,--no-as-needed -L$(B) -lrpmem_preload \
		-lpmem -Wl,--disable-new-dtags -Wl,-rpath,$(abspath $(B))

# librpmemctl with a global log function and libpmem2 (preload.bats)
$(B)/tests/log_app: tests/preload/log_app.c $(B)/librpmemctl.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -L$(B) -lrpmemctl -lpmem2 \
		-Wl,-rpath,'$$ORIGIN/..'

# a target that breaks the session's order on purpose (daemon/session/
# reorder.c): the files that hold its hooks, built again with them on
REORDER_SRC := daemon/session/reorder.c daemon/session/req_data.c \
	       daemon/session/worker.c
REORDER_OBJ := $(REORDER_SRC:%.c=$(B)/reorder/%.o)
$(B)/reorder/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DRPMEMD_TEST_REORDER -MMD -MP -c -o $@ $<
$(REORDER_OBJ): INC := $(INC_DAEMON)
-include $(REORDER_OBJ:.o=.d)
$(B)/tests/rpmemd-reorder: $(REORDER_OBJ) \
		$(filter-out $(REORDER_SRC:%.c=$(B)/%.o),$(DAEMON_OBJ)) \
		$(COMMON_OBJ) $(TARGET_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS) $(DAEMON_LIBS) $(LDLIBS)

# a target that applies GPSPM requests out of order on purpose (lib/rdma/
# rdma_reorder.h): rdma_target.c built again with it on
$(B)/rdma-reorder/rdma_target.o: lib/rdma/rdma_target.c lib/rdma/rdma_reorder.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DRPMEM_RDMA_TEST_REORDER -Ilib/common -Ilib/rdma \
		-c -o $@ $<
$(B)/tests/rpmemd-rdma-reorder: $(B)/rdma-reorder/rdma_target.o \
		$(DAEMON_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS) $(DAEMON_LIBS) $(LDLIBS)

# a target that dies at a chosen point of pruning a version (daemon/
# storage/crashpoint.h): the files that hold its points (found, so that a
# point moved to another file stays armed), built again
CRASH_SRC := $(shell grep -lw crash_point $(DAEMON_SRC))
CRASH_OBJ := $(CRASH_SRC:%.c=$(B)/crash/%.o)
$(B)/crash/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DRPMEMD_TEST_CRASH -MMD -MP -c -o $@ $<
$(CRASH_OBJ): INC := $(INC_DAEMON)
$(CRASH_OBJ): ALL_CFLAGS += -DRPMEMD_STORAGE_INTERNAL
-include $(CRASH_OBJ:.o=.d)
$(B)/tests/rpmemd-crash: $(CRASH_OBJ) \
		$(filter-out $(CRASH_SRC:%.c=$(B)/%.o),$(DAEMON_OBJ)) \
		$(COMMON_OBJ) $(TARGET_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS) $(DAEMON_LIBS) $(LDLIBS)

examples: $(TEST_TOOLS)

-include tests/unit/unit.mk
-include tests/fuzz/fuzz.mk
-include tests/vm/rdma.mk
-include tests/vm/pmem.mk

check-bats: all $(TEST_TOOLS)
	tests/run-bats.sh

check-vm: check-vm-deps
	tests/vm/run.sh $(VM_SUITES)

# check-vm-deps -- what the bed's guests run (tests/check.sh builds it
# before it starts the bed beside the BATS suites)
check-vm-deps: all $(TEST_TOOLS) $(B)/tests/pmem_probe

# check-vm-cluster -- the bed's Pacemaker + corosync cluster (suite
# cluster, tests/vm/README.md) in a boot of its own; SUITE_CLUSTER_PARTS
# picks its tests (default "c a b d"). Not in VM_SUITES: 10 minutes on
# a quiet machine, about 25 under load (tests/vm/README.md)
check-vm-cluster: all $(TEST_TOOLS) $(B)/tests/pmem_probe
	tests/vm/run.sh cluster

# check-asan -- the unit tests built (in build/asan) and run with
# AddressSanitizer and UndefinedBehaviorSanitizer: any report fails them
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
SAN_MAKE   = $(MAKE) --no-print-directory -j2 B=$(B)/asan \
	     CFLAGS="-O1 -g -fno-omit-frame-pointer $(SAN_FLAGS)" \
	     LDFLAGS="$(SAN_FLAGS)"
check-asan:
	@mkdir -p $(B)
	@$(SAN_MAKE) check-unit >$(B)/asan.log 2>&1; \
	rc=$$?; sed 's/^unit: \([0-9]* passed\)/asan: \1/' $(B)/asan.log; \
	exit $$rc

# check-bats-asan -- the BATS files that drive the protocol and the
# daemon hardest (SAN_BATS: malformed and hostile frames, errors and
# interrupted transfers, sync and follow, the hash cache, accept limits,
# slow and silent peers, events, access rules, TLS and an impostor
# target, reloads, mirror and verify) against rpmemd, rpmemctl and the
# test tools built with ASan and UBSan in build/asan; tests/san-bats.sh
# fails the run on any sanitizer report, the background daemon's
# included. Left out: what LD_PRELOADs a library into a program
# (preload, integrity, dirtylog, confine), measures memory or installs
# (memory, install, package), and paging.bats (thousands of pools: 220 s
# under ASan alone). Measured on the 2-core machine, other jobs running:
# 280 s for 150 tests, the build after check-asan's included
SAN_BATS := protocol errors sync follow hcache accept slowpeers events \
	    access tls impostor daemon mirror firstmirror verify
check-bats-asan:
	@mkdir -p $(B)
	@$(SAN_MAKE) all examples >$(B)/asan-bats.log 2>&1 || { \
		tail -n 20 $(B)/asan-bats.log; \
		echo "asan-bats: 0 passed, 1 failed (build)"; exit 1; }
	@tests/san-bats.sh $(B)/asan $(SAN_BATS:%=tests/bats/%.bats)

# check -- every suite; the last line is "check: N passed, N failed"
check: all $(TEST_TOOLS)
	tests/check.sh

$(B)/tests/hashbench: tests/bench/hashbench.c $(B)/librpmem.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/librpmem.a $(LDFLAGS) $(LDLIBS)

# a slow link: holds what the client sends for a while (preload.bats,
# tests/bench/preload.sh and twofiles.sh)
$(B)/tests/delay_line: tests/tools/delay_line.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -lpthread

# a blocking TCP ping-pong: the yardstick of a persist (tests/bench/persist.sh)
$(B)/tests/pingpong: tests/bench/pingpong.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -lpthread

# many concurrent sessions that work, then idle (tests/bench/sessions.sh):
# the public API through the shared library, as an application
$(B)/tests/sessclient: tests/bench/sessclient.c $(B)/librpmemctl.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -L$(B) -lrpmemctl -lxxhash \
		-Wl,-rpath,'$$ORIGIN/..'

# persist latency of a replica over n targets (tests/bench/targets.sh)
$(B)/tests/replica_lat: tests/bench/replica_lat.c tests/tools/lat.h $(B)/librpmemctl.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -L$(B) -lrpmemctl -lpthread \
		-Wl,-rpath,'$$ORIGIN/..'

bench: all $(B)/tests/hashbench $(B)/tests/pingpong $(B)/tests/sessclient
	tests/bench/run.sh
