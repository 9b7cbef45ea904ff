#!/usr/bin/env bash
# The CLI reference cannot drift from the parser: regenerates docs/cli.md and packaging/pushctl.1 from
# `pushctl --experimental-dump-help` and packaging/pushctl-manual.md (packaging/cli-reference.py) into a
# temporary directory and fails when the committed files differ (then: `make cli-reference`, and commit). It also
# checks that the reference has a section for every subcommand `pushctl --help` lists and that man(1) reads the
# page without a warning (what lintian's manpage check runs). make test runs it after the debug build:
#   bash Tests/cli/reference.sh [.build/debug/pushctl]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$ROOT/.build/debug/pushctl}
fail() { echo "cli-reference: FAIL: $*" >&2; exit 1; }
[ -x "$BIN" ] || fail "no pushctl at $BIN (swift build first)"
OUT=$(mktemp -d /tmp/pushprovider-cli-reference.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
python3 "$ROOT/packaging/cli-reference.py" "$BIN" "$OUT" > /dev/null
for f in docs/cli.md packaging/pushctl.1; do
  diff -u "$ROOT/$f" "$OUT/$f" > "$OUT/diff" || { head -40 "$OUT/diff"; fail "$f is stale: run \`make cli-reference\` and commit it"; }
done
SUBCOMMANDS=$("$BIN" --help | sed -n '/^SUBCOMMANDS:/,/^$/p' | awk '/^  [a-z]/ { print $1 }')
[ -n "$SUBCOMMANDS" ] || fail "pushctl --help lists no subcommands"
n=0
for sub in $SUBCOMMANDS; do
  [ "$sub" = help ] && continue
  grep -qx "### pushctl $sub" "$ROOT/docs/cli.md" || fail "docs/cli.md has no section for pushctl $sub"
  grep -qx "\.B $sub" "$ROOT/packaging/pushctl.1" || fail "the man page does not list pushctl $sub"
  n=$((n + 1))
done
if command -v man > /dev/null; then
  WARN=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$ROOT/packaging/pushctl.1" 2>&1 > /dev/null)
  [ -z "$WARN" ] || { echo "$WARN" | head -20; fail "man --warnings complains about packaging/pushctl.1"; }
else
  fail "man is not installed (apt-get install man-db): the page's roff cannot be checked"
fi
echo "cli-reference: docs/cli.md and packaging/pushctl.1 match the parser ($n subcommands); man reads the page cleanly"
echo "cli-reference: PASS"
