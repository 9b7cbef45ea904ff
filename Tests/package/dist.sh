#!/usr/bin/env bash
# The tarball for other distributions (make dist), from a release pushctl: it holds the binary, the packaged
# configuration, the units (running /usr/local/bin/pushctl), the docs and VERSION; its binary is the one given
# (same --version); and the "Other distributions" section of docs/operating.md names every shared library the binary needs, so
# the list cannot fall behind the link line. make test runs it. Usage: Tests/package/dist.sh [path/to/pushctl]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PUSHCTL=${1:-$ROOT/.build/release/pushctl}
fail() { echo "dist: FAIL: $*" >&2; exit 1; }
[ -x "$PUSHCTL" ] || fail "no pushctl at $PUSHCTL (make release first)"
WORK=$(mktemp -d /tmp/pushprovider-dist.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
TARBALL=$(bash "$ROOT/packaging/build.sh" dist "$PUSHCTL" "$WORK/out")
VERSION=$("$PUSHCTL" --version | sed -n '1s/^pushctl //p')
NAME="pushprovider-$VERSION-linux-$(uname -m)"
[ "$(basename "$TARBALL")" = "$NAME.tar.gz" ] || fail "named $(basename "$TARBALL"), not $NAME.tar.gz"
tar -xzf "$TARBALL" -C "$WORK"
D="$WORK/$NAME"
for f in pushctl pushctl.json README.md docs/operating.md docs/cli.md openapi.yaml crontab.example pushctl.1 VERSION systemd/pushprovider.service \
  systemd/pushprovider-worker@.service systemd/pushprovider-maintenance.service systemd/pushprovider-maintenance.timer; do
  [ -e "$D/$f" ] || fail "$f missing from the tarball"
done
[ "$("$D/pushctl" --version)" = "$("$PUSHCTL" --version)" ] || fail "the tarball's pushctl is not the one given"
cmp -s "$D/pushctl.json" "$ROOT/packaging/pushctl.json" || fail "pushctl.json is not packaging/pushctl.json"
for unit in "$D"/systemd/*.service; do
  grep -q '^ExecStart=/usr/local/bin/pushctl ' "$unit" || fail "$(basename "$unit") does not run /usr/local/bin/pushctl"
  ! grep -q '/usr/bin/pushctl' "$unit" || fail "$(basename "$unit") still names /usr/bin/pushctl"
done
# Every shared library the binary needs is named in the tarball section of docs/operating.md.
SECTION=$(sed -n '/^### Other distributions: the tarball/,/^## /p' "$ROOT/docs/operating.md")
[ -n "$SECTION" ] || fail "docs/operating.md has no '### Other distributions: the tarball' section"
NEEDED=$(readelf -d "$D/pushctl" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$NEEDED" ] || fail "readelf found no NEEDED entries"
for lib in $NEEDED; do
  grep -qF "$lib" <<< "$SECTION" || fail "the tarball section of docs/operating.md does not name $lib, which pushctl needs"
done
echo "dist: $(basename "$TARBALL") ($(du -k "$TARBALL" | cut -f1) KB): contents, units and the documented library list ($(echo $NEEDED)) checked"
echo "dist: PASS"
