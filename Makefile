# Thin entry points over meson/ninja.  See README.md.
#   make            build (build/)
#   make check      install deps, build, lint, unit tests (+ ASan/UBSan build),
#                   fuzz corpus replay, the fuzz targets built with clang, the
#                   .deb (make deb), system tests in a throwaway root
#                   (test_package.py installs that .deb)
#   make demo       install deps, build, build the .deb (make deb), show the
#                   package's life cycle and each tool in sandboxes
#   make lint       cppcheck, shellcheck, clang-tidy bugprone checks (tools/lint)
#   make complexity functions above cognitive complexity 50 (tools/complexity)
#   make bench      benchmarks side by side with Debian's stock tools, and
#                   their graphs (build/bench-results/*.png, gnuplot)
#   make fuzz       run the libFuzzer targets for a while (clang)
#   make fuzz-build build the libFuzzer targets (clang) and replay their corpus
#   make install DESTDIR=...
#   make deb        Debian package: dist/hardened-shadow_VERSION_ARCH.deb
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
MESON_OPTS ?=

.PHONY: all deps check lint complexity unit asan system demo bench fuzz fuzz-build install clean deb

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
	$(MAKE) complexity
	$(MAKE) unit
	$(MAKE) asan
	$(MAKE) fuzz-build
	$(MAKE) deb
	$(MAKE) system

# The package is built from a copy of the checkout (tracked and untracked
# files, not ignored ones) in dist/src, so that dpkg-buildpackage's litter
# (debian/.debhelper, ../*.changes) stays out of the worktree; the .deb ends
# in dist/.  Running lintian on the result is part of the target.
DIST ?= dist
deb: deps
	rm -rf $(DIST)/src && mkdir -p $(DIST)/src/hardened-shadow
	git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C $(DIST)/src/hardened-shadow
	cd $(DIST)/src/hardened-shadow && DEB_BUILD_OPTIONS="parallel=2 $${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -us -uc -b
	rm -f $(DIST)/hardened-shadow_*.deb && mv $(DIST)/src/hardened-shadow_*.deb $(DIST)/
	lintian --fail-on error,warning $(DIST)/hardened-shadow_*.deb
	@ls $(DIST)/hardened-shadow_*.deb

demo: deps
	$(MAKE) all
	$(MAKE) deb
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
