#!/usr/bin/env bash
# The server that found issue 57 as a referee of the shipped binary: Python's h2 (PyPI 4.4.1, Tests/referees/install.sh)
# advertising SETTINGS_MAX_CONCURRENT_STREAMS = 1 from its first frame and closing the connection for a stream over it
# (Tests/referees/h2_strict_apns.py). `pushctl broadcast` sends 10,000 notifications to it: every one accepted once,
# nothing deferred or possibly duplicated, one connection, never closed for a stream over the limit.
#
# Why the CLI and not an in-process Swift test: StrictH2RefereeTests, which read the server's pipe from the test's
# task, hung in CI with the server seemingly stuck; driven by the binary, 8 broadcasts in a row (59,000 notifications)
# ran clean by hand, so the referee is back in `make test` this way (docs/testing.md).
#
#   bash Tests/referees/h2_referee.sh .build/release/pushctl
set -euo pipefail
PUSHCTL=$(realpath "${1:?usage: h2_referee.sh PUSHCTL}")
N=${N:-10000}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
bash "$ROOT/Tests/referees/install.sh"
WORK=$(mktemp -d /tmp/pushprovider-h2-referee.XXXXXX)
SERVER=
cleanup() { [ -z "$SERVER" ] || kill -TERM "$SERVER" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
fail() { echo "h2 referee: FAILED: $*" >&2; [ -f "$WORK/h2.log" ] && sed 's/^/  server: /' "$WORK/h2.log" >&2; exit 1; }
cd "$WORK"
"$PUSHCTL" cert make-dev --out certs --topic com.example.app > /dev/null
python3 "$ROOT/Tests/referees/h2_strict_apns.py" --cert certs/server.pem --key certs/server.key --limit 1 > h2.log 2>&1 &
SERVER=$!
PORT=
for _ in $(seq 100); do
  PORT=$(awk '/^port /{print $2}' h2.log)
  [ -n "$PORT" ] && break
  kill -0 "$SERVER" 2>/dev/null || fail "the server exited before listening"
  sleep 0.1
done
[ -n "$PORT" ] || fail "the server did not print its port within 10 s"
cat > pushctl.json <<JSON
{ "database": "registry.sqlite",
  "apps": { "apns": { "apns": { "topic": "com.example.app", "endpoint": "https://localhost:$PORT", "caFile": "certs/ca.pem",
    "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" } } } } }
JSON
python3 -c 'import os, sys; [print(os.urandom(32).hex()) for _ in range(int(sys.argv[1]))]' "$N" \
  | "$PUSHCTL" tokens import --config pushctl.json --app apns - > /dev/null
timeout 300 "$PUSHCTL" broadcast --config pushctl.json --app apns --id h2-referee --alert "Hi" > broadcast.out 2>&1 \
  || { cat broadcast.out >&2; fail "the broadcast failed (exit $?)"; }
grep -q "devices $N, finished $N, accepted $N, not accepted 0, dead tokens 0, deferred 0" broadcast.out \
  || { cat broadcast.out >&2; fail "not every notification accepted"; }
grep -q "retried 0, possibly duplicated 0" broadcast.out || { cat broadcast.out >&2; fail "retries or possible duplicates"; }
kill -TERM "$SERVER"
for _ in $(seq 100); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SERVER" 2>/dev/null && fail "the server did not stop within 10 s of SIGTERM"
wait "$SERVER" || fail "the server exited $?"
SERVER=
COUNTS=$(tail -1 h2.log)
[ "$COUNTS" = "answered $N connections 1 excess-closures 0" ] || fail "the server counted: $COUNTS"
echo "h2 referee: PASS ($N notifications at a stream limit of 1 over one connection; the server: $COUNTS)"
