# leasegate: the one build.
#   make            build build/leasegate
#   make run        install what building and running need (./deps.sh run: no
#                   test servers), build, run on the embedded store
#   make test       install what the tests need too (./deps.sh test), build, run
#                   unit + integration tests
#                   (each under a time limit; ends "N passed, N failed, N skipped")
#   make check      the same suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make stress     contention and fault-injection safety checks on the serialized
#                   moto (tests/run-stress.sh -> tests/stress/stress.py): 3 gateways,
#                   9 clients, SIGSTOP/SIGKILL/DynamoDB blackhole of the holder's
#                   gateway; fails on an overlapping hold or a token out of order;
#                   then tests/stress/fenced.py: LOCK.TRANSACT appends under
#                   SIGSTOP/SIGKILL of 2 gateways (FENCED_SECONDS, 40).
#                   STRESS_SECONDS (60), STRESS_CLIENTS, STRESS_LEASE_MS...
#   make bench      the benchmarks of bench/
#   make fuzz       every tests/fuzz/fuzz_*.c with libFuzzer (FUZZ_SECONDS each)
#   make simulate   the deterministic simulator of the lease core (tests/sim):
#                   SEEDS=N seeds from FIRST (1); SEED=s replays one with its trace;
#                   EXCLUSIVE=1 without shared holders (the seeds' world before them);
#                   SHARED_LIVENESS=1 holds shared waiters to the fairness bound too
#   make image      the container image with podman (docker/build-image.sh), then
#                   docker/test-image.sh runs it against moto (root; minutes)
#   make install    the binary, the man page leasegate(1), the example configuration
#                   and the systemd unit (below: PREFIX, DESTDIR...); make uninstall
#   make docs       regenerate the reference pages docs/reference/commands.md,
#                   configuration.md and functions.md from the command rows, the
#                   option table and the PostgreSQL function table
#                   (build/gen_docs); tests/integration/docs_fresh.sh fails when stale
#   make format     clang-format every source file (.clang-format; idempotent)
#   make format-check  fail, naming the files, when a file is not formatted (CI)
#   make clean
#
# Sources are found by directory, so a new module is a new .c file:
#   lib/*/*.c core/*.c core/*/*.c core/*/*/*.c protocols/*.c protocols/*/*.c
#   gateway/*/*.c gateway/*.c (but main.c)                  -> build/libleasegate.a
#   gateway/main.c                                          -> build/leasegate
#   tests/unit/test_*.c                                     -> build/tests/test_*
#   tests/integration/it_*.c                                -> build/tests/it_*
#   bench/bench_*.c                                         -> build/bench/bench_*
#   tools/gen_docs.c                                        -> build/gen_docs

BUILD   ?= build
CC      ?= cc
PKGS    := libevent libevent_openssl hiredis libcurl openssl libcjson lua5.1
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wno-unused-parameter -Werror -I.
CFLAGS  += $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
ifeq ($(SAN),1)
# LG_ASSERT_ABORT: a failed LG_ASSERT (lib/base/lg_assert.h) aborts under make check
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
           -DLG_ASSERT_ABORT
LDFLAGS += -fsanitize=address,undefined
endif

LIB_SRC   := $(wildcard lib/*/*.c core/*.c core/*/*.c core/*/*/*.c protocols/*.c protocols/*/*.c \
                        gateway/*/*.c) \
             $(filter-out gateway/main.c,$(wildcard gateway/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
IT_SRC    := $(wildcard tests/integration/it_*.c)
IT_BIN    := $(IT_SRC:tests/integration/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(wildcard bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
TESTLIB   := $(wildcard tests/support/*.c)
TESTLIB_OBJ := $(TESTLIB:%.c=$(BUILD)/obj/%.o)

.SECONDARY:
.PHONY: install uninstall docs simulate format-check all deps deps-run run test suite unit integration check stress bench fuzz image format clean
all: $(BUILD)/leasegate

# The tests' packages (servers among them: redis-server starts a Redis on
# 6379 when Debian installs it) for the test targets only.
deps:
	@./deps.sh test

deps-run:
	@./deps.sh run

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libleasegate.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/leasegate: $(BUILD)/obj/gateway/main.o $(BUILD)/libleasegate.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/unit/test_%.o $(TESTLIB_OBJ) $(BUILD)/libleasegate.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/it_%: $(BUILD)/obj/tests/integration/it_%.o $(TESTLIB_OBJ) $(BUILD)/libleasegate.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcmocka -lpq -o $@

$(BUILD)/bench/bench_%: $(BUILD)/obj/bench/bench_%.o $(BUILD)/libleasegate.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# bench_fairness runs the tests' fairness loop and process starters (no cmocka)
$(BUILD)/bench/bench_fairness: $(BUILD)/obj/tests/support/fairloop.o \
                               $(BUILD)/obj/tests/support/gwproc.o

# bench_scale runs the DynamoDB stand-in of the tests (which uses the
# library: it links before it) and starts gateways
$(BUILD)/bench/bench_scale: $(BUILD)/obj/bench/bench_scale.o \
                            $(BUILD)/obj/tests/support/ddb_standin.o \
                            $(BUILD)/obj/tests/support/ddb_standin_ops.o \
                            $(BUILD)/obj/tests/support/ddb_standin_sess.o \
                            $(BUILD)/obj/tests/support/ddb_standin_thread.o \
                            $(BUILD)/obj/tests/support/gwproc.o $(BUILD)/libleasegate.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) $(BUILD)/libleasegate.a $(LDLIBS) -lpthread -o $@

$(BUILD)/obj/tests/integration/%.o: CFLAGS += -I/usr/include/postgresql

# The reference pages, generated from the tables they describe.
$(BUILD)/gen_docs: $(BUILD)/obj/tools/gen_docs.o $(BUILD)/libleasegate.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

docs: $(BUILD)/gen_docs
	@mkdir -p docs/reference
	$(BUILD)/gen_docs docs/reference

# The deterministic simulator: several locktables on fake clocks over a
# simulated DynamoDB (tests/sim/sim.h); not in libleasegate.a.
SIM_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/sim/*.c))
$(BUILD)/sim/sim: $(SIM_OBJ) $(BUILD)/libleasegate.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

SEEDS ?= 1000
FIRST ?= 1
SIM_FLAGS = $(if $(EXCLUSIVE),--exclusive) $(if $(SHARED_LIVENESS),--shared-liveness) \
	$(if $(HEARTBEAT),--heartbeat $(HEARTBEAT)) $(if $(SCALE),--scale $(SCALE)) \
	$(if $(TAKERS),--takers $(TAKERS))
simulate: $(BUILD)/sim/sim
	@if [ -n "$(SEED)" ]; then $(BUILD)/sim/sim $(SIM_FLAGS) --seed $(SEED); \
	else $(BUILD)/sim/sim $(SIM_FLAGS) --seeds $(SEEDS) --first $(FIRST); fi

run: deps-run all
	$(BUILD)/leasegate $(ARGS)

unit: all $(UNIT_BIN)
	@tests/run-unit.sh $(UNIT_BIN)

integration: all $(IT_BIN) $(BUILD)/sim/sim $(BUILD)/gen_docs
	@BUILD=$(BUILD) tests/run-integration.sh

# Both runners, the second even when the first failed, then the sum of
# their closing lines; fails when either failed (or, with
# LG_REFUSE_SKIPS=1 as in .ci/run, skipped a test). Every test runs under
# a time limit (tests/run-unit.sh, tests/run-integration.sh).
suite: all $(UNIT_BIN) $(IT_BIN) $(BUILD)/sim/sim $(BUILD)/gen_docs
	@rm -f $(BUILD)/tests/totals; rc=0; \
	LG_TOTALS=$(BUILD)/tests/totals tests/run-unit.sh $(UNIT_BIN) || rc=1; \
	LG_TOTALS=$(BUILD)/tests/totals BUILD=$(BUILD) tests/run-integration.sh || rc=1; \
	awk '{ p += $$1; f += $$2; s += $$3 } \
	     END { printf "all tests: %d passed, %d failed, %d skipped\n", p, f, s }' \
	    $(BUILD)/tests/totals; \
	exit $$rc

test: deps
	@$(MAKE) --no-print-directory suite

# The fuzz targets are built too (not run: make fuzz), so a change of a
# library call they use breaks make check, not only CI's fuzz smoke.
check: deps
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@$(MAKE) --no-print-directory BUILD=build/san SAN=1 OPT=-O1 suite

# Long-running safety checks, not part of make test (a short version is:
# tests/integration/stress_short.sh). Logs kept in $(BUILD)/stress/.
stress: deps all
	@BUILD=$(BUILD) tests/run-stress.sh

bench: deps all $(BENCH_BIN)
	@BUILD=$(BUILD) bench/run.sh

# libFuzzer targets: clang builds the library once with ASan and UBSan
# (build/fuzz/obj) and each tests/fuzz/fuzz_*.c against it, then runs each
# for FUZZ_SECONDS on its corpus: build/fuzz/NAME.corpus (what it finds,
# kept between runs) seeded from tests/fuzz/corpus/NAME (checked in). A
# crash stops the run with the input in build/fuzz/crash-*: turn it into a
# regression test in the unit test of the parser it hit. The library and
# the targets alike are built with ASan and UBSan (-fsanitize=undefined has
# shift, signed-integer-overflow...), and -fno-sanitize-recover=undefined
# makes a UBSan report abort as a crash: without it UBSan prints and the
# run goes on, and passes.
FUZZ_SECONDS ?= 60
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_OBJ := $(LIB_SRC:%.c=build/fuzz/obj/%.o)
FUZZ_CFLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	       -std=c11 -D_GNU_SOURCE -DLG_ASSERT_ABORT -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
build/fuzz/libleasegate.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libleasegate.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $< build/fuzz/libleasegate.a $(LDLIBS) -o $@
fuzz: deps
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@cd build/fuzz && for n in $(notdir $(FUZZ_BIN)); do mkdir -p $$n.corpus; \
	  seeds=../../tests/fuzz/corpus/$$n; [ -d $$seeds ] || seeds=; \
	  UBSAN_OPTIONS=print_stacktrace=1 ./$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$n.corpus \
	    $$seeds 2>$$n.log || { tail -40 $$n.log; exit 1; }; \
	  echo "$$n: $$(grep -h stat::number_of_executed_units $$n.log | \
	    awk '{print $$2}') executions in $(FUZZ_SECONDS) s, no crash"; done

# make install, as GNU programs do: PREFIX (/usr/local), DESTDIR (a staging
# root), bindir, mandir, sysconfdir (/etc when PREFIX is /usr, else
# PREFIX/etc) and unitdir (PREFIX/lib/systemd/system) may each be given.
# The man page and the example configuration are generated by the binary
# from its option and command tables (leasegate --man, --example-config).
# An existing leasegate.conf is kept (the new example goes beside it as
# leasegate.conf.example); uninstall removes it only when it is still the
# example, unchanged.
PREFIX     ?= /usr/local
prefix     ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir     ?= $(exec_prefix)/bin
datarootdir ?= $(prefix)/share
mandir     ?= $(datarootdir)/man
man1dir    ?= $(mandir)/man1
sysconfdir ?= $(if $(filter /usr,$(prefix)),/etc,$(prefix)/etc)
unitdir    ?= $(prefix)/lib/systemd/system
INSTALL    ?= install
CONFDIR    := $(DESTDIR)$(sysconfdir)/leasegate

$(BUILD)/dist/leasegate.1: $(BUILD)/leasegate
	@mkdir -p $(dir $@)
	$(BUILD)/leasegate --man '$(sysconfdir)' >$@.tmp && mv $@.tmp $@
$(BUILD)/dist/leasegate.conf: $(BUILD)/leasegate
	@mkdir -p $(dir $@)
	$(BUILD)/leasegate --example-config >$@.tmp && mv $@.tmp $@
$(BUILD)/dist/leasegate.service: dist/leasegate.service.in
	@mkdir -p $(dir $@)
	sed -e 's|@bindir@|$(bindir)|g' -e 's|@sysconfdir@|$(sysconfdir)|g' $< >$@

# the generated files depend on the directories given: made anew each time
install: all
	@rm -f $(BUILD)/dist/leasegate.1 $(BUILD)/dist/leasegate.service
	@$(MAKE) --no-print-directory $(BUILD)/dist/leasegate.1 $(BUILD)/dist/leasegate.conf \
	    $(BUILD)/dist/leasegate.service
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(man1dir) $(DESTDIR)$(unitdir) $(CONFDIR)
	$(INSTALL) -m 755 $(BUILD)/leasegate $(DESTDIR)$(bindir)/leasegate
	$(INSTALL) -m 644 $(BUILD)/dist/leasegate.1 $(DESTDIR)$(man1dir)/leasegate.1
	$(INSTALL) -m 644 $(BUILD)/dist/leasegate.service $(DESTDIR)$(unitdir)/leasegate.service
	@if [ -e $(CONFDIR)/leasegate.conf ] && \
	    ! cmp -s $(BUILD)/dist/leasegate.conf $(CONFDIR)/leasegate.conf; then \
	  echo "kept $(CONFDIR)/leasegate.conf (yours); the example is leasegate.conf.example"; \
	  $(INSTALL) -m 644 $(BUILD)/dist/leasegate.conf $(CONFDIR)/leasegate.conf.example; \
	else \
	  echo "$(INSTALL) -m 644 $(BUILD)/dist/leasegate.conf $(CONFDIR)/leasegate.conf"; \
	  $(INSTALL) -m 644 $(BUILD)/dist/leasegate.conf $(CONFDIR)/leasegate.conf; \
	fi

uninstall:
	@$(MAKE) --no-print-directory $(BUILD)/dist/leasegate.conf
	rm -f $(DESTDIR)$(bindir)/leasegate $(DESTDIR)$(man1dir)/leasegate.1 \
	    $(DESTDIR)$(unitdir)/leasegate.service $(CONFDIR)/leasegate.conf.example
	@if cmp -s $(BUILD)/dist/leasegate.conf $(CONFDIR)/leasegate.conf; then \
	  echo "rm -f $(CONFDIR)/leasegate.conf"; rm -f $(CONFDIR)/leasegate.conf; \
	elif [ -e $(CONFDIR)/leasegate.conf ]; then \
	  echo "kept $(CONFDIR)/leasegate.conf: changed since make install"; fi
	@rmdir $(CONFDIR) 2>/dev/null || true

# The image is built from the sources (docker/Dockerfile), not from build/.
image:
	@docker/test-image.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	@bad=$$(for f in $$(git ls-files '*.c' '*.h'); do \
	  clang-format --dry-run -Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then echo "not formatted (make format):" $$bad; exit 1; fi; \
	echo "format-check: $$(git ls-files '*.c' '*.h' | wc -l) files formatted"

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj build/fuzz/obj -name '*.d' 2>/dev/null)
