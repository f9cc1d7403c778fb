# SPDX-License-Identifier: BSD-3-Clause
# unit.mk -- cmocka unit tests; included by tests/tests.mk
#
# One executable per API group, built from the real objects and linked
# against build/librpmem.a; link-time mocks (-Wl,--wrap=) are listed per
# test in UNIT_WRAP_<name>, daemon objects in UNIT_DAEMON_<name> (never
# daemon/rpmemd.o). The client tests (client_*) talk to UNIT_FAKE, an
# in-process fake target (tests/unit/fake_target.h). `make check-unit`
# builds and runs them all and ends with "unit: N passed, N failed".
# UNIT_WRAPPER="valgrind -q
# --error-exitcode=99 --leak-check=full" runs every test under valgrind.

UNIT_DIR   := $(B)/tests/unit
UNIT_NAMES := proto util hash config meta devdax pmem sync_cfg \
	      client_session client_pool client_sync client_link client_links \
	      client_log client_query client_replicas client_xport \
	      errors log access tls_export preload_config hcache net \
	      rdma_blob rdma_batch pace dirtylog text store handles undo retain \
	      registry
UNIT_BINS  := $(UNIT_NAMES:%=$(UNIT_DIR)/%)
UNIT_LIBS  := $(shell $(PKG_CONFIG) --libs cmocka)

UNIT_WRAP_proto := -Wl,--wrap=calloc -Wl,--wrap=free
UNIT_WRAP_hash  := -Wl,--wrap=pthread_create
UNIT_WRAP_pace  := -Wl,--wrap=rpmem_now_ns
UNIT_WRAP_log   := -Wl,--wrap=rpmem_now_ns
UNIT_WRAP_meta  := -Wl,--wrap=fsync -Wl,--wrap=renameat -Wl,--wrap=write
UNIT_WRAP_undo  := -Wl,--wrap=pwrite
UNIT_WRAP_devdax := -Wl,--wrap=pmem2_get_memcpy_fn \
		    -Wl,--wrap=pmem2_map_get_address

UNIT_DAEMON_config := $(B)/daemon/config/config.o \
		      $(B)/daemon/config/config_get.o \
		      $(B)/daemon/config/config_region.o \
		      $(B)/daemon/config/pmem.o $(B)/daemon/sock.o
UNIT_DAEMON_meta   := $(B)/daemon/storage/pool/meta.o
UNIT_DAEMON_devdax := $(B)/daemon/storage/pool/devdax.o \
		      $(B)/daemon/storage/pool/devdax_table.o \
		      $(B)/daemon/storage/pool/meta.o
UNIT_DAEMON_pmem   := $(B)/daemon/config/pmem.o
UNIT_DAEMON_access := $(B)/daemon/config/access.o
UNIT_DAEMON_hcache := $(B)/daemon/storage/pool/hcache.o \
		      $(B)/daemon/storage/pool/meta.o
UNIT_DAEMON_pace   := $(B)/daemon/session/pace.o
# the handle table alone: the layers below it are stubbed in the test
UNIT_DAEMON_handles := $(B)/daemon/session/handles.o
# the hashing slots: events and access rules stubbed in the test
UNIT_DAEMON_registry := $(B)/daemon/session/registry.o \
			$(B)/daemon/session/pace.o
# the whole storage, its three layers (daemon/storage/*/)
UNIT_DAEMON_store  := $(patsubst %.c,$(B)/%.o,$(sort $(wildcard \
			daemon/storage/*/*.c)))
UNIT_DAEMON_undo   := $(B)/daemon/storage/journal/undo.o \
		      $(B)/daemon/storage/journal/undo_mend.o \
		      $(B)/daemon/storage/pool/meta.o
UNIT_FAKE          := $(UNIT_DIR)/fake_target.o

# the tests include daemon headers by name, and may look inside a pool
# (daemon/storage/pool/pool_int.h)
$(UNIT_DIR)/%.o: ALL_CFLAGS += -Idaemon -DRPMEMD_STORAGE_INTERNAL
# errors tests the CLI's exit codes and hints too (cmd/cli.o, cmd.h)
$(UNIT_DIR)/errors.o: ALL_CFLAGS += -Icmd

-include $(UNIT_BINS:=.d) $(UNIT_FAKE:.o=.d)

$(UNIT_DIR)/config: $(UNIT_DAEMON_config)
$(UNIT_DIR)/meta: $(UNIT_DAEMON_meta)
$(UNIT_DIR)/devdax: $(UNIT_DAEMON_devdax)
$(UNIT_DIR)/pmem: $(UNIT_DAEMON_pmem)
$(UNIT_DIR)/access: $(UNIT_DAEMON_access)
$(UNIT_DIR)/hcache: $(UNIT_DAEMON_hcache)
$(UNIT_DIR)/pace: $(UNIT_DAEMON_pace)
$(UNIT_DIR)/handles: $(UNIT_DAEMON_handles)
$(UNIT_DIR)/registry: $(UNIT_DAEMON_registry)
$(UNIT_DIR)/store: $(UNIT_DAEMON_store)
$(UNIT_DIR)/undo: $(UNIT_DAEMON_undo)
$(UNIT_DIR)/client_session $(UNIT_DIR)/client_pool \
	$(UNIT_DIR)/client_sync $(UNIT_DIR)/client_link \
	$(UNIT_DIR)/client_links $(UNIT_DIR)/client_log \
	$(UNIT_DIR)/client_query $(UNIT_DIR)/client_xport: $(UNIT_FAKE)
$(UNIT_DIR)/errors: $(B)/cmd/cli.o $(UNIT_FAKE)
# the preload library's parser (lib/preload/config.c)
$(UNIT_DIR)/preload_config.o: ALL_CFLAGS += -Ilib/preload
$(UNIT_DIR)/preload_config: $(B)/lib/preload/config.o

# objects first, then the archive, then the system libraries
$(UNIT_BINS): $(UNIT_DIR)/%: $(UNIT_DIR)/%.o $(B)/librpmem.a
	$(CC) -o $@ $(filter %.o,$^) $(B)/librpmem.a $(UNIT_WRAP_$*) \
		$(LDFLAGS) $(UNIT_LIBS) $(LDLIBS)

check-unit: $(UNIT_BINS)
	@UNIT_WRAPPER="$(UNIT_WRAPPER)" tests/unit/run.sh $(UNIT_BINS)
