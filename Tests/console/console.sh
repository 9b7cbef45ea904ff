#!/usr/bin/env bash
# The web console in a real browser: Debian's chromium, headless, driven over WebDriver (the system chromedriver)
# by Selenium (PyPI), against a real `pushctl serve`'s admin listener, whose app sends to a `pushctl simulator
# --record` process; then the development inbox on a `pushctl serve` of make run's configuration (built-in simulator).
# Fails (never skips) when chromium, chromedriver or selenium cannot be had. Screenshots: .build/console-screenshots/.
# Usage: Tests/console/console.sh [path/to/pushctl]   (run by `make test`)
#        Tests/console/console.sh --install-only        (only installs chromium and selenium: make test does that
#                                                         while it compiles)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
INSTALL_ONLY=
[ "${1:-}" != --install-only ] || INSTALL_ONLY=1
PUSHCTL=${1:-$ROOT/.build/release/pushctl}
case "$PUSHCTL" in /*) ;; *) PUSHCTL="$PWD/$PUSHCTL" ;; esac
[ -n "$INSTALL_ONLY" ] || [ -x "$PUSHCTL" ] || { echo "console: no pushctl at $PUSHCTL (build first)" >&2; exit 1; }
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}

if [ ! -x "$CHROMIUM" ] || [ ! -x "$CHROMEDRIVER" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "console: installing chromium chromium-driver with apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } >/dev/null 2>&1 || {
      echo "console: FAILED: cannot install chromium and chromium-driver with apt-get; the console test cannot run" >&2
      exit 1
    }
  else
    echo "console: FAILED: $CHROMIUM or $CHROMEDRIVER missing; run: sudo apt-get install -y chromium chromium-driver" >&2
    exit 1
  fi
fi
[ -x "$CHROMIUM" ] && [ -x "$CHROMEDRIVER" ] || { echo "console: FAILED: chromium or chromedriver still missing after apt-get" >&2; exit 1; }
if ! python3 -c 'import selenium' >/dev/null 2>&1; then
  echo "console: installing selenium from PyPI"
  python3 -m pip install -q selenium >/dev/null 2>&1 || {
    echo "console: FAILED: cannot install selenium with pip (PyPI unreachable?); the console test cannot run" >&2
    exit 1
  }
fi
if [ -n "$INSTALL_ONLY" ]; then echo "console: chromium, chromedriver and selenium are installed"; exit 0; fi

WORK=$(mktemp -d /tmp/pushprovider-console.XXXXXX)
SERVER= SIMULATOR= RUNSERVER=
cleanup() {
  for pid in $SERVER $SIMULATOR $RUNSERVER; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

cd "$WORK"
"$PUSHCTL" cert make-dev --out certs --topic com.example.app >/dev/null
# The app has Web Push too: a VAPID key (its applicationServerKey is printed, for subscribing).
VAPIDPUB=$("$PUSHCTL" webpush key new --out vapid.pem)
# The APNs side and the Web Push service: a separate simulator that records every accepted notification (client
# auth "either": the APNs sender shows its certificate, a Web Push sender none).
"$PUSHCTL" simulator --certificates certs --host 127.0.0.1 --port 0 --client-auth either --record sent.jsonl > simulator.log 2>&1 &
SIMULATOR=$!
SIMPORT=
for _ in $(seq 1 100); do
  SIMPORT=$(sed -n 's|.*listening on https://127.0.0.1:\([0-9]*\).*|\1|p' simulator.log | head -1)
  [ -n "$SIMPORT" ] && break
  kill -0 "$SIMULATOR" 2>/dev/null || { cat simulator.log; echo "console: FAILED: pushctl simulator did not start" >&2; exit 1; }
  sleep 0.1
done
[ -n "$SIMPORT" ] || { echo "console: FAILED: pushctl simulator did not report its port" >&2; exit 1; }
# A real subscription from the simulator's Web Push service, as a browser's pushManager.subscribe() gets one.
python3 "$ROOT/Tests/webpush/mint_subscriptions.py" 127.0.0.1 "$SIMPORT" certs/ca.pem "$VAPIDPUB" 1 0 \
  | python3 -c 'import json, sys; print(json.dumps(json.loads(sys.stdin.readline())["subscription"]))' > subscription.json \
  || { echo "console: FAILED: cannot mint a Web Push subscription on the simulator" >&2; exit 1; }
# And a UnifiedPush endpoint from the simulator's distributor, as the connector library gives an Android app one.
curl -sf --cacert certs/ca.pem -X POST "https://127.0.0.1:$SIMPORT/up/register" > unifiedpush.json \
  || { echo "console: FAILED: cannot register a UnifiedPush endpoint on the simulator" >&2; exit 1; }

SENDKEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
REGKEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
PLAINKEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))')  # the send key of "plain", an app without Web Push
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
# Two listeners, as installed: the console and the API it calls on the admin one; the public one has no console.
PORT=$(free_port); ADMINPORT=$(free_port)
cat > pushctl.json <<JSON
{"database": "registry.sqlite", "server": {"host": "127.0.0.1", "port": $PORT, "admin": {"host": "127.0.0.1", "port": $ADMINPORT}},
 "apps": {"example": {"topic": "com.example.app", "endpoint": "https://127.0.0.1:$SIMPORT", "caFile": "certs/ca.pem",
   "auth": {"p12": "certs/client.p12", "passwordFile": "certs/client.p12.password"},
   "registrationKeys": ["sha256:$(sha "$REGKEY")"], "sendKeys": ["sha256:$(sha "$SENDKEY")"],
   "webpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com", "allowedHosts": ["127.0.0.1:$SIMPORT"], "caFile": "certs/ca.pem"},
   "unifiedpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com", "exemptHosts": ["127.0.0.1:$SIMPORT"], "caFile": "certs/ca.pem"}},
  "plain": {"topic": "com.example.app", "endpoint": "https://127.0.0.1:$SIMPORT", "caFile": "certs/ca.pem",
   "auth": {"p12": "certs/client.p12", "passwordFile": "certs/client.p12.password"}, "sendKeys": ["sha256:$(sha "$PLAINKEY")"]}}}
JSON
"$PUSHCTL" serve --config pushctl.json > serve.log 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$ADMINPORT/healthz" 2>/dev/null && break
  kill -0 "$SERVER" 2>/dev/null || { cat serve.log; echo "console: FAILED: pushctl serve did not start" >&2; exit 1; }
  sleep 0.2
done
PUBLIC=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/console")
[ "$PUBLIC" = 404 ] || { echo "console: FAILED: the public listener answered $PUBLIC for /console, not 404" >&2; exit 1; }

SHOTS="$ROOT/.build/console-screenshots"
mkdir -p "$SHOTS"
set +e
SE_OFFLINE=true python3 "$ROOT/Tests/console/console_test.py" --base "http://127.0.0.1:$ADMINPORT" --app example --plain-app plain --plain-key "$PLAINKEY" \
  --send-key "$SENDKEY" --registration-key "$REGKEY" --database "$WORK/registry.sqlite" --record "$WORK/sent.jsonl" \
  --web-subscription "$WORK/subscription.json" --unifiedpush-subscription "$WORK/unifiedpush.json" \
  --screenshots "$SHOTS" --chromium "$CHROMIUM" --chromedriver "$CHROMEDRIVER"
STATUS=$?
set -e
if [ "$STATUS" -ne 0 ]; then
  echo "--- serve.log (last 30 lines)"; tail -30 serve.log
  echo "console: FAILED" >&2
  exit 1
fi

# The development inbox, on `make run`'s own configuration (Config/pushctl.json, its certificates made as `make run`
# makes them), with the built-in simulator on free ports: one device per service, one notification, the inbox.
RUN="$WORK/run"
mkdir -p "$RUN/Config" "$RUN/data"
RUNSIM=$(free_port); RUNPORT=$(free_port); RUNADMIN=$(free_port)
sed "s/2197/$RUNSIM/g" "$ROOT/Config/pushctl.json" > "$RUN/Config/pushctl.json"
"$PUSHCTL" cert make-dev --out "$RUN/Certificates/dev" --topic com.example.app >/dev/null
"$PUSHCTL" webpush key new --out "$RUN/Certificates/dev/vapid.pem" >/dev/null
"$PUSHCTL" fcm account new --out "$RUN/Certificates/dev/fcm-service-account.json" >/dev/null
"$PUSHCTL" serve --config "$RUN/Config/pushctl.json" --port "$RUNPORT" --admin-port "$RUNADMIN" > run-serve.log 2>&1 &
RUNSERVER=$!
for _ in $(seq 1 150); do
  grep -q "Send it a notification" run-serve.log && break
  kill -0 "$RUNSERVER" 2>/dev/null || { cat run-serve.log; echo "console: FAILED: pushctl serve (make run's configuration) did not start" >&2; exit 1; }
  sleep 0.2
done
RUNKEY=$(grep -A1 "App 'example' has no API keys configured" run-serve.log | tail -1 | tr -d ' ')
[ -n "$RUNKEY" ] || { cat run-serve.log; echo "console: FAILED: no development key in the banner" >&2; exit 1; }
set +e
SE_OFFLINE=true python3 "$ROOT/Tests/console/inbox_test.py" --api "http://127.0.0.1:$RUNPORT" --admin "http://127.0.0.1:$RUNADMIN" \
  --simulator "https://127.0.0.1:$RUNSIM" --ca "$RUN/Certificates/dev/ca.pem" --key "$RUNKEY" \
  --screenshots "$SHOTS" --chromium "$CHROMIUM" --chromedriver "$CHROMEDRIVER"
STATUS=$?
set -e
if [ "$STATUS" -ne 0 ]; then
  echo "--- run-serve.log (last 30 lines)"; tail -30 run-serve.log
  echo "console: FAILED" >&2
  exit 1
fi
echo "console: PASS (screenshots in $SHOTS)"
