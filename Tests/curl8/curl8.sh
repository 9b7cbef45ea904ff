#!/usr/bin/env bash
# The sender's transport suites on libcurl >= 8.5, next to `make test`'s run on the system's libcurl (Debian 12: 7.88).
# Run from the package root after the build (make test does both); builds nothing.
#   bash Tests/curl8/curl8.sh [BUILD_DIR]   the build's directory: .build/release (make test's one compile), default
#   bash Tests/curl8/curl8.sh --fetch-only  only gets libcurl 8 (make test does that while it compiles)
#
# libcurl 8 (Tests/curl8/lib.sh): $CURL8_DIR if set, else .build/curl8/usr/lib/ARCH, else, as root with apt-get,
# Debian's bookworm-backports libcurl4 fetched and unpacked there with a private apt configuration. The system's
# libcurl is never touched: the tests run with LD_LIBRARY_PATH pointing at that directory. No libcurl >= 8.5, a
# binary that would not load it, or any failing test: exit 1 with one line saying why. Never a silent skip.
#
# Suites: PushSenderTests' SenderTests, SenderOutageTests, SenderCredentialTests and pushctlTests' SendCommandTests,
# BroadcastCommandTests and OutboundProxyTests (CONNECT tunnels, proxy refusals) (they run the pushctl binary, which inherits LD_LIBRARY_PATH: CLI.makeProcess passes the
# test's environment on); then SenderMemoryTests alone (it measures process-wide RSS), with
# PUSHSENDER_MEMORY_SENDS (default 20,000). While they run, every process under `swift test` is sampled: each one
# that maps a libcurl must map this one, and the test bundle must be seen mapping it.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SWIFT=${SWIFT:-swift}
START=$SECONDS
die() { echo "curl8: FAILED: $*" >&2; exit 1; }
[ -f Package.swift ] || die "run it from the package root (no Package.swift in $PWD)"
FETCH_ONLY=
BUILD_DIR=$PWD/.build/release
case "${1:-}" in
  --fetch-only) FETCH_ONLY=1 ;;
  "") ;;
  *) BUILD_DIR=$(cd "$1" && pwd) ;;
esac
# The configuration `swift test` runs (debug or release), read off the build directory's name.
CONFIGURATION=$(basename "$BUILD_DIR")
XCTEST=$BUILD_DIR/PushProviderPackageTests.xctest
PUSHCTL=$BUILD_DIR/pushctl
if [ -z "$FETCH_ONLY" ]; then
  for f in "$XCTEST" "$PUSHCTL"; do
    [ -x "$f" ] || die "$f is missing: build first (make build-tests, or make test)"
  done
fi
WORK=$(mktemp -d)
TEST_PID=
TAIL_PID=
cleanup() {
  [ -z "$TEST_PID" ] || kill "$TEST_PID" 2>/dev/null || true
  [ -z "$TAIL_PID" ] || kill "$TAIL_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

. "$HERE/lib.sh"
rc=0
curl8_find "$WORK" || rc=$?
[ "$rc" -eq 0 ] || die "no libcurl >= $CURL8_MIN: $CURL8_WHY"
if [ -n "$FETCH_ONLY" ]; then echo "curl8: libcurl 8 at $CURL8"; exit 0; fi
curl8_check "$WORK" || die "$CURL8_WHY"
curl_loaded "" "$WORK" || die "the system's libcurl: $CURL8_WHY"
echo "curl8: system libcurl $CURL_LOADED_VERSION ($CURL_LOADED_PATH); testing with libcurl $CURL8_VERSION from $CURL8"
for bin in "$PUSHCTL" "$XCTEST"; do
  curl8_resolves "$bin" || die "$CURL8_WHY"
  echo "curl8: LD_LIBRARY_PATH=$CURL8 ldd ${bin#"$PWD"/} | grep libcurl: $(LD_LIBRARY_PATH=$CURL8 ldd "$bin" | grep libcurl | xargs)"
done
# pushctl --version reports the libcurl it runs with, not the one it was built against.
REPORTED=$(LD_LIBRARY_PATH="$CURL8" "$PUSHCTL" --version | sed -n 's/^libcurl \([^ ]*\).*/\1/p')
[ "$REPORTED" = "$CURL8_VERSION" ] || die "pushctl --version says libcurl '$REPORTED' under LD_LIBRARY_PATH=$CURL8 ($CURL8_VERSION)"
echo "curl8: pushctl --version under it: libcurl $REPORTED"

# The suites, as Swift Testing identifies tests (Module.Suite/test()). A renamed suite fails here, not silently.
SUITES="PushSenderTests.SenderTests PushSenderTests.SenderOutageTests PushSenderTests.SenderCredentialTests
pushctlTests.SendCommandTests pushctlTests.BroadcastCommandTests pushctlTests.OutboundProxyTests PushSenderTests.ChannelClientTests"
MEMORY_SUITE=PushSenderTests.SenderMemoryTests
regex() { local s out=; for s in "$@"; do out="${out:+$out|}${s//./\\.}/"; done; echo "^($out)"; }
FILTER=$(regex $SUITES)
MEMORY_FILTER=$(regex $MEMORY_SUITE)
"$SWIFT" test list -c "$CONFIGURATION" --skip-build > "$WORK/list" 2> "$WORK/list.err" || die "swift test list: $(tail -n 1 "$WORK/list.err")"
for s in $SUITES $MEMORY_SUITE; do
  grep -q "^${s//./\\.}/" "$WORK/list" || die "no tests of $s in 'swift test list' (renamed?)"
done
EXPECTED=$(grep -cE "$FILTER" "$WORK/list")
EXPECTED_MEMORY=$(grep -cE "$MEMORY_FILTER" "$WORK/list")

# descendants PID: every process below PID.
descendants() {
  ps -e -o pid= -o ppid= | awk -v root="$1" '{ kids[$2] = kids[$2] " " $1 }
    END { q = root; while (q != "") { n = split(q, a, " "); q = ""
            for (i = 1; i <= n; i++) { m = split(kids[a[i]], k, " "); for (j = 1; j <= m; j++) { print k[j]; q = q " " k[j] } } } }'
}

# run NAME FILTER [VAR=value...]: `swift test --skip-build --filter FILTER` under LD_LIBRARY_PATH=CURL8, its output
# shown and kept in NAME.log, the libcurl each process under it maps ("program file" lines) in NAME.maps.
run() {
  local name=$1 filter=$2 p lib exe
  shift 2
  : > "$WORK/$name.log"
  env "$@" LD_LIBRARY_PATH="$CURL8" "$SWIFT" test -c "$CONFIGURATION" --skip-build --filter "$filter" > "$WORK/$name.log" 2>&1 &
  TEST_PID=$!
  tail -n +1 -f --pid="$TEST_PID" "$WORK/$name.log" &
  TAIL_PID=$!
  while kill -0 "$TEST_PID" 2>/dev/null; do
    for p in $(descendants "$TEST_PID"); do
      lib=$(grep -m 1 -o '/[^ ]*/libcurl\.so[^ ]*' "/proc/$p/maps" 2>/dev/null) || continue
      exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
      echo "$(basename "$exe") $(readlink -f "$lib")"
    done
    sleep 0.5
  done | sort -u > "$WORK/$name.maps"
  rc=0
  wait "$TEST_PID" || rc=$?
  TEST_PID=
  wait "$TAIL_PID" || true
  TAIL_PID=
  return "$rc"
}

# check NAME EXPECTED: every test of the run passed, as many as selected, and its processes loaded CURL8's libcurl.
PASSED=0
check() {
  local name=$1 expected=$2 rc=$3 passed failed want wrong
  # Swift Testing's lines: "✔ Test name() passed after …", "✘ Test name() failed after …" ("Test run with" ends it).
  passed=$(grep -E '^[^ ]+ Test [^ ].* passed after' "$WORK/$name.log" | grep -vc ' Test run with ' || true)
  failed=$(grep -E '^[^ ]+ Test [^ ].* failed after' "$WORK/$name.log" | grep -v ' Test run with ' || true)
  if [ -n "$failed" ] || [ "$rc" -ne 0 ]; then
    echo "curl8: failures with libcurl $CURL8_VERSION:" >&2
    echo "${failed:-(swift test exited $rc)}" >&2
    die "$name: $(echo "$failed" | grep -c . || true) failed, $passed passed with libcurl $CURL8_VERSION (swift test exit $rc)"
  fi
  [ "$passed" -eq "$expected" ] || die "$name: $passed passed but $expected tests were selected (skipped?)"
  want=$(readlink -f "$CURL8/libcurl.so.4")
  echo "curl8: $name: processes seen mapping a libcurl: $(tr '\n' ';' < "$WORK/$name.maps" | sed 's/;$//; s/;/; /g')"
  wrong=$(awk -v w="$want" '$2 != w' "$WORK/$name.maps")
  [ -z "$wrong" ] || die "$name: a process loaded another libcurl: $(echo "$wrong" | tr '\n' ' ')"
  grep -q "^$(basename "$XCTEST") " "$WORK/$name.maps" || die "$name: the test bundle was never seen mapping $want"
  PASSED=$((PASSED + passed))
}

echo "curl8: $EXPECTED tests of $(echo $SUITES | wc -w) suites on libcurl $CURL8_VERSION"
rc=0; run transport "$FILTER" || rc=$?
check transport "$EXPECTED" "$rc"
SENDS=${PUSHSENDER_MEMORY_SENDS:-20000}
echo "curl8: $MEMORY_SUITE alone, PUSHSENDER_MEMORY_SENDS=$SENDS, on libcurl $CURL8_VERSION"
rc=0; run memory "$MEMORY_FILTER" PUSHSENDER_MEMORY_SENDS="$SENDS" || rc=$?
check memory "$EXPECTED_MEMORY" "$rc"
echo "curl8: $PASSED passed with libcurl $CURL8_VERSION ($((SECONDS - START)) s)"
