# SPDX-License-Identifier: BSD-3-Clause
# rdma.mk -- the RDMA data-plane self-test; included by tests/tests.mk

RDMA_SELFTEST := $(B)/tests/rdma_selftest

$(RDMA_SELFTEST): tests/vm/rdma_selftest.c $(B)/librpmem.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/librpmem.a $(LDFLAGS) $(LDLIBS)

.PHONY: rdma-selftest
rdma-selftest: $(RDMA_SELFTEST)

# the rdma-lib VM suite runs it
examples check-vm: $(RDMA_SELFTEST)
