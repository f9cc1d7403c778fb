# SPDX-License-Identifier: BSD-3-Clause
# tests.mk -- test targets; included by the top-level Makefile

check: all
	@echo "tests: not wired yet"
