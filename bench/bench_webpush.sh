#!/usr/bin/env bash
# Web Push against APNs on one machine (release build): `pushctl serve` (its built-in simulator plays APNs and a
# Web Push service, decrypting and checking every push) holds two apps, `apns` with N registered tokens and `web`
# with N Web Push subscriptions minted by the simulator and registered through the HTTP API. Then REPEAT (default
# 3) interleaved pairs of `pushctl broadcast` to each app (a fresh --id each time): client CPU µs per
# notification (utime+stime, /usr/bin/time) and rate; the ratio web ÷ APNs is the median of the pairwise ratios.
# Then one more Web Push broadcast under `perf record` (when perf works here): the share of the client's CPU in
# ECDH (P-256 point multiplication), HKDF (HMAC-SHA-256), AES-128-GCM and ECDSA signing (the VAPID JWT: one per
# push-service origin, reused for 12 h, so it should be ~0), by symbol. Last, PyPI's pywebpush (pinned by `make
# referees`) sending PY_N (default 2,000) of the same subscriptions, one `webpush()` call each over one reused
# requests.Session, as its README shows: its rate and CPU per notification. Then `pushctl webpush bench-crypto`: µs
# per operation of one message's cryptography as swift-crypto does it here, beside `openssl speed ecdhp256 ecdsap256`
# (the floor) — the target is Web Push ≤ APNs + 1.2 × floor per notification (median of the pairs).
# PERF_OUT=FILE keeps perf's whole by-symbol list. BASELINE=/path/to/an/older/pushctl adds a third broadcast to each pair: the same Web Push broadcast by that client
# (same server, same subscriptions), so a change's before and after come from one run.
# Replaces the "## Web Push" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/.build/release/pushctl}
N=${N:-20000}
PY_N=${PY_N:-2000}
REPEAT=${REPEAT:-3}
BASELINE=${BASELINE:-}
die() { echo "bench_webpush.sh: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "BIN=$BIN is not an executable (make release)"
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || die "BASELINE=$BASELINE is not an executable"
WORK=$(mktemp -d /tmp/pushprovider-bench-webpush.XXXXXX)
SERVE_PID=
cleanup() { [ -n "$SERVE_PID" ] && kill -TERM "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
API=$(free_port); ADMIN=$(free_port); SIM=$(free_port)

"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.app > /dev/null
"$BIN" webpush key new --out "$WORK/vapid.pem" > "$WORK/vapid.pub"
cat > "$WORK/pushctl.json" <<JSON
{ "database": "registry.sqlite",
  "server": { "host": "127.0.0.1", "port": $API, "rateLimitPerSecond": 1000000, "rateLimitBurst": 1000000,
              "admin": { "host": "127.0.0.1", "port": $ADMIN } },
  "simulator": { "host": "127.0.0.1", "port": $SIM, "certificates": "certs" },
  "apps": {
    "apns": { "topic": "com.example.app", "endpoint": "simulator",
      "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" } },
    "web": { "topic": "com.example.app", "endpoint": "simulator",
      "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" },
      "webpush": { "vapidKey": "vapid.pem", "subject": "mailto:bench@example.com",
                   "allowedHosts": ["127.0.0.1:$SIM"], "caFile": "certs/ca.pem" } } } }
JSON
python3 -c 'import os, sys; [print(os.urandom(32).hex()) for _ in range(int(sys.argv[1]))]' "$N" \
  | "$BIN" tokens import --config "$WORK/pushctl.json" --app apns - > /dev/null
"$BIN" serve --config "$WORK/pushctl.json" > "$WORK/serve.log" 2>&1 &
SERVE_PID=$!
for _ in $(seq 300); do grep -q "^PushProvider is listening" "$WORK/serve.log" && break; sleep 0.1; done
grep -q "^PushProvider is listening" "$WORK/serve.log" || { cat "$WORK/serve.log"; die "serve did not start"; }
KEY=$(grep -A1 "App 'web' has no API keys" "$WORK/serve.log" | tail -1 | tr -d ' ')

# N subscriptions from the simulator's Web Push service, registered as a web app would (POST …/devices).
python3 Tests/webpush/mint_subscriptions.py 127.0.0.1 "$SIM" "$WORK/certs/ca.pem" "$(cat "$WORK/vapid.pub")" "$N" 0 > "$WORK/subscriptions.jsonl"
python3 - "$API" "$KEY" "$WORK/subscriptions.jsonl" <<'PY'
import http.client, json, sys
port, key, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
for line in open(path):
    body = json.dumps({"service": "webpush", "subscription": json.loads(line)["subscription"]})
    c.request("POST", "/v1/apps/web/devices", body=body, headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status not in (200, 201): sys.exit(f"registration answered {r.status}")
PY
[ "$("$BIN" tokens count --config "$WORK/pushctl.json" --app web --service webpush)" = "$N" ] || die "not every subscription registered"

# One broadcast: "wall user sys" of the client.
broadcast() {
  local client=${3:-$BIN}
  /usr/bin/time -f "%e %U %S" -o "$WORK/time" "$client" broadcast --config "$WORK/pushctl.json" --app "$1" --id "$2" \
    --alert "Benchmark" --title "PushProvider" > /dev/null 2> "$WORK/broadcast.err" || { cat "$WORK/broadcast.err"; die "broadcast $2 failed"; }
  cat "$WORK/time"
}
: > "$WORK/pairs"
for i in $(seq "$REPEAT"); do
  echo "apns $(broadcast apns "apns-$i")" >> "$WORK/pairs"
  echo "web $(broadcast web "web-$i")" >> "$WORK/pairs"
  [ -z "$BASELINE" ] || echo "baseline $(broadcast web "web-baseline-$i" "$BASELINE")" >> "$WORK/pairs"
done

# Where a Web Push broadcast's client CPU goes, by symbol.
PERF=none
if perf record -o "$WORK/perf.data" -F 999 -g -- "$BIN" broadcast --config "$WORK/pushctl.json" --app web --id web-perf \
     --alert "Benchmark" --title "PushProvider" > /dev/null 2> "$WORK/perf.err"; then
  perf report -i "$WORK/perf.data" --no-children --sort dso,symbol --stdio 2> /dev/null | grep -E '^ +[0-9.]+%' > "$WORK/perf.txt" || true
  PERF=$WORK/perf.txt
  [ -z "${PERF_OUT:-}" ] || cp "$PERF" "$PERF_OUT"  # the whole by-symbol list, for a closer look
fi

# pywebpush on PY_N of the same subscriptions (the simulator records and decrypts them too).
head -n "$PY_N" "$WORK/subscriptions.jsonl" > "$WORK/py.jsonl"
REQUESTS_CA_BUNDLE="$WORK/certs/ca.pem" /usr/bin/time -f "%e %U %S" -o "$WORK/pytime" python3 - "$WORK/vapid.pem" "$WORK/py.jsonl" "$WORK/certs/ca.pem" <<'PY' > /dev/null
import json, sys
import requests
from pywebpush import webpush
pem, path, ca = sys.argv[1], sys.argv[2], sys.argv[3]
session = requests.Session(); session.verify = ca
for line in open(path):
    sub = json.loads(line)["subscription"]
    r = webpush(sub, data=json.dumps({"title": "PushProvider", "body": "Benchmark"}), vapid_private_key=pem,
                vapid_claims={"sub": "mailto:bench@example.com"}, ttl=2419200, requests_session=session)
    if r.status_code != 201: sys.exit(f"pywebpush: {r.status_code} {r.text[:200]}")
PY

# The floor RFC 8291 sets: every message needs a fresh ECDH key pair (a fixed-base P-256 multiplication, as fast as an
# ECDSA signature) and the shared secret (a variable-base one), measured by OpenSSL on this machine.
openssl speed -seconds 2 ecdhp256 ecdsap256 2> /dev/null > "$WORK/speed" || true
"$BIN" webpush bench-crypto --count 4000 > "$WORK/crypto" 2> /dev/null || : > "$WORK/crypto"
BASELINE_VERSION=$([ -z "$BASELINE" ] || "$BASELINE" --version | head -1)
python3 - "$N" "$PY_N" "$WORK/pairs" "$PERF" "$WORK/pytime" "$("$BIN" --version | head -1)" "$WORK/speed" "$WORK/crypto" "$BASELINE_VERSION" <<'PY' | tee "$WORK/section" | python3 bench/update_results.py "Web Push"
import re, statistics, sys
n, py_n, pairs, perf, pytime, version, speed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
crypto, baseline_version = sys.argv[8], sys.argv[9]
rows = [line.split() for line in open(pairs)]
runs = {"apns": [], "web": [], "baseline": []}
for kind, wall, user, sys_ in rows:
    runs[kind].append((n / float(wall), (float(user) + float(sys_)) / n * 1e6))
ratios = [w[1] / a[1] for a, w in zip(runs["apns"], runs["web"])]
print(f"`bash bench/bench_webpush.sh` (N={n}, {len(ratios)} interleaved pairs, one `pushctl serve` whose built-in simulator")
print("plays APNs and a Web Push service; the client is `pushctl broadcast`, release build; this box has 2 cores and is shared).")
print(f"Binary: {version}.\n")
print("| broadcast | rate (each run) | client CPU µs per notification (each run) |")
print("|---|---|---|")
labels = [("apns", "APNs, N tokens"), ("web", "Web Push, N subscriptions")]
if runs["baseline"]: labels.append(("baseline", f"Web Push, the same, client {baseline_version} (BASELINE)"))
for kind, label in labels:
    print(f"| {label} | " + ", ".join(f"{r:,.0f}/s" for r, _ in runs[kind]) + " | " + ", ".join(f"{u:.1f}" for _, u in runs[kind]) + " |")
print(f"\n**Web Push ÷ APNs client CPU per notification: {statistics.median(ratios):.2f}** (median of the pairwise ratios "
      + ", ".join(f"{r:.2f}" for r in ratios) + ").")
text = open(speed).read()
ecdh = re.search(r"ecdh \(nistp256\)\s+\S+\s+([0-9.]+)", text)
sign = re.search(r"ecdsa \(nistp256\)\s+\S+\s+\S+\s+([0-9.]+)", text)
floor = None
if ecdh and sign:
    floor = 1e6 / float(ecdh.group(1)) + 1e6 / float(sign.group(1))
    apns, web = statistics.median(u for _, u in runs["apns"]), statistics.median(u for _, u in runs["web"])
    excess = [(w[1] - a[1]) / floor for a, w in zip(runs["apns"], runs["web"])]
    over = [w[1] / (a[1] + floor) for a, w in zip(runs["apns"], runs["web"])]
    print(f"\nThe floor RFC 8291 sets (`openssl speed ecdhp256 ecdsap256` on this machine, right after): a fresh key pair per message "
          f"(≈ an ECDSA signature, {1e6 / float(sign.group(1)):.0f} µs) and its shared secret ({1e6 / float(ecdh.group(1)):.0f} µs): "
          f"**{floor:.0f} µs of P-256 per message** before any HTTP.")
    print(f"\n**Target: Web Push ≤ APNs + 1.2 × floor = {apns:.0f} + {1.2 * floor:.0f} = {apns + 1.2 * floor:.0f} µs; measured {web:.0f} µs "
          f"({'met' if statistics.median(excess) <= 1.2 else 'not met'}).** Per pair, Web Push − APNs in floors: "
          + ", ".join(f"{e:.2f}" for e in excess) + f" (median {statistics.median(excess):.2f}, target ≤ 1.2); Web Push ÷ (APNs + floor): "
          + ", ".join(f"{r:.2f}" for r in over) + f" (median {statistics.median(over):.2f}).")
rows = [line.rstrip("\n").split("\t") for line in open(crypto) if "\t" in line]
if rows:
    print("\nOne message's cryptography as swift-crypto 3.12 (BoringSSL inside) does it in this build (`pushctl webpush bench-crypto`, "
          "each operation timed 4,000 times in a row; µs, mean):\n")
    print("| operation | µs |")
    print("|---|---|")
    for name, us in rows: print(f"| {name} | {us} |")
if perf != "none":
    # By symbol within each shared object: BoringSSL (inside swift-crypto) and the Swift runtime are linked into pushctl.
    parts = [
        ("P-256 arithmetic (BoringSSL in swift-crypto: key pair, ECDH, key parsing)", r"^\s*\S+\s+pushctl\S*\s.*(p256|nistz256|ec_|bn_|ecp_|EC_|BN_|ECDH|fiat_)"),
        ("HKDF and SHA-256", r"^\s*\S+\s+pushctl\S*\s.*(sha256|SHA256|hmac|HMAC|hkdf|HKDF)"),
        ("AES-128-GCM", r"^\s*\S+\s+pushctl\S*\s.*(aes|gcm|GCM|AES)"),
        ("ECDSA (the VAPID JWT: once per origin)", r"^\s*\S+\s+pushctl\S*\s.*(ecdsa|ECDSA)"),
        ("TLS and HTTP/2 (libssl, libcrypto, libcurl, libnghttp2)", r"^\s*\S+\s+(libssl|libcrypto|libcurl|libnghttp2)"),
        ("SQLite (reading the subscriptions, writing outcomes)", r"^\s*\S+\s+libsqlite3|sqlite3"),
        ("the kernel (syscalls, network)", r"\[kernel|\[k\]"),
        ("malloc, free and the Swift runtime (retain/release, allocation)", r"libc\.so.*(malloc|free|cfree|_int_|memcpy|memmove)|swift_|_swift|libc\.so.*memset"),
    ]
    shares = {k: 0.0 for k, _ in parts}
    for line in open(perf):
        m = re.match(r"\s*([0-9.]+)%\s+(.*)", line)
        if not m: continue
        share, rest = float(m.group(1)), m.group(2)
        for k, pattern in parts:
            if re.search(pattern, line):
                shares[k] += share
                break
    print("\nWhere a Web Push broadcast's client CPU goes (`perf record -g`, self time by shared object and symbol, one more run):\n")
    print("| part | share of the client's CPU |" + (" µs per notification (× the median above) |" if runs["web"] else ""))
    print("|---|---|" + ("---|" if runs["web"] else ""))
    web = statistics.median(u for _, u in runs["web"])
    for k, v in list(shares.items()) + [("everything else (pushctl's own code: the engine, JSON, headers, …; libc)", max(0.0, 100 - sum(shares.values())))]:
        print(f"| {k} | {v:.1f}% | {v / 100 * web:.0f} |")
wall, user, sys_ = map(float, open(pytime).read().split())
print(f"\npywebpush 2.5.0 (PyPI), {py_n} of the same subscriptions, one `webpush()` call each over one reused requests.Session: "
      f"{py_n / wall:,.0f}/s, {(user + sys_) / py_n * 1e6:,.0f} µs CPU per notification; "
      f"pushctl's Web Push broadcast: {statistics.median(r for r, _ in runs['web']):,.0f}/s, "
      f"{statistics.median(u for _, u in runs['web']):.1f} µs.")
PY
echo "bench_webpush.sh: bench/RESULTS.md section \"Web Push\" updated"
