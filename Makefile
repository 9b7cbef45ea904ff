# PushProvider — see README.md. `make run` and `make test` are the two commands a newcomer needs.
SWIFT   ?= swift
CONFIG  ?= Config/pushctl.json
RELEASE := .build/release/pushctl
SYSLIBS := libcurl4-openssl-dev libssl-dev libsqlite3-dev pkg-config openssl
# The tz database: registrations' time zones are checked against /usr/share/zoneinfo/tzdata.zi (zones and links).
TZPKGS := tzdata
# PostgreSQL server and client: the tests start a private server (initdb in a temporary directory).
PGPKGS  := postgresql postgresql-client
# An HTTP proxy: the outbound-proxy tests start a private tinyproxy (a temporary config, in the foreground).
PROXYPKGS := tinyproxy
# A browser for the console test (Tests/console/console.sh): headless chromium driven by its chromedriver.
CONSOLEPKGS := chromium chromium-driver
# Packaging (make deb, Tests/package): dpkg-shlibdeps, lintian, systemd-analyze, and adduser for the package's
# maintainer scripts when Tests/package/deb.sh installs it.
PKGPKGS := dpkg-dev lintian systemd adduser
# The commit `pushctl --version` names: Package.swift reads it from the environment (SwiftPM caches the manifest
# by its environment, so a new commit recompiles one C file and relinks). "unknown" outside git.
export PUSHPROVIDER_COMMIT := $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null || c=$$c-dirty; } && echo $$c)
PACKAGES := .build/packages

.PHONY: deps build release test run install-local certs deb dist bench bench-deps clean cli-reference docs referees

## deps: the system libraries (libcurl, OpenSSL, SQLite), PostgreSQL, tinyproxy and chromium (for the tests);
## installs them with apt-get when run as root.
deps:
	@if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libcurl openssl sqlite3 && command -v openssl >/dev/null 2>&1 \
	    && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null 2>&1 \
	    && command -v tinyproxy >/dev/null 2>&1 && [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] \
	    && command -v dpkg-shlibdeps >/dev/null 2>&1 && command -v lintian >/dev/null 2>&1 \
	    && command -v systemd-analyze >/dev/null 2>&1 && command -v adduser >/dev/null 2>&1 \
	    && [ -f /usr/share/zoneinfo/tzdata.zi ]; then \
	  echo "deps: libcurl, openssl, sqlite3, tzdata, postgresql, tinyproxy, chromium and the packaging tools found"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "deps: installing $(SYSLIBS) $(TZPKGS) $(PGPKGS) $(PROXYPKGS) $(CONSOLEPKGS) $(PKGPKGS)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SYSLIBS) $(TZPKGS) $(PGPKGS) $(PROXYPKGS) $(CONSOLEPKGS) $(PKGPKGS) >/dev/null; \
	else \
	  echo "deps: missing system packages; install them with:"; \
	  echo "  sudo apt-get install -y $(SYSLIBS) $(TZPKGS) $(PGPKGS) $(PROXYPKGS) $(CONSOLEPKGS) $(PKGPKGS)"; \
	  exit 1; \
	fi

## referees: the field's reference implementations from PyPI, pinned (Tests/referees/install.sh), which the Swift
## tests run as subprocesses: http_ece decrypts what our Web Push sender encrypts, py_vapid and PyJWT verify what it
## signs (PushSenderTests' WebPushRefereeTests), pywebpush sends to the simulator's Web Push service
## (SimulatorWebPushRefereeTests), PyJWT verifies our FCM service-account assertion (FCMServiceAccountTests).
## Nothing to do when they are installed; fails when PyPI is unreachable, and those tests fail, never skip, without them.
referees:
	bash Tests/referees/install.sh

## build: debug build of everything (used by the tests).
build: deps
	$(SWIFT) build --build-tests

## release: optimised build of pushctl (used by run and bench). The Swift runtime and Foundation are linked
## statically: a process starts without resolving a dozen Swift libraries and maps only the pages it uses
## (cold `pushctl send` and peak RSS; see bench/RESULTS.md). libcurl, OpenSSL and SQLite stay the system's.
## --no-export-dynamic undoes the static stdlib's -export-dynamic: pushctl loads no plugins, and 48,000 exported
## Swift symbols cost every start a 4 MB symbol table and the runtime's dladdr a scan of it.
RELEASE_FLAGS := -c release --static-swift-stdlib -Xlinker --no-export-dynamic
release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product pushctl

## test: the whole test suite, an app's package using only the client library (Tests/client/consumer.sh), the API fuzzed against its OpenAPI description (schemathesis), then the release build (Swift 6 reports some concurrency errors only there), a smoke test of the release binary and the README's examples (Tests/readme/readme.sh).
## The fault suites (5,000-device broadcasts under APNs and database faults, suites named *FaultTests) and the
## timed broadcast tests (BroadcastTimingTests: --rate, joining, progress) run after the others, one test at a
## time, so their load does not starve the timing-sensitive tests and theirs is measured on a quiet machine; then the
## sender's suites again on libcurl 8; then the multi-host test (network namespaces: a database host, an APNs
## host, three workers, one killed); then the package, built from the same release binary, installed and removed.
## Every process a step starts inherits PUSHPROVIDER_TEST_RUN: the last step fails if one still runs.
test: export PUSHPROVIDER_TEST_RUN := $(shell date +%s%N)
test: deps referees
	$(SWIFT) build --build-tests
	@# The blocking store API is noasync: fixtures that call it from async code must fail to compile.
	bash Tests/noasync/noasync.sh .build/debug
	@# docs/cli.md and the man page are generated from the argument parser: fails when they are stale.
	bash Tests/cli/reference.sh .build/debug/pushctl
	@# Every fenced block of README.md and docs/*.md carries a readme.sh marker and every link resolves (the full
	@# README run below reports these too, but only at the end of the run).
	python3 Tests/readme/readme.py --lint README.md docs/*.md
	@# DocC for PushProviderClient from the module just built, warnings as errors (`make docs`).
	bash Tests/docc/docc.sh .build/debug
	@# An app's package depending on this repository and using only PushProviderClient: it must build the client's
	@# module and nothing of the server (no NIO, Hummingbird, postgres-nio or Push* server module), then run.
	SWIFT=$(SWIFT) bash Tests/client/consumer.sh
	@# Under a private TMPDIR: fails when the tests leave their pushctl-test-* directories behind. The parallel tests
	@# run in four processes, not one. First because Foundation's Process.run() on Linux (Swift 6.3.1) over-reads
	@# glibc's /proc/self/fd readdir buffer and crashes once the test process holds ~1,365 descriptors
	@# (swift-corelibs-foundation #5472, fixed after 6.3.1); all at once peaked at 1,367 (every suite's event loops,
	@# simulators and connections), these groups at most 1,023 together and 550 for the rest. The tests no longer
	@# start children with Process (Tests/TestSupport: ChildProcess and ProcessRunner, both on posix_spawn), but the
	@# groups stay as they were measured. The store's suites run
	@# apart from the CLI and simulator suites: their tests are synchronous (the blocking store API) and hold a thread
	@# of the cooperative pool (two here) for each PostgreSQL round trip, which starved the tests that time a child
	@# process or answer within milliseconds (two processes took 40 + 71 s against 112 s together, 2026-11-29).
	bash Tests/leftovers/leftovers.sh $(SWIFT) test --skip-build --filter "PushServerTests" --skip "FaultTests|BroadcastTimingTests"
	bash Tests/leftovers/leftovers.sh $(SWIFT) test --skip-build --filter "PushProviderClientTests|PushSenderTests" --skip "FaultTests|BroadcastTimingTests"
	bash Tests/leftovers/leftovers.sh $(SWIFT) test --skip-build --filter "PushStoreTests|PushCoreTests" --skip "FaultTests|BroadcastTimingTests"
	bash Tests/leftovers/leftovers.sh $(SWIFT) test --skip-build --skip "PushServerTests|PushProviderClientTests|PushSenderTests|PushStoreTests|PushCoreTests|FaultTests|BroadcastTimingTests"
	bash Tests/leftovers/leftovers.sh $(SWIFT) test --skip-build --filter "FaultTests|BroadcastTimingTests" --no-parallel
	@# The HTTP API against docs/openapi.yaml: schemathesis (PyPI, installed by the script) with --checks all, a fixed
	@# seed and two changing ones in two lanes at once (it generates its cases on one core).
	bash Tests/schemathesis/schemathesis.sh .build/debug/pushctl
	@# The web console in headless chromium over WebDriver (Selenium from PyPI, the system chromedriver); fails
	@# when chromium cannot be installed.
	bash Tests/console/console.sh .build/debug/pushctl
	@# The sender's transport suites and pushctl send/broadcast again, on libcurl >= 8.5 (the runs above use the
	@# system's, Debian 12: 7.88): CURL8_DIR, else .build/curl8, else Debian's bookworm-backports libcurl4 fetched
	@# there privately; used through LD_LIBRARY_PATH, never installed. Fails when it cannot get one.
	SWIFT=$(SWIFT) bash Tests/curl8/curl8.sh
	bash Tests/multihost/multihost.sh .build/debug/pushctl
	@# Every target in release mode, linked as `make release` links pushctl (one build, not a second one with other
	@# flags); then that binary (static Swift runtime, its own linker flags) sends and broadcasts through the simulator.
	$(SWIFT) build $(RELEASE_FLAGS)
	bash Tests/release/smoke.sh $(RELEASE)
	@# README as tests: the runnable blocks of README.md and of every docs/*.md page, each file in a fresh checkout
	@# against its own `make run` (this release binary), with a private PostgreSQL, tinyproxy and a webhook
	@# receiver; each block's documented status and output are checked.
	bash Tests/readme/readme.sh $(RELEASE)
	@# The systemd units (systemd-analyze security, each <= 3.0), then the Debian package made from the release
	@# binary just built (no second build): lintian, dpkg -i, the installed pushctl serving as the pushprovider
	@# user, dpkg --remove, dpkg --purge; the machine is left as it was found. Then the tarball (make dist).
	bash Tests/package/units.sh
	bash Tests/package/deb.sh $(RELEASE)
	bash Tests/package/dist.sh $(RELEASE)
	@# Last: no process a step of this run started may still be running (PUSHPROVIDER_TEST_RUN marks them).
	bash Tests/leftovers/processes.sh

## certs: development PKI in Certificates/dev (CA, simulator server certificate, client .p12) if missing, and the
## development VAPID key (Web Push) and FCM service account (fcm-service-account.json) beside it.
MAKE_DEV_CERTS = if [ ! -f Certificates/dev/client.p12 ]; then $(RELEASE) cert make-dev --out Certificates/dev --topic com.example.app; fi; \
	if [ ! -f Certificates/dev/vapid.pem ]; then $(RELEASE) webpush key new --out Certificates/dev/vapid.pem >/dev/null; fi; \
	if [ ! -f Certificates/dev/fcm-service-account.json ]; then $(RELEASE) fcm account new --out Certificates/dev/fcm-service-account.json >/dev/null; fi
certs: release
	@$(MAKE_DEV_CERTS)

## cli-reference: docs/cli.md and the man page packaging/pushctl.1, generated from pushctl's argument parser
## (`--experimental-dump-help`) and the hand-written packaging/pushctl-manual.md; commit both. make test fails
## (Tests/cli/reference.sh) when they are stale.
cli-reference:
	$(SWIFT) build --product pushctl
	python3 packaging/cli-reference.py .build/debug/pushctl

## docs: the DocC documentation of PushProviderClient, .build/docs/PushProviderClient.doccarchive, from its catalog
## (Sources/PushProviderClient/PushProviderClient.docc) and the module's symbols, with the toolchain's docc.
docs:
	$(SWIFT) build --target PushProviderClient
	bash Tests/docc/docc.sh .build/debug

## run: the whole product on this machine: registry + HTTP API + built-in APNs simulator (one release build: the
## certificates are made here, not by a second make that would build again).
run: release
	@if $(RELEASE) --help | grep -q ' serve '; then \
	  { $(MAKE_DEV_CERTS); } && $(PATH_HINT) && $(RELEASE) serve --config $(CONFIG); \
	else \
	  $(RELEASE) --help; \
	fi

## The README's examples run a bare `pushctl`: say how to get it on PATH unless `pushctl` already is this build.
PATH_HINT = if [ "$$(command -v pushctl 2>/dev/null | xargs -r readlink -f)" != "$$(readlink -f $(RELEASE))" ]; then \
	  echo "pushctl is not on your PATH: run 'make install-local' (a symlink in ~/.local/bin), or in this shell:"; \
	  echo "  export PATH=\"$(CURDIR)/.build/release:\$$PATH\""; echo; fi

## install-local: symlinks the release pushctl into ~/.local/bin (no root needed, nothing outside your home, and
## not shadowing a packaged /usr/bin/pushctl for other users; a symlink, so each `make release` is picked up).
## Debian's ~/.profile puts ~/.local/bin on PATH at the next login once it exists; until then, the line printed.
install-local: release
	@mkdir -p $(HOME)/.local/bin && ln -sfn $(CURDIR)/$(RELEASE) $(HOME)/.local/bin/pushctl
	@echo "linked $(HOME)/.local/bin/pushctl -> $(CURDIR)/$(RELEASE)"
	@case ":$$PATH:" in *":$(HOME)/.local/bin:"*) ;; *) echo "~/.local/bin is not on PATH in this shell: export PATH=\"$(HOME)/.local/bin:\$$PATH\"";; esac

## deb: the Debian package, .build/packages/pushprovider_<version>_<arch>.deb, from the release binary (see README
## "Installing on a server"). dist: that package and a tarball for other distributions.
deb: release
	bash packaging/build.sh deb $(RELEASE) $(PACKAGES)
dist: deb
	bash packaging/build.sh dist $(RELEASE) $(PACKAGES)

## bench-deps: load generators, the third-party APNs client, a C compiler (bench/curl_ceiling.c) and valgrind
## (bench/instructions.sh) used by the benchmarks.
bench-deps: deps
	@command -v h2load >/dev/null 2>&1 && command -v wrk >/dev/null 2>&1 && command -v sqlite3 >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-client wrk sqlite3 >/dev/null; }
	@python3 -c 'import aioapns' 2>/dev/null || python3 -m pip install -q aioapns
	@[ -x /usr/bin/time ] || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }
	@command -v cc >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null; }
	@command -v valgrind >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }

## bench: release-build benchmarks; each bench/bench_*.sh replaces its section of bench/RESULTS.md.
bench: release bench-deps
	bash bench/run.sh

clean:
	rm -rf .build
