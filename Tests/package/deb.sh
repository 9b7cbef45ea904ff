#!/usr/bin/env bash
# The Debian package as an operator meets it (make test runs it, as root): builds it from a release pushctl (no
# build here), runs lintian on it, installs it with dpkg -i, checks the user, the directories, their modes, the
# conffile, the docs and the units (systemd-analyze verify), makes API keys with the installed
# `pushctl apikey new`, runs the installed /usr/bin/pushctl serve as the pushprovider user on the packaged
# configuration, registers a device over HTTP and sends to it through the built-in simulator; then
# dpkg --remove (configuration and data kept) and dpkg --purge (gone, user and group removed).
# It refuses to start when a pushprovider package, user or group, /etc/pushprovider or /var/lib/pushprovider
# already exists, and leaves the machine as it found it, also when a step fails (trap).
# Usage: Tests/package/deb.sh [path/to/release/pushctl]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PUSHCTL=${1:-$ROOT/.build/release/pushctl}
case "$PUSHCTL" in /*) ;; *) PUSHCTL="$PWD/$PUSHCTL" ;; esac
say() { echo "deb: $*"; }
fail() { say "FAIL: $*" >&2; exit 1; }
[ -x "$PUSHCTL" ] || fail "no pushctl at $PUSHCTL (make release first)"
[ "$(id -u)" = 0 ] || fail "dpkg -i needs root: run make test (or this script) as root"
for tool in dpkg-deb dpkg-shlibdeps lintian systemd-analyze setpriv curl python3; do
  command -v "$tool" >/dev/null || fail "$tool is missing (make deps installs it)"
done

# ---- refuse to touch a machine that has PushProvider on it
status() { # the package's dpkg status, "not installed" when dpkg does not know it or only remembers it
  local s
  s=$(dpkg-query -W -f='${Status}' pushprovider 2>/dev/null || true)
  case "$s" in "" | *" not-installed") echo "not installed" ;; *) echo "$s" ;; esac
}
state() { # everything the package may create, to compare before and after
  status
  getent passwd pushprovider || echo "no user"
  getent group pushprovider || echo "no group"
  dpkg-statoverride --list | grep pushprovider || echo "no statoverrides"
  ls -d /etc/pushprovider /var/lib/pushprovider /usr/bin/pushctl /lib/systemd/system/pushprovider* \
    /usr/share/doc/pushprovider /etc/systemd/system/*/pushprovider* 2>/dev/null || echo "no files"
}
[ "$(status)" = "not installed" ] || fail "refusing to run: a pushprovider package is on this machine ($(status))"
getent passwd pushprovider >/dev/null && fail "refusing to run: a pushprovider user exists"
getent group pushprovider >/dev/null && fail "refusing to run: a pushprovider group exists"
for dir in /etc/pushprovider /var/lib/pushprovider; do [ -e "$dir" ] && fail "refusing to run: $dir exists"; done
BEFORE=$(state)

WORK=$(mktemp -d /tmp/pushprovider-deb.XXXXXX)
chmod 755 "$WORK"
SERVER=
cleanup() {
  local status=$?
  set +e
  if [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null; then kill -TERM "$SERVER"; wait "$SERVER" 2>/dev/null; fi
  if [ "$(status)" != "not installed" ]; then
    say "cleanup: purging the package"
    dpkg_locked --purge pushprovider > "$WORK/cleanup.log" 2>&1 || { cat "$WORK/cleanup.log" >&2; say "FAIL: the cleanup's purge failed" >&2; }
  fi
  local after
  after=$(state)
  if [ "$after" != "$BEFORE" ]; then
    say "FAIL: the machine is not as it was found:" >&2
    diff <(echo "$BEFORE") <(echo "$after") >&2
    status=1
  fi
  rm -rf "$WORK"
  exit $status
}
trap cleanup EXIT
# dpkg takes its lock or fails at once: wait for another apt or dpkg run on this machine to finish.
dpkg_locked() {
  local i
  for i in $(seq 1 60); do
    if dpkg "$@" 2> "$WORK/dpkg.err"; then return 0; fi
    grep -q 'lock' "$WORK/dpkg.err" || { cat "$WORK/dpkg.err" >&2; return 1; }
    sleep 2
  done
  cat "$WORK/dpkg.err" >&2
  return 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mode_owner() { stat -c '%a %U:%G' "$1"; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: expected '$3', got '$2'"; }

# ---- build and lint
DEB=$(bash "$ROOT/packaging/build.sh" deb "$PUSHCTL" "$WORK")
say "built $(basename "$DEB") ($(du -k "$DEB" | cut -f1) KB)"
VERSION=$("$PUSHCTL" --version | sed -n '1s/^pushctl //p')
expect_eq "package version" "$(dpkg-deb -f "$DEB" Version)" "$VERSION"
expect_eq "package architecture" "$(dpkg-deb -f "$DEB" Architecture)" "$(dpkg --print-architecture)"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
for lib in libc6 libcurl4 libssl3 libsqlite3-0 adduser ca-certificates; do
  [[ ", $DEPENDS," == *", $lib"[\ ,]* ]] || fail "Depends lacks $lib: $DEPENDS"
done
say "Depends: $DEPENDS"
expect_eq "conffiles" "$(dpkg-deb --ctrl-tarfile "$DEB" | tar -xOf - ./conffiles)" "/etc/pushprovider/pushctl.json"
# lintian: no error and no warning left (each one fixed, or overridden with its reason in
# packaging/debian/lintian-overrides); the overrides it used and the informational tags are shown.
set +e
lintian --fail-on error,warning --show-overrides --display-info "$DEB" > "$WORK/lintian.txt" 2>&1
LINTIAN=$?
set -e
sed 's/^/deb: lintian: /' "$WORK/lintian.txt"
[ "$LINTIAN" = 0 ] || fail "lintian found errors or warnings (exit $LINTIAN)"
say "lintian: no errors, no warnings"

# ---- install
dpkg_locked -i "$DEB" > "$WORK/install.log" || { cat "$WORK/install.log"; fail "dpkg -i"; }
expect_eq "dpkg status" "$(dpkg-query -W -f='${Status}' pushprovider)" "install ok installed"
expect_eq "installed pushctl --version" "$(/usr/bin/pushctl --version | head -1)" "pushctl $VERSION"
# The user and group: a system account without a login, at home in its state directory.
IFS=: read -r _ _ USER_ID GROUP_ID _ HOME_DIR SHELL_PATH <<< "$(getent passwd pushprovider)"
[ "$USER_ID" -lt 1000 ] || fail "pushprovider is not a system user (uid $USER_ID)"
expect_eq "pushprovider's group" "$(getent group "$GROUP_ID" | cut -d: -f1)" "pushprovider"
expect_eq "pushprovider's home" "$HOME_DIR" "/var/lib/pushprovider"
expect_eq "pushprovider's shell" "$SHELL_PATH" "/usr/sbin/nologin"
expect_eq "/var/lib/pushprovider" "$(mode_owner /var/lib/pushprovider)" "750 pushprovider:pushprovider"
expect_eq "/etc/pushprovider" "$(mode_owner /etc/pushprovider)" "750 root:pushprovider"
expect_eq "/etc/pushprovider/pushctl.json" "$(mode_owner /etc/pushprovider/pushctl.json)" "640 root:pushprovider"
expect_eq "/usr/bin/pushctl" "$(mode_owner /usr/bin/pushctl)" "755 root:root"
cmp -s /etc/pushprovider/pushctl.json "$ROOT/packaging/pushctl.json" || fail "the installed configuration is not packaging/pushctl.json"
# The simulator's development PKI, made by postinst for the example app, the service's own, secrets at 0600.
expect_eq "simulator PKI" "$(mode_owner /var/lib/pushprovider/simulator)" "750 pushprovider:pushprovider"
expect_eq "simulator .p12 password" "$(mode_owner /var/lib/pushprovider/simulator/client.p12.password)" "600 pushprovider:pushprovider"
for doc in README.md.gz openapi.yaml.gz crontab.example copyright changelog.gz; do
  [ -f "/usr/share/doc/pushprovider/$doc" ] || fail "/usr/share/doc/pushprovider/$doc missing"
done
zcmp -s /usr/share/doc/pushprovider/README.md.gz "$ROOT/README.md" || fail "the installed README is not README.md"
# The pages README.md links to (docs/NAME.md), beside it.
for page in "$ROOT"/docs/*.md; do
  zcmp -s "/usr/share/doc/pushprovider/docs/$(basename "$page").gz" "$page" || fail "docs/$(basename "$page") is not installed beside the README"
done
# The man page describes every subcommand the installed pushctl has.
SUBCOMMANDS=$(/usr/bin/pushctl --help | sed -n '/^SUBCOMMANDS:/,/^$/p' | awk '/^  [a-z]/ { print $1 }')
[ -n "$SUBCOMMANDS" ] || fail "pushctl --help lists no subcommands"
# Read once, not piped into grep -q: the generated page is ~59 KB, and zcat killed by SIGPIPE when grep -q stops
# early fails the pipeline under pipefail.
MANPAGE=$(zcat /usr/share/man/man1/pushctl.1.gz)
for sub in $SUBCOMMANDS; do
  grep -qx "\.B $sub" <<<"$MANPAGE" || fail "the man page does not describe pushctl $sub"
done
# The units: the ones in Config/, each verified by systemd (the template as an instance).
UNITS="pushprovider.service pushprovider-worker@.service pushprovider-maintenance.service pushprovider-maintenance.timer"
for unit in $UNITS; do
  cmp -s "/lib/systemd/system/$unit" "$ROOT/Config/$unit" || fail "/lib/systemd/system/$unit is not Config/$unit"
done
mkdir "$WORK/units"
ln -s /lib/systemd/system/pushprovider-worker@.service "$WORK/units/pushprovider-worker@example.service"
for path in /lib/systemd/system/pushprovider.service /lib/systemd/system/pushprovider-maintenance.service \
  /lib/systemd/system/pushprovider-maintenance.timer "$WORK/units/pushprovider-worker@example.service"; do
  systemd-analyze verify --man=no "$path" > "$WORK/verify.txt" 2>&1 || { cat "$WORK/verify.txt"; fail "systemd-analyze verify $path"; }
  [ ! -s "$WORK/verify.txt" ] || { cat "$WORK/verify.txt"; fail "systemd-analyze verify $path printed warnings"; }
done
say "installed: user, group, directories, modes, conffile, docs; units verified"

# ---- as the service runs it: every pushctl below is the installed one, as the pushprovider user, from a directory
# without a Config/pushctl.json (so the default configuration is the installed one, as on a server)
cd /
as_service() { setpriv --reuid=pushprovider --regid=pushprovider --init-groups -- "$@"; }
# The packaged configuration as shipped: it loads, and the registry is made where it says, by the service's user.
as_service /usr/bin/pushctl tokens count --app example > "$WORK/count.txt" 2> "$WORK/count.err" \
  || { cat "$WORK/count.err"; fail "pushctl tokens count on the packaged configuration"; }
expect_eq "devices before registering" "$(cat "$WORK/count.txt")" "0"
[ -f /var/lib/pushprovider/pushctl.sqlite ] || fail "no registry at /var/lib/pushprovider/pushctl.sqlite"
# A secret others can read is refused (exit 2, naming it and the fix); the service would not restart over it.
chmod 0644 /var/lib/pushprovider/simulator/client.p12.password
set +e
as_service /usr/bin/pushctl tokens count --app example > /dev/null 2> "$WORK/refused.err"
REFUSED=$?
set -e
chmod 0600 /var/lib/pushprovider/simulator/client.p12.password
expect_eq "exit status for a world-readable password file" "$REFUSED" "2"
grep -q '/var/lib/pushprovider/simulator/client.p12.password.*chmod 600' "$WORK/refused.err" || fail "refusal: $(cat "$WORK/refused.err")"

# The operator's first step: keys, made by the installed pushctl, their hashes added to the configuration; and
# free ports instead of 8080, 8081 and 2197, which something else on a shared test machine may hold.
/usr/bin/pushctl apikey new --app example --kind registration > "$WORK/registration.key" 2> /dev/null
/usr/bin/pushctl apikey new --app example --kind send > "$WORK/send.key" 2> /dev/null
REGKEY=$(sed -n 's/^key: //p' "$WORK/registration.key")
SENDKEY=$(sed -n 's/^key: //p' "$WORK/send.key")
PORT=$(free_port); ADMIN=$(free_port); SIMPORT=$(free_port)
python3 - "$(sed -n 2p "$WORK/registration.key")" "$(sed -n 2p "$WORK/send.key")" "$PORT" "$ADMIN" "$SIMPORT" <<'PY'
import json, sys
path = "/etc/pushprovider/pushctl.json"
config = json.load(open(path))
registration, send, port, admin, simulator = sys.argv[1:]
config["apps"]["example"]["registrationKeys"].append(registration)
config["apps"]["example"]["sendKeys"].append(send)
config["server"]["port"], config["server"]["admin"]["port"] = int(port), int(admin)
config["simulator"]["port"] = int(simulator)
open(path, "w").write(json.dumps(config, indent=2) + "\n")
PY
expect_eq "the edited configuration's owner and mode" "$(mode_owner /etc/pushprovider/pushctl.json)" "640 root:pushprovider"

# Not through as_service: a backgrounded function is a subshell, and $! must be pushctl itself (setpriv execs).
setpriv --reuid=pushprovider --regid=pushprovider --init-groups -- \
  /usr/bin/pushctl serve --config /etc/pushprovider/pushctl.json > "$WORK/serve.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 150); do
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && curl -sf -o /dev/null "http://127.0.0.1:$ADMIN/healthz" && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/serve.log"; fail "pushctl serve exited"; }
  sleep 0.2
done
expect_eq "public /healthz" "$(curl -s "http://127.0.0.1:$PORT/healthz")" '{"status":"ok"}'
expect_eq "public /metrics" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")" "404"
expect_eq "public /console" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/console")" "404"
expect_eq "admin /console" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ADMIN/console")" "200"
expect_eq "pushctl serve's user and group" "$(awk '/^Uid:/ { u = $2 } /^Gid:/ { g = $2 } END { print u ":" g }' "/proc/$SERVER/status")" "$USER_ID:$GROUP_ID"
expect_eq "pushctl serve's executable" "$(readlink "/proc/$SERVER/exe")" "/usr/bin/pushctl"

# An app registers its device on the public listener, exactly as the classic iOS client does; a backend sends to
# it (a job, with the send key); the built-in simulator accepts it.
TOKEN=740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad
expect_eq "registration" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/v1/apps/example/devices" \
  -H "Authorization: Bearer $REGKEY" --data 'oldToken=(null)&newToken=<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>')" "201"
expect_eq "send job" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/v1/apps/example/notifications" \
  -H "Authorization: Bearer $SENDKEY" -H 'Content-Type: application/json' \
  --data "{\"id\":\"deb-test\",\"tokens\":[\"$TOKEN\"],\"alert\":\"Hello from the package\"}")" "202"
STATE=
for _ in $(seq 1 150); do
  STATE=$(curl -s "http://127.0.0.1:$PORT/v1/apps/example/notifications/deb-test" -H "Authorization: Bearer $SENDKEY")
  python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1]).get("state") != "completed")' "$STATE" && break
  sleep 0.2
done
python3 -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(not (j["state"] == "completed" and j["accepted"] == 1 and j["total"] == 1))' "$STATE" \
  || { tail -20 "$WORK/serve.log"; fail "the job did not complete with one accepted notification: $STATE"; }
# Read whole, then searched: piped into grep -q, curl still writing when grep stops at its match dies of EPIPE
# (exit 23), and pipefail failed the check with the line there (CI, stop 48).
METRICS=$(curl -sS "http://127.0.0.1:$ADMIN/metrics") || fail "GET /metrics on the admin listener failed"
grep -qF 'pushprovider_deliveries_total{app="example",service="apns",status="200",reason=""} 1' <<<"$METRICS" \
  || { grep '^pushprovider_deliveries_total\|^pushprovider_database_up' <<<"$METRICS" >&2; fail "the admin listener's /metrics does not count the delivery"; }
as_service /usr/bin/pushctl deliveries --app example --json > "$WORK/deliveries.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (len(d) == 1 and d[0]["status"] == "accepted" and d[0]["token"] == sys.argv[2]))' \
  "$WORK/deliveries.json" "$TOKEN" || fail "pushctl deliveries: $(cat "$WORK/deliveries.json")"
kill -TERM "$SERVER"
wait "$SERVER" || fail "pushctl serve did not exit 0 on SIGTERM: $(tail -5 "$WORK/serve.log")"
SERVER=
say "served as pushprovider: a device registered over HTTP, a notification accepted by the simulator"

# ---- remove: the binary and the units go; configuration, registry and user stay
dpkg_locked --remove pushprovider > "$WORK/remove.log" || { cat "$WORK/remove.log"; fail "dpkg --remove"; }
expect_eq "status after remove" "$(dpkg-query -W -f='${Status}' pushprovider)" "deinstall ok config-files"
[ ! -e /usr/bin/pushctl ] || fail "/usr/bin/pushctl is still there after remove"
[ ! -e /lib/systemd/system/pushprovider.service ] || fail "the units are still there after remove"
grep -q "$(sed -n 2p "$WORK/send.key")" /etc/pushprovider/pushctl.json || fail "remove lost the edited configuration"
[ -s /var/lib/pushprovider/pushctl.sqlite ] || fail "remove lost the registry"
getent passwd pushprovider >/dev/null || fail "remove deleted the user"
say "removed: configuration, registry and user kept"

# ---- purge: all of it goes
dpkg_locked --purge pushprovider > "$WORK/purge.log" 2>&1 || { cat "$WORK/purge.log"; fail "dpkg --purge"; }
for path in /etc/pushprovider /var/lib/pushprovider; do [ ! -e "$path" ] || fail "$path is still there after purge"; done
getent passwd pushprovider >/dev/null && fail "the pushprovider user is still there after purge"
getent group pushprovider >/dev/null && fail "the pushprovider group is still there after purge"
say "purged: configuration, registry, user and group gone"
# The trap compares the machine with what it was before.
say "PASS"
