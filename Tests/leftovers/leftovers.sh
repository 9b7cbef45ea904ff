#!/usr/bin/env bash
# Runs a test command (`swift test …`) with TMPDIR set to a private directory, then fails if the tests left
# pushctl-test-* directories in it (the temporary directories made by TestSupport's TemporaryDirectories: they are removed when the test
# process exits). Anything else left there is listed as a warning. The command's own status wins when it failed.
#   bash Tests/leftovers/leftovers.sh swift test --skip-build --filter pushctlTests
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
T=$(mktemp -d /tmp/pushprovider-tests.XXXXXX)
# Sticky and world-writable like /tmp: the tests' PostgreSQL runs as the postgres user inside it.
chmod 1777 "$T"
TMPDIR=$T "$@"
status=$?
left=$(find "$T" -mindepth 1 -maxdepth 1 -name 'pushctl-test-*' | sort)
# SwiftPM's own lock files and scratch directories are not the tests'.
other=$(find "$T" -mindepth 1 -maxdepth 1 ! -name 'pushctl-test-*' ! -name '*.lock' ! -name 'TemporaryDirectory.*' | sort)
rm -rf "$T"
if [ -n "$other" ]; then
  echo "leftovers: warning: other files the tests left in TMPDIR:" >&2
  echo "$other" | sed 's/^/  /' >&2
fi
if [ "$status" -ne 0 ]; then exit "$status"; fi
if [ -n "$left" ]; then
  echo "leftovers: FAIL: the tests left $(echo "$left" | wc -l) pushctl-test-* directories in TMPDIR:" >&2
  echo "$left" | head -5 | sed 's/^/  /' >&2
  exit 1
fi
echo "leftovers: no pushctl-test-* directories left"
