# Thin entry points over meson/ninja.  See README.md.
#   make            build (build/)
#   make check      install deps, build, lint, unit tests (+ ASan/UBSan build),
#                   fuzz corpus replay, the fuzz targets built with clang,
#                   system tests in a throwaway root
#   make demo       install deps, build, show the suite working in a sandbox
#   make lint       cppcheck, shellcheck, clang-tidy bugprone checks (tools/lint)
#   make complexity functions above cognitive complexity 50 (tools/complexity)
#   make bench      benchmarks side by side with Debian's stock tools
#   make fuzz       run the libFuzzer targets for a while (clang)
#   make fuzz-build build the libFuzzer targets (clang) and replay their corpus
#   make install DESTDIR=...
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
MESON_OPTS ?=

.PHONY: all deps check lint complexity unit asan system demo bench fuzz fuzz-build install clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

deps:
	@tools/install-deps

install: deps
	$(MAKE) all
	meson install -C $(BUILD) --no-rebuild $(if $(DESTDIR),--destdir "$(DESTDIR)")

# Every target that needs packages installs them first, then builds, in
# that order even under make -j.
unit: deps
	$(MAKE) all
	meson test -C $(BUILD) --print-errorlogs

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Db_sanitize=address,undefined -Db_lundef=false $(MESON_OPTS)

asan: deps $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  meson test -C $(ASAN_BUILD) --print-errorlogs

system: deps
	$(MAKE) all
	tests/sandbox/run-system-tests $(BUILD)

# Both read $(BUILD)/compile_commands.json, so they build first.
lint: deps
	$(MAKE) all
	tools/lint $(BUILD)

complexity: deps
	$(MAKE) all
	tools/complexity $(BUILD)

check: deps
	$(MAKE) lint
	$(MAKE) unit
	$(MAKE) asan
	$(MAKE) fuzz-build
	$(MAKE) system

demo: deps
	$(MAKE) all
	tests/sandbox/demo $(BUILD)

bench: deps
	$(MAKE) all
	bench/run $(BUILD)

$(FUZZ_BUILD)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILD) -Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false

# Compiles the whole tree with clang -Werror (a gcc-only construct breaks
# here, not in a newcomer's `make fuzz`) and replays the corpus once.
fuzz-build: deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)
	tests/fuzz/run-fuzzers $(FUZZ_BUILD) 0

fuzz: deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)
	tests/fuzz/run-fuzzers $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
