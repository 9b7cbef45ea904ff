#!/usr/bin/env bash
# Packages an already built pushctl (no build, no network):
#   packaging/build.sh deb  BINARY OUTDIR   -> OUTDIR/pushprovider_<version>_<arch>.deb   (make deb)
#   packaging/build.sh dist BINARY OUTDIR   -> OUTDIR/pushprovider-<version>-linux-<machine>.tar.gz   (make dist)
# The version is what the binary prints (`pushctl --version`, from ProductVersion.swift), so the package, the
# binary and docs/openapi.yaml (held equal by a test) cannot disagree. Prints the path of what it built.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KIND=${1:?usage: packaging/build.sh deb|dist BINARY OUTDIR}
BIN=${2:?usage: packaging/build.sh deb|dist BINARY OUTDIR}
OUT=${3:?usage: packaging/build.sh deb|dist BINARY OUTDIR}
[ -x "$BIN" ] || { echo "package: no pushctl at $BIN (make release first)" >&2; exit 1; }
case "$KIND" in deb | dist) ;; *) echo "package: unknown kind '$KIND' (deb or dist)" >&2; exit 1 ;; esac

VERSION=$("$BIN" --version | sed -n '1s/^pushctl //p')
COMMIT=$("$BIN" --version | sed -n 's/^commit //p')
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "package: '$BIN --version' gave no semantic version" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/pushprovider-package.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
# Who answers for the package (Maintainer, changelog): set DEB_MAINTAINER to your team. The default's .invalid
# domain (RFC 2606) says plainly that nobody reads it.
MAINTAINER=${DEB_MAINTAINER:-PushProvider maintainers <maintainers@pushprovider.invalid>}
[ "$KIND" != deb ] || [ -n "${DEB_MAINTAINER:-}" ] \
  || echo "package: Maintainer is the placeholder '$MAINTAINER'; set DEB_MAINTAINER='Name <address>' (docs/operating.md)" >&2
# Reproducible dates: the commit's time when built from git, else now.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}

# The binary without its symbol table (as dh_strip does; the Swift runtime needs none of it).
strip_to() { strip --remove-section=.comment --remove-section=.note --strip-unneeded -o "$1" "$BIN"; chmod 0755 "$1"; }
units() { ls "$ROOT"/Config/pushprovider*.service "$ROOT"/Config/pushprovider*.timer; }

if [ "$KIND" = dist ]; then
  NAME="pushprovider-$VERSION-linux-$(uname -m)"
  D="$STAGE/$NAME"
  mkdir -p "$D/systemd"
  strip_to "$D/pushctl"
  install -m 0644 "$ROOT/packaging/pushctl.json" "$D/pushctl.json"
  # A binary installed by hand goes to /usr/local/bin, its documentation beside it.
  for unit in $(units); do
    sed -e 's|/usr/bin/pushctl|/usr/local/bin/pushctl|g' \
        -e 's|file:///usr/share/doc/pushprovider/README.md.gz|file:///usr/local/share/doc/pushprovider/README.md|' \
        "$unit" > "$D/systemd/$(basename "$unit")"
  done
  install -m 0644 "$ROOT/README.md" "$ROOT/docs/openapi.yaml" "$ROOT/Config/crontab.example" "$ROOT/packaging/pushctl.1" "$D/"
  # The pages README.md links to, at the same relative path (docs/).
  install -d -m 0755 "$D/docs"
  install -m 0644 "$ROOT"/docs/*.md "$D/docs/"
  printf 'pushprovider %s\ncommit %s\n' "$VERSION" "$COMMIT" > "$D/VERSION"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$STAGE" -czf "$OUT/$NAME.tar.gz" "$NAME"
  echo "$OUT/$NAME.tar.gz"
  exit 0
fi

# ---- deb
ARCH=$(dpkg --print-architecture)
R="$STAGE/root"
DOC="$R/usr/share/doc/pushprovider"
install -d -m 0755 "$R/DEBIAN" "$R/usr/bin" "$R/etc/pushprovider" "$R/lib/systemd/system" "$DOC" "$R/var/lib/pushprovider" \
  "$R/usr/share/man/man1"
strip_to "$R/usr/bin/pushctl"
install -m 0644 "$ROOT/packaging/pushctl.json" "$R/etc/pushprovider/pushctl.json"
for unit in $(units); do install -m 0644 "$unit" "$R/lib/systemd/system/"; done
gzip -9n < "$ROOT/README.md" > "$DOC/README.md.gz"
# The pages README.md links to, beside it in docs/ (compressed like it).
install -d -m 0755 "$DOC/docs"
for page in "$ROOT"/docs/*.md; do gzip -9n < "$page" > "$DOC/docs/$(basename "$page").gz"; done
gzip -9n < "$ROOT/docs/openapi.yaml" > "$DOC/openapi.yaml.gz"
install -m 0644 "$ROOT/Config/crontab.example" "$DOC/crontab.example"
gzip -9n < "$ROOT/packaging/pushctl.1" > "$R/usr/share/man/man1/pushctl.1.gz"
chmod 0644 "$R/usr/share/man/man1/pushctl.1.gz"
install -m 0644 "$ROOT/packaging/debian/copyright" "$DOC/copyright"
{
  printf 'pushprovider (%s) unstable; urgency=medium\n\n' "$VERSION"
  printf '  * Built from commit\n    %s.\n  * What changed: README.md.gz and the git history.\n\n' "$COMMIT"
  printf ' -- %s  %s\n' "$MAINTAINER" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$DOC/changelog.gz"
find "$DOC" -type f -exec chmod 0644 {} +

# Depends: the shared libraries the binary links (dpkg-shlibdeps reads the installed packages' shlibs and symbols
# files: no network), adduser for the maintainer scripts, ca-certificates (the system trust store APNs is
# verified with; `pushctl doctor` names the root), and tzdata: registrations' time zones are checked against
# (and made canonical by) its /usr/share/zoneinfo/tzdata.zi. Everything else they call is essential.
mkdir -p "$STAGE/shlibs/debian"
printf 'Source: pushprovider\n\nPackage: pushprovider\nArchitecture: any\n' > "$STAGE/shlibs/debian/control"
SHLIBS=$(cd "$STAGE/shlibs" && dpkg-shlibdeps -O -e"$R/usr/bin/pushctl" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$SHLIBS" ] || { echo "package: dpkg-shlibdeps found no libraries for $BIN" >&2; exit 1; }

for script in postinst prerm postrm; do install -m 0755 "$ROOT/packaging/debian/$script" "$R/DEBIAN/$script"; done
echo /etc/pushprovider/pushctl.json > "$R/DEBIAN/conffiles"
INSTALLED_KB=$(du -sk --exclude=DEBIAN "$R" | cut -f1)
cat > "$R/DEBIAN/control" <<EOF
Package: pushprovider
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $INSTALLED_KB
Depends: $SHLIBS, adduser, ca-certificates, tzdata
Section: net
Priority: optional
Description: self-hosted push provider for APNs, Web Push and FCM
 PushProvider keeps your apps' devices (iOS device tokens, browsers' Web
 Push subscriptions, Android FCM registration tokens) and sends alerts and
 silent pushes, and Live Activity updates to iOS, over HTTP/2: to APNs with
 a .p12 certificate or a .p8 key, to browsers' push services with a VAPID
 key, to Firebase Cloud Messaging (HTTP v1) with a service account. An HTTP
 API for apps and backends, broadcasts and scheduled sends, workers on
 several hosts, and a built-in simulator of all three services. The package
 installs pushctl, a configuration with an example app on the simulator,
 and systemd units for the server, workers and the nightly maintenance
 (none enabled at install).
EOF
(cd "$R" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$R/DEBIAN/md5sums"
chmod 0644 "$R/DEBIAN/control" "$R/DEBIAN/conffiles" "$R/DEBIAN/md5sums"
# xz at level 1: a quarter of the default level's time on this 85 MB binary, for a package 15% larger.
DEB="$OUT/pushprovider_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz -z1 --build "$R" "$DEB" >/dev/null
echo "$DEB"
