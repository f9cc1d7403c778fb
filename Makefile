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
# sysusers and tmpfiles are read from /usr/lib only, whatever the prefix
SYSUSERSDIR ?= /usr/lib/sysusers.d
TMPFILESDIR ?= /usr/lib/tmpfiles.d
DESTDIR    ?=

B          := build
CC         ?= gcc
PKG_CONFIG ?= pkg-config
DEPS       := libpmem2 libconfig librpma libxxhash libndctl libdaxctl
# librpma and libxxhash ship no .pc file on some distributions
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(DEPS) 2>/dev/null)
PKG_LIBS   := $(shell for p in $(DEPS); do \
		$(PKG_CONFIG) --libs $$p 2>/dev/null || \
		echo -l$$(echo $$p | sed s/^lib//); done)

WARN       := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-missing-field-initializers
CFLAGS     ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(WARN) -fPIC -fvisibility=hidden -D_GNU_SOURCE \
	      -DRPMEM_VERSION=\"$(VERSION)\" -Ilib $(PKG_CFLAGS) $(CFLAGS)
LDLIBS     := $(PKG_LIBS) -lpthread

LIB_SRC    := $(sort $(wildcard lib/*.c))
DAEMON_SRC := $(sort $(wildcard daemon/*.c))
CMD_SRC    := $(sort $(wildcard cmd/*.c))
LIB_OBJ    := $(LIB_SRC:%.c=$(B)/%.o)
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(B)/%.o)
CMD_OBJ    := $(CMD_SRC:%.c=$(B)/%.o)

SONAME     := librpmemctl.so.$(SOVERSION)
# fills lib/librpmemctl.pc.in for the current PREFIX/LIBDIR/INCLUDEDIR
PC_SED     = sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|' \
		 -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|'
TARGETS    := $(B)/rpmemd $(B)/rpmemctl $(B)/$(SONAME) $(B)/librpmemctl.so \
	      $(B)/librpmem.a $(B)/librpmemctl.pc

.PHONY: all clean install check check-unit check-bats check-vm deps demo \
	bench format examples
all: $(TARGETS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

-include $(LIB_OBJ:.o=.d) $(DAEMON_OBJ:.o=.d) $(CMD_OBJ:.o=.d)

# the static archive of lib/ is shared by the daemon and the CLI
$(B)/librpmem.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/$(SONAME): $(LIB_OBJ) lib/librpmemctl.map
	$(CC) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=lib/librpmemctl.map -Wl,--no-undefined \
		-o $@ $(LIB_OBJ) $(LDFLAGS) $(LDLIBS)

$(B)/librpmemctl.so: $(B)/$(SONAME)
	ln -sf $(SONAME) $@

$(B)/librpmemctl.pc: lib/librpmemctl.pc.in Makefile
	$(PC_SED) $< > $@

$(B)/rpmemd: $(DAEMON_OBJ) $(B)/librpmem.a
	$(CC) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(B)/rpmemctl: $(CMD_OBJ) $(B)/librpmem.a
	$(CC) -o $@ $^ $(LDFLAGS) $(LDLIBS)

deps:
	packaging/install-deps.sh

include tests/tests.mk

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/rpmemd \
		$(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR)
	install -m 755 $(B)/rpmemctl $(DESTDIR)$(BINDIR)/rpmemctl
	install -m 755 $(B)/rpmemd $(DESTDIR)$(SBINDIR)/rpmemd
	install -m 755 $(B)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/librpmemctl.so
	install -m 644 $(B)/librpmem.a $(DESTDIR)$(LIBDIR)/librpmemctl.a
	# regenerated here: PREFIX may differ from the one 'make all' used
	$(PC_SED) lib/librpmemctl.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/librpmemctl.pc
	install -m 644 lib/librpmemctl.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 man/rpmemctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/librpmemctl.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 man/rpmemd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 man/rpmemd.8 $(DESTDIR)$(MANDIR)/man8/
	sed 's|@SBINDIR@|$(SBINDIR)|' systemd/rpmemd.service.in > \
		$(DESTDIR)$(UNITDIR)/rpmemd.service
	test -e $(DESTDIR)$(SYSCONFDIR)/rpmemd/rpmemd.conf || \
		install -m 644 etc/rpmemd.conf $(DESTDIR)$(SYSCONFDIR)/rpmemd/rpmemd.conf
	install -m 644 etc/rpmemd.conf $(DESTDIR)$(DOCDIR)/rpmemd.conf.example
	install -m 644 systemd/rpmemd.sysusers $(DESTDIR)$(SYSUSERSDIR)/rpmemd.conf
	install -m 644 systemd/rpmemd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/rpmemd.conf
	install -m 644 README.md docs/PROTOCOL.md docs/JSON.md LICENSE $(DESTDIR)$(DOCDIR)/

format:
	clang-format -i lib/*.[ch] daemon/*.[ch] cmd/*.[ch]

clean:
	rm -rf $(B)

demo: all
	tests/demo.sh
