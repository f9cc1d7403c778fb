# SPDX-License-Identifier: BSD-3-Clause
# pmem.mk -- build/tests/pmem_probe for tests/vm/suites/pmem.sh; included
# by the top-level Makefile (needs B, CC, ALL_CFLAGS, LDFLAGS, LDLIBS)

PMEM_PROBE_OBJ := $(B)/daemon/config/pmem.o $(B)/daemon/storage/pool/devdax.o \
		  $(B)/daemon/storage/pool/devdax_table.o $(B)/daemon/storage/pool/meta.o

.PHONY: pmem-probe
pmem-probe: $(B)/tests/pmem_probe

$(B)/tests/pmem_probe: tests/vm/pmem_probe.c $(PMEM_PROBE_OBJ) $(B)/librpmem.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Idaemon -o $@ $< $(PMEM_PROBE_OBJ) \
		$(B)/librpmem.a $(LDFLAGS) $(LDLIBS)
