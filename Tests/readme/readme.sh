#!/usr/bin/env bash
# README as tests: runs the shell blocks README.md and every docs/*.md page mark runnable, in order, and checks
# what each documents (exit status, lines of output); see Tests/readme/readme.py for the markers. Each file runs
# in a fresh copy of the checkout below (its own registry, its own `make run`), so every page is self-contained.
# Run by `make test` after the release build, because the Quick start's `make run` runs that binary:
#   bash Tests/readme/readme.sh [.build/release/pushctl] [--no-make] [PAGE.md ...]
# PAGE.md arguments run only those pages (then the check that every section in SECTIONS runs is not made).
# It sets up, in a temporary directory: a copy of Config/pushctl.json on free ports with a development PKI
# (`cert make-dev`), `pushctl` on PATH, the files the README says /etc/pushprovider holds, a private PostgreSQL
# (initdb as the postgres user, stopped with `pg_ctl -m immediate` at the end), a private tinyproxy and a local
# webhook receiver. --no-make (for developers without a release build) replaces `make run` by its recipe and
# says so; `make test` never passes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
BIN=.build/release/pushctl
NO_MAKE=
FILES=()
for arg in "$@"; do
  case "$arg" in
    --no-make) NO_MAKE=1 ;;
    *.md) FILES+=("$arg") ;;
    *) BIN=$arg ;;
  esac
done
# Pages named on the command line run alone (a developer's loop); `make test` runs them all.
[ ${#FILES[@]} -gt 0 ] || FILES=(README.md docs/*.md)
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || [ -z "$NO_MAKE" ] || { echo "readme.sh: $BIN not found" >&2; exit 2; }

say() { echo "readme.sh: $*"; }
T=$(mktemp -d /tmp/pushprovider-readme.XXXXXX)
chmod 755 "$T"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
TINYPROXY_PID=
cleanup() {
  [ -n "$TINYPROXY_PID" ] && kill "$TINYPROXY_PID" 2>/dev/null || true
  if [ -n "${PGBIN:-}" ] && [ -f "$T/pg/data/postmaster.pid" ]; then
    AS=(); [ "$(id -u)" = 0 ] && AS=(runuser -u postgres --)
    "${AS[@]}" "$PGBIN/pg_ctl" -D "$T/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$T"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
HTTP_PORT=$(free_port); SIM_PORT=$(free_port); PG_PORT=$(free_port); PROXY_PORT=$(free_port); HOOK_PORT=$(free_port)

# The reader's checkout (readme.py copies it for each file): the shipped configuration on this run's ports, the development PKI, the release binary
# where the Quick start runs it, `pushctl` on PATH.
WORK=$T/repo
mkdir -p "$WORK/Config" "$WORK/.build/release" "$T/bin"
python3 - "$REPO/Config/pushctl.json" "$WORK/Config/pushctl.json" "$HTTP_PORT" "$SIM_PORT" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["server"]["port"] = int(sys.argv[3])
c["simulator"]["port"] = int(sys.argv[4])
for app in c["apps"].values():
    if "webpush" in app:  # the simulator's Web Push service, on this run's port
        app["webpush"]["allowedHosts"] = ["127.0.0.1:" + sys.argv[4]]
json.dump(c, open(sys.argv[2], "w"), indent=2)
EOF
ln -s "$BIN" "$T/bin/pushctl"
ln -s "$BIN" "$WORK/.build/release/pushctl"
if [ -z "$NO_MAKE" ]; then
  # `make run` makes Certificates/dev in the checkout when it is missing; this run's copy uses its own.
  :
fi
"$BIN" cert make-dev --out "$WORK/Certificates/dev" --topic com.example.app >/dev/null
"$BIN" webpush key new --out "$WORK/Certificates/dev/vapid.pem" >/dev/null
"$BIN" fcm account new --out "$WORK/Certificates/dev/fcm-service-account.json" >/dev/null

# /etc/pushprovider as the README has it: the configuration (the registry where the production steps put it),
# the database password, the webhook secret, the certificate the cron alarm inspects.
ETC=$T/etc/pushprovider
mkdir -p "$ETC" "$T/var/lib/pushprovider"
python3 - "$WORK/Config/pushctl.json" "$ETC/pushctl.json" "$T/var/lib/pushprovider/pushctl.sqlite" "$WORK/Certificates/dev" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["database"] = sys.argv[3]
certs = sys.argv[4]
c["simulator"]["certificates"] = certs
for app in c["apps"].values():
    auth = app.get("apns", app).get("auth", {})  # the apns section, or the flat keys of older files
    for key in ("p12", "passwordFile", "p8"):
        if key in auth:
            auth[key] = auth[key].replace("../Certificates/dev", certs)
    for key in ("vapidKey", "caFile"):
        if app.get("webpush", {}).get(key):
            app["webpush"][key] = app["webpush"][key].replace("../Certificates/dev", certs)
    for key in ("serviceAccount", "caFile"):
        if app.get("fcm", {}).get(key):
            app["fcm"][key] = app["fcm"][key].replace("../Certificates/dev", certs)
json.dump(c, open(sys.argv[2], "w"), indent=2)
EOF
cp "$WORK/Certificates/dev/client.p12" "$WORK/Certificates/dev/client.p12.password" "$ETC/"
echo "unused-by-a-trusting-server" > "$ETC/db.password"
echo "webhook-secret-of-the-readme" > "$ETC/webhook.secret"
chmod 600 "$ETC/db.password" "$ETC/webhook.secret"

# A private PostgreSQL: db.internal:5432 of the PostgreSQL section, role and database `pushprovider`.
[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] || { say "PostgreSQL is not installed (make deps installs it)"; exit 1; }
mkdir -p "$T/pg"
AS=()
if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$T/pg"; AS=(runuser -u postgres --); fi
"${AS[@]}" "$PGBIN/initdb" -D "$T/pg/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 > "$T/initdb.log" 2>&1
"${AS[@]}" "$PGBIN/pg_ctl" -D "$T/pg/data" -l "$T/pg/log" -w \
  -o "-p $PG_PORT -k $T/pg -c listen_addresses=127.0.0.1 -c fsync=off" start > /dev/null
psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "CREATE ROLE pushprovider LOGIN" -c "CREATE DATABASE pushprovider OWNER pushprovider" postgres

# A private tinyproxy: proxy.internal:3128 of the Outbound proxy section, tunnelling to the simulator only.
TINYPROXY=$(command -v tinyproxy || ls /usr/bin/tinyproxy /usr/sbin/tinyproxy 2>/dev/null | head -1 || true)
[ -n "$TINYPROXY" ] || { say "tinyproxy is not installed (make deps installs it)"; exit 1; }
cat > "$T/tinyproxy.conf" <<EOF
Port $PROXY_PORT
Listen 127.0.0.1
Allow 127.0.0.1
Timeout 60
MaxClients 20
LogFile "$T/tinyproxy.log"
LogLevel Connect
ConnectPort $SIM_PORT
EOF
"$TINYPROXY" -d -c "$T/tinyproxy.conf" > /dev/null 2>&1 &
TINYPROXY_PID=$!

say "binary $BIN; API 127.0.0.1:$HTTP_PORT, simulator $SIM_PORT, PostgreSQL $PG_PORT, tinyproxy $PROXY_PORT, webhook $HOOK_PORT"
export README_ENV
README_ENV=$(python3 - <<EOF
import json
print(json.dumps({
    "T": "$T", "REPO": "$REPO", "BIN": "$BIN", "WORK": "$WORK", "NO_MAKE": "$NO_MAKE",
    "HOOK_PORT": "$HOOK_PORT", "WEBHOOK_RECORD": "$T/webhook.jsonl",
    "SHELL_ENV": {"PATH": "$T/bin:" + __import__("os").environ["PATH"], "PUSHCTL_CONFIG": "$WORK/Config/pushctl.json",
                  "HOME": "$T"},
    "SUBS": [["/etc/pushprovider/", "$ETC/"], ["db.internal:5432", "127.0.0.1:$PG_PORT"],
             ["proxy.internal:3128", "127.0.0.1:$PROXY_PORT"], ["backend.internal:8081", "127.0.0.1:$HOOK_PORT"],
             ["127.0.0.1:8080", "127.0.0.1:$HTTP_PORT"], ["127.0.0.1:2197", "127.0.0.1:$SIM_PORT"],
             ["/var/log/tinyproxy/tinyproxy.log", "$T/tinyproxy.log"]],
}))
EOF
)
python3 Tests/readme/readme.py "${FILES[@]}"
