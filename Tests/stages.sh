#!/usr/bin/env bash
# `make test`, stage by stage: runs every check in the order that fails fastest (what needs no build first, then
# the one compile, then the quick checks and unit suites, then the long suites), times each stage, and prints the
# table of stages — wall time, CPU time of the stage's processes, and how it ended — at its end, also when a stage
# failed (the run stops at the first failure). The table is also written to .build/stages.txt.
#
#   bash Tests/stages.sh                 the whole run (what `make test` and CI do)
#   STAGES="lint build unit" bash Tests/stages.sh      only the named stages, in the run's order (a developer's loop;
#                                        the build is not skipped unless BUILD_SKIP=1 and the build is there)
#
# One compile (docs/testing.md, "One compile"): `swift build -c release --build-tests` builds every module once,
# optimised and with testing enabled, and the test bundle runs from it; `pushctl` is then linked from the same
# objects with the static Swift runtime (packaging/link-static.sh), and that binary — the one `make release` makes —
# is the one every test, the README run, the smoke test and the package use. Stages that wait more than they compute
# run beside each other (docs/testing.md says which and why).
#
# Every process a stage starts inherits PUSHPROVIDER_TEST_RUN: the last stage fails if one still runs.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SWIFT=${SWIFT:-swift}
export SWIFT
: "${PUSHPROVIDER_TEST_RUN:=$(date +%s%N)}"
export PUSHPROVIDER_TEST_RUN
BUILD=.build/release
PUSHCTL=$BUILD/pushctl
mkdir -p .build
LOGS=$(mktemp -d /tmp/pushprovider-stages.XXXXXX)
TABLE=$LOGS/table
: > "$TABLE"
RUN_START=$(date +%s.%N)
ONLY=" ${STAGES:-} "

fmt() { # seconds (float) -> "12m03s" / "41.2s"
  python3 -c 'import sys; s=float(sys.argv[1]); print(f"{int(s//60)}m{s%60:04.1f}s" if s >= 60 else f"{s:.1f}s")' "$1"
}
cpu_of() { # a `times` output file -> children's user+sys seconds
  python3 - "$1" <<'PY' 2>/dev/null || echo 0
import re, sys
lines = open(sys.argv[1]).read().split("\n")
total = 0.0
for line in lines[:2]:
    for m, s in re.findall(r"(\d+)m([\d.]+)s", line):
        total += int(m) * 60 + float(s)
print(f"{total:.1f}")
PY
}
record() { # NAME START END STATUS CPU (one line each, fields split by |: a name may hold a space)
  printf '%s|%s|%s|%s\n' "$1" "$(python3 -c "print(f'{$3 - $2:.1f}')")" "$5" "$4" >> "$TABLE"
}
print_table() {
  local end total
  end=$(date +%s.%N)
  total=$(python3 -c "print(f'{$end - $RUN_START:.1f}')")
  {
    echo "make test: stage times (wall, CPU of the stage's processes; a stage marked (beside) ran beside the ones after it, its wall until it was joined)"
    while IFS='|' read -r name wall cpu status; do
      printf '  %-34s %9s  cpu %9s  %s\n' "$name" "$(fmt "$wall")" "$(fmt "$cpu")" "$status"
    done < "$TABLE"
    printf '  %-34s %9s\n' "total" "$(fmt "$total")"
  } | tee .build/stages.txt
}
declare -A BG_PID BG_START
on_exit() {
  local pid
  # Stages still running beside: a failed run stops them (each its own process group).
  for pid in "${BG_PID[@]}"; do kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
  print_table
  rm -rf "$LOGS"
}
trap on_exit EXIT

wanted() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }

# stage NAME COMMAND...: runs COMMAND in the foreground, timed; the run ends when it fails.
stage() {
  local name=$1 start status
  shift
  wanted "$name" || return 0
  echo "==> stage $name: $*"
  start=$(date +%s.%N)
  ( "$@"; rc=$?; times > "$LOGS/$name.times"; exit $rc )
  status=$?
  ended "$name" "$name" "$start" "$status"
}

# ended NAME LABEL START STATUS: records the stage's line of the table; a failed stage ends the run.
ended() {
  local cpu
  cpu=$(cpu_of "$LOGS/$1.times")
  if [ "$4" -eq 0 ]; then
    record "$2" "$3" "$(date +%s.%N)" ok "$cpu"
  else
    record "$2" "$3" "$(date +%s.%N)" "FAILED (exit $4)" "$cpu"
    echo "==> stage $1 FAILED (exit $4)" >&2
    exit "$4"
  fi
}

# beside NAME COMMAND...: starts COMMAND in the background (its own process group), its output kept until `joined`.
beside() {
  local name=$1
  shift
  wanted "$name" || return 0
  echo "==> stage $name (beside the next stages): $*"
  BG_START[$name]=$(date +%s.%N)
  set -m
  ( "$@"; rc=$?; times > "$LOGS/$name.times"; exit $rc ) > "$LOGS/$name.log" 2>&1 &
  BG_PID[$name]=$!
  set +m
}
# joined NAME: waits for a `beside` stage, prints its output, and ends the run when it failed.
joined() {
  local name=$1 status=0
  [ -n "${BG_PID[$name]:-}" ] || return 0
  wait "${BG_PID[$name]}" || status=$?
  echo "==> stage $name (ran beside): output"
  cat "$LOGS/$name.log"
  unset "BG_PID[$name]"
  ended "$name" "$name (beside)" "${BG_START[$name]}" "$status"
}

# ---- 1. What needs no build: a mistake here ends the run in seconds.
lint() {
  # Every fenced block of README.md and docs/*.md carries a readme.sh marker and every link resolves.
  python3 Tests/readme/readme.py --lint README.md docs/*.md || return 1
  # Every shell script parses, every Python script compiles.
  local f bad=0
  while IFS= read -r f; do bash -n "$f" || { echo "lint: $f does not parse" >&2; bad=1; }; done \
    < <(git ls-files '*.sh' 2>/dev/null || find . -name '*.sh' -not -path './.build*')
  python3 - $(git ls-files '*.py' 2>/dev/null) <<'PY' || bad=1
import sys
for path in sys.argv[1:]:
    compile(open(path, encoding="utf-8").read(), path, "exec")
print(f"lint: {len(sys.argv) - 1} Python files compile")
PY
  return "$bad"
}
stage lint lint
# What the compile needs (libcurl, OpenSSL, SQLite headers); the rest of the system packages come beside it.
stage deps-build make --no-print-directory deps-build

# ---- 2. The one compile, with what mostly waits on the network beside it: the system packages the tests need, the
# PyPI referees, schemathesis, selenium and libcurl 8 are installed while the compiler has the cores.
prefetch() {
  make --no-print-directory deps-test || return 1
  bash Tests/referees/install.sh || return 1
  bash Tests/schemathesis/schemathesis.sh --install-only || return 1
  bash Tests/console/console.sh --install-only || return 1
  bash Tests/curl8/curl8.sh --fetch-only || return 1
}
beside prefetch prefetch
# An app's package using only PushProviderClient builds the client's module and nothing of the server: a build of
# its own (in a temporary directory, debug, the client only), so it needs nothing of ours and shares the cores.
beside consumer bash Tests/client/consumer.sh
# deploy/kubernetes rendered and validated offline against the Kubernetes API schemas, and its security settings
# checked (a few seconds of CPU, the rest waits on loading schemas; pip once).
beside manifests bash Tests/kubernetes/manifests.sh
if [ "${BUILD_SKIP:-}" = 1 ] && [ -x "$PUSHCTL" ]; then
  echo "==> stage build: skipped (BUILD_SKIP=1)"
else
  stage build make --no-print-directory build-tests
fi
joined prefetch
joined consumer
joined manifests

# ---- 3. Quick checks on the build, then the unit suites.
# The blocking store API is noasync: fixtures that call it from async code must fail to compile.
stage noasync bash Tests/noasync/noasync.sh "$BUILD"
# docs/cli.md and the man page are generated from the argument parser: fails when they are stale.
stage cli-reference bash Tests/cli/reference.sh "$PUSHCTL"
# DocC for PushProviderClient from the module just built, warnings as errors.
stage docc bash Tests/docc/docc.sh "$BUILD"
# The parallel suites, in four test processes under a private TMPDIR (leftovers.sh fails when they leave their
# directories behind); the store's synchronous suites apart from the CLI and simulator suites (docs/testing.md).
T() { bash Tests/leftovers/leftovers.sh "$SWIFT" test -c release --skip-build "$@"; }
SERIAL="FaultTests|BroadcastTimingTests"
stage unit-server T --filter "PushServerTests" --skip "$SERIAL"
stage unit-sender-client T --filter "PushProviderClientTests|PushSenderTests" --skip "$SERIAL"
stage unit-store-core T --filter "PushStoreTests|PushCoreTests" --skip "$SERIAL"
stage unit-rest T --skip "PushServerTests|PushProviderClientTests|PushSenderTests|PushStoreTests|PushCoreTests|$SERIAL"
# The fault suites and the timed broadcast tests, one test at a time; beside them the HTTP API against
# docs/openapi.yaml (schemathesis: a fixed seed and a changing one, in two lanes at once). The serial tests mostly
# wait on their faults (about 2 of their 7 minutes on a core, 2026-12-01) while schemathesis computes: together they
# fit the two cores, and both must pass on a busy box anyway.
beside schemathesis bash Tests/schemathesis/schemathesis.sh "$PUSHCTL"
stage serial T --filter "$SERIAL" --no-parallel
joined schemathesis

# ---- 4. The long suites against the built binary.
# The web console in headless chromium over WebDriver.
stage console bash Tests/console/console.sh "$PUSHCTL"
# The sender's transport suites and pushctl send/broadcast again, on libcurl >= 8.5.
stage curl8 bash Tests/curl8/curl8.sh "$BUILD"
# The independent strict HTTP/2 server (Python's h2) at a stream limit of 1: `pushctl broadcast`, 10,000 to it.
stage h2-referee bash Tests/referees/h2_referee.sh "$PUSHCTL"
# Several hosts in network namespaces: a database host, an APNs host, three workers, one killed, one cut off; it
# waits on leases, a 30 s stop deadline and a 50 ms simulator, so the README run goes beside it.
beside multihost bash Tests/multihost/multihost.sh "$PUSHCTL"
# The container image from the same binary, run under podman (serve, a worker on PostgreSQL in another container):
# it waits on podman and on its containers' starts and stops, so it goes beside too.
beside image bash Tests/image/image.sh "$PUSHCTL"
# The release binary does its main jobs (help, simulator, import, send, broadcast).
stage smoke bash Tests/release/smoke.sh "$PUSHCTL"
# README and docs/*.md as tests, each page in a fresh checkout against its own `make run` (which runs the binary as
# it is: `make run` builds only when a source is newer).
stage readme bash Tests/readme/readme.sh "$PUSHCTL"
joined multihost
joined image
# The systemd units, the Debian package made from the same binary, the tarball.
stage units bash Tests/package/units.sh
stage deb bash Tests/package/deb.sh "$PUSHCTL"
stage dist bash Tests/package/dist.sh "$PUSHCTL"
# Last: no process a stage of this run started may still be running.
stage leftovers bash Tests/leftovers/processes.sh
