# SPDX-License-Identifier: BSD-3-Clause
# Makefile -- build, install and test rpmemd, rpmemctl and librpmemctl

VERSION    := 0.1.0
SOVERSION  := 1
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system
DOCDIR     ?= $(PREFIX)/share/doc/rpmem
# the Pacemaker resource agent ocf:rpmem:rpmem (PREFIX=/usr: /usr/lib/ocf)
OCFDIR     ?= $(PREFIX)/lib/ocf/resource.d/rpmem
# where bash-completion looks (its pkg-config file says so)
COMPLETIONSDIR ?= $(shell $(PKG_CONFIG) --variable=completionsdir \
		bash-completion 2>/dev/null || \
		echo /usr/share/bash-completion/completions)
# sysusers and tmpfiles are read from /usr/lib only, whatever the prefix
SYSUSERSDIR ?= /usr/lib/sysusers.d
TMPFILESDIR ?= /usr/lib/tmpfiles.d
DESTDIR    ?=

B          := build
CC         ?= gcc
PKG_CONFIG ?= pkg-config
DEPS       := libpmem2 libconfig librpma libxxhash libndctl libdaxctl openssl
# rpmemd alone links these (sd_notify, its system call filter): the
# library stays free of them
DAEMON_DEPS := libsystemd libseccomp
# librpma and libxxhash ship no .pc file on some distributions
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(DEPS) $(DAEMON_DEPS) 2>/dev/null)
PKG_LIBS   := $(shell for p in $(DEPS); do \
		$(PKG_CONFIG) --libs $$p 2>/dev/null || \
		echo -l$$(echo $$p | sed s/^lib//); done)

WARN       := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-missing-field-initializers
CFLAGS     ?= -O2 -g
# each folder sees only the headers of what it may use (docs/ARCHITECTURE.md)
INC_COMMON := -Ilib/common
INC_RDMA   := -Ilib/common -Ilib/rdma
# lib/client is five layers, each a folder with its own header that
# sees only the folders below it: base/ (errors, text), session/
# (connect, TLS, channel, credentials, log), pool/ (remote pools, the TCP
# data plane, queries, hashes, scrub), sync/ (the sync engine and phases,
# dirty log, atomic, versions, generations), replicate/ (link, links,
# replica, status file)
INC_CLIENT_BASE := -Ilib -Ilib/common -Ilib/client/base
INC_CLIENT_SESSION := $(INC_CLIENT_BASE) -Ilib/client/session
INC_CLIENT_POOL := $(INC_CLIENT_SESSION) -Ilib/rdma -Ilib/client/pool
INC_CLIENT_SYNC := $(INC_CLIENT_POOL) -Ilib/client/sync
INC_CLIENT_REPLICATE := $(INC_CLIENT_SYNC) -Ilib/client/replicate
INC_CLIENT := $(INC_CLIENT_REPLICATE)
# the daemon's layers (docs/ARCHITECTURE.md): storage/ and config/ never
# see session/; the service on top (daemon/) and session/ see all.
# storage/ is three layers, each a folder that sees only those below it:
# pool/ (the pools, their files, metadata, hash cache), journal/ (undo
# journals, atomic and dense syncs), history/ (versions, scrub records,
# cuts, generations)
INC_STORE  := -Idaemon/storage/pool -Idaemon/storage/journal \
	      -Idaemon/storage/history
INC_DAEMON := -Ilib/common -Ilib/rdma -Idaemon -Idaemon/session \
	      $(INC_STORE) -Idaemon/config
INC_DAEMON_LOW := -Ilib/common -Ilib/rdma -Idaemon -Idaemon/config
INC_POOL    := $(INC_DAEMON_LOW) -Idaemon/storage/pool
INC_JOURNAL := $(INC_POOL) -Idaemon/storage/journal
INC_HISTORY := $(INC_JOURNAL) -Idaemon/storage/history
# rpmemctl sees only the public librpmemctl.h: the CLI is built on the API
INC_CMD    := -Ilib -Icmd
# tests and tools may look inside everything
INC        := $(INC_CLIENT) -Idaemon \
	      -Idaemon/session $(INC_STORE) -Idaemon/config
ALL_CFLAGS = -std=gnu11 $(WARN) -fPIC -fvisibility=hidden -D_GNU_SOURCE \
	      -DRPMEM_VERSION=\"$(VERSION)\" $(INC) $(PKG_CFLAGS) $(CFLAGS)
LDLIBS     := $(PKG_LIBS) -lpthread
DAEMON_LIBS := $(shell $(PKG_CONFIG) --libs $(DAEMON_DEPS) 2>/dev/null || \
		echo -lsystemd -lseccomp)

# who links what:
#   lib/common/             both ends: librpmemctl and rpmemd
#   lib/client/*/           librpmemctl only (the initiator's API)
#   lib/rdma/rdma_common.c  both ends (the only files with librpma.h are
#   lib/rdma/rdma_initiator*.c  librpmemctl      here, in lib/rdma/)
#   lib/rdma/rdma_target.c      rpmemd only
#   daemon/                 rpmemd;  cmd/  rpmemctl (on librpmemctl.a)
COMMON_SRC := $(sort $(wildcard lib/common/*.c)) lib/rdma/rdma_common.c
CLIENT_SRC := $(sort $(wildcard lib/client/*/*.c lib/rdma/rdma_initiator*.c))
TARGET_SRC := lib/rdma/rdma_target.c
DAEMON_SRC := $(sort $(wildcard daemon/*.c daemon/*/*.c daemon/*/*/*.c))
CMD_SRC    := $(sort $(wildcard cmd/*.c))
COMMON_OBJ := $(COMMON_SRC:%.c=$(B)/%.o)
CLIENT_OBJ := $(CLIENT_SRC:%.c=$(B)/%.o)
TARGET_OBJ := $(TARGET_SRC:%.c=$(B)/%.o)
LIB_OBJ    := $(COMMON_OBJ) $(CLIENT_OBJ) $(TARGET_OBJ)
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(B)/%.o)
CMD_OBJ    := $(CMD_SRC:%.c=$(B)/%.o)
# librpmem_preload: LD_PRELOAD replication (lib/preload/, on librpmemctl.so)
PRELOAD_SRC := $(sort $(wildcard lib/preload/*.c))
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(B)/%.o)
PRELOAD    := librpmem_preload.so

SONAME     := librpmemctl.so.$(SOVERSION)
# fills lib/librpmemctl.pc.in for the current PREFIX/LIBDIR/INCLUDEDIR
PC_SED     = sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|' \
		 -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|'
TARGETS    := $(B)/rpmemd $(B)/rpmemctl $(B)/$(SONAME) $(B)/librpmemctl.so \
	      $(B)/librpmemctl.a $(B)/librpmem.a $(B)/librpmemctl.pc \
	      $(B)/$(PRELOAD)

.PHONY: all clean install check check-unit check-bats check-vm check-vm-deps check-vm-cluster check-asan deps demo \
	bench format examples check-bats-asan
all: $(TARGETS)

$(B)/lib/common/%.o: INC := $(INC_COMMON)
$(B)/lib/rdma/%.o:   INC := $(INC_RDMA)
$(B)/lib/client/base/%.o: INC := $(INC_CLIENT_BASE)
$(B)/lib/client/session/%.o: INC := $(INC_CLIENT_SESSION)
$(B)/lib/client/pool/%.o: INC := $(INC_CLIENT_POOL)
$(B)/lib/client/sync/%.o: INC := $(INC_CLIENT_SYNC)
$(B)/lib/client/replicate/%.o: INC := $(INC_CLIENT_REPLICATE)
$(B)/daemon/%.o:     INC := $(INC_DAEMON)
# the fields of an open pool (pool_int.h) are the storage's alone
$(B)/daemon/storage/%.o: ALL_CFLAGS += -DRPMEMD_STORAGE_INTERNAL
$(B)/daemon/storage/pool/%.o:    INC := $(INC_POOL)
$(B)/daemon/storage/journal/%.o: INC := $(INC_JOURNAL)
$(B)/daemon/storage/history/%.o: INC := $(INC_HISTORY)
$(B)/daemon/config/%.o: INC := $(INC_DAEMON_LOW)
$(B)/cmd/%.o:        INC := $(INC_CMD)
$(B)/lib/preload/%.o: INC := -Ilib -Ilib/common -Ilib/preload

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

-include $(LIB_OBJ:.o=.d) $(DAEMON_OBJ:.o=.d) $(CMD_OBJ:.o=.d) \
	 $(PRELOAD_OBJ:.o=.d)

# librpmemctl, static (rpmemctl links it) and shared: no daemon code
$(B)/librpmemctl.a: $(COMMON_OBJ) $(CLIENT_OBJ)
	rm -f $@ && ar rcs $@ $^

# every lib/ object, both halves: for tests and tools only
$(B)/librpmem.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/$(SONAME): $(COMMON_OBJ) $(CLIENT_OBJ) lib/librpmemctl.map
	$(CC) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=lib/librpmemctl.map -Wl,--no-undefined \
		-o $@ $(COMMON_OBJ) $(CLIENT_OBJ) $(LDFLAGS) $(LDLIBS)

$(B)/librpmemctl.so: $(B)/$(SONAME)
	ln -sf $(SONAME) $@

# the public API of librpmemctl.so (found beside it in build/, one level
# up once installed in LIBDIR/rpmem/, a private directory: it is a
# preload module, not a library to link), plus the target parser;
# exports only what preload.map names
$(B)/$(PRELOAD): $(PRELOAD_OBJ) $(B)/lib/common/util.o $(B)/$(SONAME) \
		 lib/preload/preload.map
	$(CC) -shared -Wl,-soname,$(PRELOAD) \
		-Wl,--version-script=lib/preload/preload.map -Wl,--no-undefined \
		-Wl,-rpath,'$$ORIGIN:$$ORIGIN/..' -o $@ $(PRELOAD_OBJ) \
		$(B)/lib/common/util.o $(LDFLAGS) -L$(B) -l:$(SONAME) -lpmem2 \
		-ldl -lpthread

$(B)/librpmemctl.pc: lib/librpmemctl.pc.in Makefile
	$(PC_SED) $< > $@

$(B)/rpmemd: $(DAEMON_OBJ) $(COMMON_OBJ) $(TARGET_OBJ)
	$(CC) -o $@ $^ $(LDFLAGS) $(DAEMON_LIBS) $(LDLIBS)

$(B)/rpmemctl: $(CMD_OBJ) $(B)/librpmemctl.a
	$(CC) -o $@ $^ $(LDFLAGS) $(LDLIBS)

deps:
	packaging/install-deps.sh

include tests/tests.mk

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/rpmemd \
		$(DESTDIR)$(SYSCONFDIR)/rpmem \
		$(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
		$(DESTDIR)$(COMPLETIONSDIR) $(DESTDIR)$(OCFDIR)
	install -m 755 $(B)/rpmemctl $(DESTDIR)$(BINDIR)/rpmemctl
	install -m 755 ocf/rpmem $(DESTDIR)$(OCFDIR)/rpmem
	install -m 755 ocf/rpmem-fence-peer $(DESTDIR)$(SBINDIR)/rpmem-fence-peer
	install -m 644 completion/rpmemctl $(DESTDIR)$(COMPLETIONSDIR)/rpmemctl
	install -m 755 $(B)/rpmemd $(DESTDIR)$(SBINDIR)/rpmemd
	install -m 755 $(B)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/librpmemctl.so
	install -m 644 $(B)/librpmemctl.a $(DESTDIR)$(LIBDIR)/librpmemctl.a
	install -d $(DESTDIR)$(LIBDIR)/rpmem
	install -m 644 $(B)/$(PRELOAD) $(DESTDIR)$(LIBDIR)/rpmem/$(PRELOAD)
	# regenerated here: PREFIX may differ from the one 'make all' used
	$(PC_SED) lib/librpmemctl.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/librpmemctl.pc
	install -m 644 lib/librpmemctl.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 man/rpmemctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/librpmemctl.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 man/rpmemd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 man/rpmem_preload.7 $(DESTDIR)$(MANDIR)/man7/
	install -m 644 man/rpmemd.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 644 man/rpmem-fence-peer.8 $(DESTDIR)$(MANDIR)/man8/
	sed 's|@SBINDIR@|$(SBINDIR)|' systemd/rpmemd.service.in > \
		$(DESTDIR)$(UNITDIR)/rpmemd.service
	test -e $(DESTDIR)$(SYSCONFDIR)/rpmemd/rpmemd.conf || \
		install -m 644 etc/rpmemd.conf $(DESTDIR)$(SYSCONFDIR)/rpmemd/rpmemd.conf
	install -m 644 etc/rpmemd.conf $(DESTDIR)$(DOCDIR)/rpmemd.conf.example
	install -m 644 etc/rpmemctl.conf $(DESTDIR)$(DOCDIR)/rpmemctl.conf.example
	install -m 644 systemd/rpmemd.sysusers $(DESTDIR)$(SYSUSERSDIR)/rpmemd.conf
	install -m 644 systemd/rpmemd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/rpmemd.conf
	install -m 644 README.md docs/PROTOCOL.md docs/JSON.md LICENSE $(DESTDIR)$(DOCDIR)/

format:
	clang-format -i lib/*.h lib/*/*.[ch] lib/*/*/*.[ch] daemon/*.[ch] daemon/*/*.[ch] \
		daemon/*/*/*.[ch] cmd/*.[ch]

clean:
	rm -rf $(B)

demo: all
	tests/demo.sh
