# SPDX-License-Identifier: BSD-3-Clause
# fuzz.mk -- the handshake fuzz target; included by tests/tests.mk
#
# build/tests/handshake_fuzz: a driver built with the normal compiler that
# mutates a real PSK ClientHello and feeds random parser inputs (the BATS
# suite runs it). `make fuzz` builds the same target for libFuzzer with
# clang and ASan and runs it for FUZZ_SECONDS (default 60).

FUZZ_SECONDS ?= 60

$(B)/tests/handshake_fuzz: tests/fuzz/handshake_fuzz.c $(B)/librpmem.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DFUZZ_DRIVER -o $@ $< $(B)/librpmem.a \
		$(LDFLAGS) $(LDLIBS)

$(B)/fuzz/handshake_fuzz: tests/fuzz/handshake_fuzz.c $(LIB_SRC_ALL)
	@mkdir -p $(dir $@)
	clang -g -O1 -fsanitize=fuzzer,address -std=gnu11 -D_GNU_SOURCE \
		$(INC) $(PKG_CFLAGS) -o $@ $< $(COMMON_SRC) \
		$(LDFLAGS) $(LDLIBS)

.PHONY: fuzz
fuzz: $(B)/fuzz/handshake_fuzz
	@mkdir -p $(B)/fuzz/corpus
	$(B)/fuzz/handshake_fuzz -max_total_time=$(FUZZ_SECONDS) \
		$(B)/fuzz/corpus
