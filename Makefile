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
# Network namespaces (the multihost test, AddressCheckNamespaceTests): ip and unshare.
NSPKGS := iproute2 util-linux
# Containers (Tests/image/image.sh runs `make image`'s image under podman; runc, as crun fails in this sandbox).
CONTAINERPKGS := podman runc
# The commit `pushctl --version` names: Package.swift reads it from the environment (SwiftPM caches the manifest
# by its environment, so a new commit recompiles one C file and relinks). "unknown" outside git.
export PUSHPROVIDER_COMMIT := $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null || c=$$c-dirty; } && echo $$c)
PACKAGES := .build/packages

.PHONY: deps deps-build deps-test build build-tests release test run install-local certs deb dist image bench bench-deps clean cli-reference docs referees

## deps: the system libraries (libcurl, OpenSSL, SQLite), PostgreSQL, tinyproxy, chromium and podman (for the tests);
## installs them with apt-get when run as root. deps-build installs only what the compile needs (make test installs
## the rest, deps-test, while it compiles).
deps: deps-build deps-test
deps-build:
	@$(call APT,libcurl openssl sqlite3 pkg-config,$(SYSLIBS),pkg-config --exists libcurl openssl sqlite3 && command -v openssl)
deps-test:
	@$(call APT,tzdata postgresql tinyproxy chromium iproute2 podman and the packaging tools,$(TZPKGS) $(PGPKGS) $(PROXYPKGS) $(CONSOLEPKGS) $(PKGPKGS) $(NSPKGS) $(CONTAINERPKGS),\
	  command -v ip && command -v unshare && command -v podman && command -v runc && ls /usr/lib/postgresql/*/bin/initdb && command -v psql && command -v tinyproxy && [ -x /usr/bin/chromium ] \
	  && [ -x /usr/bin/chromedriver ] && command -v dpkg-shlibdeps && command -v lintian && command -v systemd-analyze \
	  && command -v adduser && [ -f /usr/share/zoneinfo/tzdata.zi ])
# $(call APT,WHAT,PACKAGES,CHECK): nothing when CHECK passes; else apt-get install PACKAGES as root, or the command.
APT = if { $(3); } >/dev/null 2>&1; then echo "deps: $(1) found"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "deps: installing $(2)"; \
	  { [ -n "$$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -60 2>/dev/null | head -1)" ] || apt-get update -qq; } \
	  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	else \
	  echo "deps: missing system packages; install them with:"; \
	  echo "  sudo apt-get install -y $(2)"; \
	  exit 1; \
	fi

## referees: the field's reference implementations from PyPI, pinned (Tests/referees/install.sh), which the Swift
## tests run as subprocesses: http_ece decrypts what our Web Push sender encrypts, py_vapid and PyJWT verify what it
## signs (PushSenderTests' WebPushRefereeTests), pywebpush sends to the simulator's Web Push service
## (SimulatorWebPushRefereeTests), PyJWT verifies our FCM service-account assertion (FCMServiceAccountTests).
## Nothing to do when they are installed; fails when PyPI is unreachable, and those tests fail, never skip, without them.
referees:
	bash Tests/referees/install.sh

## build: debug build of everything, tests included (a developer's quick loop: `swift test --filter Suite` after it).
build: deps
	$(SWIFT) build --build-tests

## build-tests: the one compile `make test` makes: every module and the tests, optimised, with testing enabled on
## this package's own modules, and pushctl linked from those objects as `make release` links it (docs/testing.md,
## "One compile"). The tests then run with `swift test -c release --skip-build`.
build-tests: deps
	$(TESTABLE) $(SWIFT) build $(RELEASE_FLAGS) --build-tests
	python3 packaging/link-static.py .build/release

## release: optimised build of pushctl (used by run and bench). The Swift runtime and Foundation are linked
## statically: a process starts without resolving a dozen Swift libraries and maps only the pages it uses
## (cold `pushctl send` and peak RSS; see bench/RESULTS.md). libcurl, OpenSSL and SQLite stay the system's.
## --no-export-dynamic undoes the static stdlib's -export-dynamic: pushctl loads no plugins, and 48,000 exported
## Swift symbols cost every start a 4 MB symbol table and the runtime's dladdr a scan of it.
## Both are link flags that packaging/link-static.py adds to SwiftPM's own link of pushctl: `--static-swift-stdlib`
## would also compile every module against a resource directory that has no Testing module, and so force a second
## compile for the tests. PUSHPROVIDER_TESTABLE=1 (Package.swift) compiles this package's modules with
## -enable-testing, in this build as in the tests', so `make release` and `make test` share one compile; what that
## costs the product is measured in docs/testing.md ("One compile").
RELEASE_FLAGS := -c release
TESTABLE := PUSHPROVIDER_TESTABLE=1
release: deps
	$(TESTABLE) $(SWIFT) build $(RELEASE_FLAGS) --product pushctl
	python3 packaging/link-static.py .build/release
## The release binary as a file: `make run` builds it when a source or the manifest is newer, and otherwise runs it
## as it is (relinking a binary that other processes may be running, as the README test's `make run` did while the
## multi-host test ran beside it, is not a step to take for nothing).
$(RELEASE): $(shell find Sources Package.swift -type f 2>/dev/null)
	@$(MAKE) --no-print-directory release

## test: everything, stage by stage (Tests/stages.sh): what needs no build (docs lint, every shell and Python script
## parsing), the system packages, the one compile (build-tests, with the PyPI referees, schemathesis, selenium and
## libcurl 8 fetched beside it), the CLI reference, the noasync fixtures, DocC and an app's package using only the
## client library, the unit suites in four test processes, the fault and timing suites one test at a time, the API
## fuzzed against its OpenAPI description (schemathesis), the console in chromium, the sender on libcurl 8, several
## hosts in network namespaces, the release binary's smoke test, README and docs/*.md as tests, the systemd units,
## the Debian package and the tarball made from the same binary, and last that no process of the run is left.
## It stops at the first failing stage and prints every stage's wall and CPU time at its end, also when it failed
## (.build/stages.txt keeps the table). Budget: 35 minutes on a quiet 2-core machine (docs/testing.md).
## STAGES="unit-server serial" make test runs only the named stages (after the build, unless BUILD_SKIP=1).
test:
	SWIFT=$(SWIFT) bash Tests/stages.sh

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

## run: the whole product on this machine: registry + HTTP API + built-in simulator (APNs, Web Push, FCM) (one release build: the
## certificates are made here, not by a second make that would build again).
run: $(RELEASE)
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

## image: the container image from the release binary (the one the .deb carries) and this machine's libraries,
## offline and without a container tool (packaging/image.sh): .build/image/pushprovider-<version>.oci.tar (an OCI
## archive) and .docker.tar (docker save's format), one image, localhost/pushprovider:<version>, for
## `podman load -i` or `docker load -i` (docs/operating.md, "Containers and Kubernetes").
image: release
	bash packaging/image.sh $(RELEASE) .build/image

## bench-deps: load generators, the third-party APNs client, a C compiler (bench/curl_ceiling.c), valgrind
## (bench/instructions.sh) and strace (bench/bench_slow_server.sh) used by the benchmarks.
bench-deps: deps
	@command -v h2load >/dev/null 2>&1 && command -v wrk >/dev/null 2>&1 && command -v sqlite3 >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-client wrk sqlite3 >/dev/null; }
	@python3 -c 'import aioapns' 2>/dev/null || python3 -m pip install -q aioapns
	@[ -x /usr/bin/time ] || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }
	@command -v cc >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null; }
	@command -v valgrind >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }
	@command -v strace >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null; }

## bench: release-build benchmarks; each bench/bench_*.sh replaces its section of bench/RESULTS.md.
bench: release bench-deps
	bash bench/run.sh

clean:
	rm -rf .build
