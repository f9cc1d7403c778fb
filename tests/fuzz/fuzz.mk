# SPDX-License-Identifier: BSD-3-Clause
# fuzz.mk -- the fuzz targets; included by tests/tests.mk
#
# handshake_fuzz: what a peer sends before it is trusted (a mutated PSK
# ClientHello through the real rpmem_tls_start, HELLO, HELLO_OK, ERROR,
# PSK lines). decode_fuzz: every wire decoder (tests/fuzz/decode_fuzz.c).
# Each is built two ways: with the normal compiler as a driver the BATS
# suite runs (build/tests/), and for libFuzzer with clang, ASan and UBSan
# (build/fuzz/). `make check-fuzz` runs each libFuzzer target for
# FUZZ_SECONDS (default 45) from its seeds in tests/fuzz/corpus/ (copied:
# what a run finds stays in build/fuzz/) and ends with
# "fuzz: N passed, N failed"; `make fuzz` runs them for as long.

FUZZ_SECONDS ?= 45
FUZZ_TARGETS := handshake_fuzz decode_fuzz
FUZZ_SAN     := -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined

$(B)/tests/handshake_fuzz $(B)/tests/decode_fuzz: $(B)/tests/%: \
		tests/fuzz/%.c $(B)/librpmem.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DFUZZ_DRIVER -o $@ $< $(B)/librpmem.a \
		$(LDFLAGS) $(LDLIBS)

$(FUZZ_TARGETS:%=$(B)/fuzz/%): $(B)/fuzz/%: tests/fuzz/%.c $(COMMON_SRC)
	@mkdir -p $(dir $@)
	clang -g -O1 $(FUZZ_SAN) -std=gnu11 -D_GNU_SOURCE \
		$(INC) $(PKG_CFLAGS) -o $@ $< $(COMMON_SRC) \
		$(LDFLAGS) $(LDLIBS)

.PHONY: fuzz check-fuzz
fuzz check-fuzz: $(FUZZ_TARGETS:%=$(B)/fuzz/%)
	@B=$(B) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ_TARGETS)
