#!/usr/bin/env bash
# UnifiedPush against Web Push, and one slow distributor beside fast ones, on one machine (release build).
# Two `pushctl simulator` processes play distributors: FAST (and, on the same port, a browsers' Web Push service) and
# SLOW (every push answered DELAY_MS late, default 1000). Apps in one configuration: `web` (N Web Push
# subscriptions minted on FAST), `up` (N UnifiedPush endpoints minted on FAST) and `mix` (M endpoints on FAST in
# channel `fast`, M / 4 on SLOW in channel `slow`); UnifiedPush endpoints are imported with --skip-discovery, and a
# sample of REG registrations (default 500) goes through `pushctl serve`'s API with its discovery, for its rate.
# Then REPEAT (default 3) interleaved rounds of `pushctl broadcast`:
# - `web` and `up`: client CPU µs per notification (utime+stime) and rate; UnifiedPush ÷ Web Push is the median of
#   the pairwise ratios (target ≤ 1.1, issue 59);
# - `mix --channel fast` (the fast distributor alone) and `mix` (with the slow one): when the fast distributor
#   received its last push of each (its record's receivedAt, from the broadcast's start); with ÷ without is the
#   median of the pairs (target ≤ 1.2: one slow distributor never holds the others back) — `mix` with `window` 500
#   (the engine's default for other services), `mixw` with the same endpoints and no window set (a UnifiedPush app's
#   default, 2,000): the engine's windows hold what a crash may resend, so a distributor answering late holds the
#   checkpoint and, once the ahead window (2 × window) is full, every other device.
# Replaces the "## UnifiedPush" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/.build/release/pushctl}
N=${N:-10000}
M=${M:-4000}
REG=${REG:-500}
DELAY_MS=${DELAY_MS:-1000}
REPEAT=${REPEAT:-3}
die() { echo "bench_unifiedpush.sh: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "BIN=$BIN is not an executable (make release)"
WORK=$(mktemp -d /tmp/pushprovider-bench-unifiedpush.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null; done; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
FAST=$(free_port); SLOW=$(free_port); API=$(free_port); SERVE_SIM=$(free_port)

"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.app > /dev/null
"$BIN" webpush key new --out "$WORK/vapid.pem" > "$WORK/vapid.pub"
UP='"unifiedpush": { "vapidKey": "vapid.pem", "subject": "mailto:bench@example.com", "exemptHosts": ["127.0.0.1"], "caFile": "certs/ca.pem" }'
cat > "$WORK/pushctl.json" <<JSON
{ "database": "registry.sqlite",
  "server": { "host": "127.0.0.1", "port": $API, "rateLimitPerSecond": 1000000, "rateLimitBurst": 1000000 },
  "simulator": { "host": "127.0.0.1", "port": $FAST, "certificates": "certs" },
  "apps": {
    "web": { "webpush": { "vapidKey": "vapid.pem", "subject": "mailto:bench@example.com",
                          "allowedHosts": ["127.0.0.1:$FAST"], "caFile": "certs/ca.pem" } },
    "up": { $UP },
    "mix": { $UP, "window": 500 },
    "mixw": { $UP },
    "reg": { $UP } } }
JSON
start_simulator() {  # PORT RECORD [flags…]
  local port=$1 record=$2; shift 2
  "$BIN" simulator --config "$WORK/pushctl.json" --port "$port" --client-auth either --record "$record" "$@" > "$WORK/sim-$port.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 300); do grep -q "listening on" "$WORK/sim-$port.log" && break; sleep 0.1; done
  grep -q "listening on" "$WORK/sim-$port.log" || { cat "$WORK/sim-$port.log"; die "the simulator on $port did not start"; }
}
start_simulator "$FAST" "$WORK/fast.jsonl"
start_simulator "$SLOW" "$WORK/slow.jsonl" --delay-ms "$DELAY_MS"

KEY=$(cat "$WORK/vapid.pub")
# Endpoints as import lines: {"subscription": {"endpoint", "keys"}, "channels": [CHANNEL]}.
mint_up() {  # PORT COUNT CHANNEL
  python3 Tests/unifiedpush/mint_endpoints.py 127.0.0.1 "$1" "$WORK/certs/ca.pem" "$KEY" "$2" 0 \
    | python3 -c 'import json, sys
for line in sys.stdin:
    e = json.loads(line); print(json.dumps({"subscription": {"endpoint": e["endpoint"], "keys": e["keys"]}, "channels": [sys.argv[1]]}))' "$3"
}
import_up() { "$BIN" tokens import --config "$WORK/pushctl.json" --app "$1" --service unifiedpush --skip-discovery - > /dev/null; }
python3 Tests/webpush/mint_subscriptions.py 127.0.0.1 "$FAST" "$WORK/certs/ca.pem" "$KEY" "$N" 0 \
  | python3 -c 'import json, sys
for line in sys.stdin: print(json.dumps({"subscription": json.loads(line)["subscription"]}))' \
  | "$BIN" tokens import --config "$WORK/pushctl.json" --app web --service webpush - > /dev/null
mint_up "$FAST" "$N" all | import_up up
mint_up "$FAST" "$M" fast > "$WORK/mix-fast.jsonl"
mint_up "$SLOW" $((M / 4)) slow > "$WORK/mix-slow.jsonl"
for app in mix mixw; do import_up "$app" < "$WORK/mix-fast.jsonl"; import_up "$app" < "$WORK/mix-slow.jsonl"; done
[ "$("$BIN" tokens count --config "$WORK/pushctl.json" --app up --service unifiedpush)" = "$N" ] || die "not every endpoint imported"

# REG registrations through the API, each with its discovery (GET on the endpoint), one connection, one at a time.
# serve runs a built-in simulator of its own: on another port, so the distributors keep theirs.
sed "s/\"port\": $FAST, \"certificates\"/\"port\": $SERVE_SIM, \"certificates\"/" "$WORK/pushctl.json" > "$WORK/serve.json"
"$BIN" serve --config "$WORK/serve.json" > "$WORK/serve.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do grep -q "^PushProvider is listening" "$WORK/serve.log" && break; sleep 0.1; done
grep -q "^PushProvider is listening" "$WORK/serve.log" || { cat "$WORK/serve.log"; die "serve did not start"; }
REGKEY=$(grep -A1 "App 'reg' has no API keys" "$WORK/serve.log" | tail -1 | tr -d ' ')
mint_up "$FAST" "$REG" none > "$WORK/reg.jsonl"
python3 - "$API" "$REGKEY" "$WORK/reg.jsonl" > "$WORK/regrate" <<'PY'
import http.client, json, sys, time
port, key, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
lines = open(path).read().splitlines()
start = time.monotonic()
for line in lines:
    body = json.dumps({"service": "unifiedpush", "subscription": json.loads(line)["subscription"]})
    c.request("POST", "/v1/apps/reg/devices", body=body, headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status not in (200, 201): sys.exit(f"registration answered {r.status}: {r.read()[:200]}")
print(len(lines) / (time.monotonic() - start))
PY

broadcast() {  # APP ID [flags…] → "wall user sys startMs"
  local app=$1 id=$2; shift 2
  local start; start=$(date +%s%3N)
  /usr/bin/time -f "%e %U %S" -o "$WORK/time" "$BIN" broadcast --config "$WORK/pushctl.json" --app "$app" --id "$id" \
    --alert "Benchmark" --title "PushProvider" "$@" > /dev/null 2> "$WORK/broadcast.err" || { cat "$WORK/broadcast.err"; die "broadcast $id failed"; }
  echo "$(cat "$WORK/time") $start"
}
: > "$WORK/rounds"
for i in $(seq "$REPEAT"); do
  echo "web web-$i $(broadcast web "web-$i")" >> "$WORK/rounds"
  echo "up up-$i $(broadcast up "up-$i")" >> "$WORK/rounds"
  echo "alone alone-$i $(broadcast mix "alone-$i" --channel fast)" >> "$WORK/rounds"
  echo "beside beside-$i $(broadcast mix "beside-$i")" >> "$WORK/rounds"
  echo "alonew alonew-$i $(broadcast mixw "alonew-$i" --channel fast)" >> "$WORK/rounds"
  echo "besidew besidew-$i $(broadcast mixw "besidew-$i")" >> "$WORK/rounds"
done
sleep 1  # the simulators flush their records once a second

python3 - "$N" "$M" "$DELAY_MS" "$WORK/rounds" "$WORK/fast.jsonl" "$WORK/regrate" "$("$BIN" --version | head -1)" <<'PY' | python3 bench/update_results.py "UnifiedPush"
import json, statistics, sys
n, m, delay, rounds, fast, regrate, version = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
last = {}
for line in open(fast):
    r = json.loads(line)
    if r.get("service") != "unifiedpush": continue
    tag = json.loads(r.get("plaintext") or "{}").get("tag")
    last[tag] = max(last.get(tag, 0), r.get("receivedAt", 0))
runs = {}
for line in open(rounds):
    kind, id_, wall, user, sys_, start = line.split()
    runs.setdefault(kind, []).append((id_, float(wall), float(user) + float(sys_), int(start)))
count = {"web": n, "up": n, "alone": m, "beside": m + m // 4, "alonew": m, "besidew": m + m // 4}
def cpu(kind): return [(c / count[kind]) * 1e6 for _, _, c, _ in runs[kind]]
def rate(kind): return [count[kind] / w for _, w, _, _ in runs[kind]]
ratios = [u / w for w, u in zip(cpu("web"), cpu("up"))]
fastdone = {k: [(last.get(id_, start) - start) / 1000 for id_, _, _, start in runs[k]] for k in ("alone", "beside", "alonew", "besidew")}
slow = [b / a for a, b in zip(fastdone["alone"], fastdone["beside"])]
sloww = [b / a for a, b in zip(fastdone["alonew"], fastdone["besidew"])]
print(f"`bash bench/bench_unifiedpush.sh` (N={n}, M={m}, {len(ratios)} interleaved rounds; two `pushctl simulator` distributors,")
print(f"one answering every push {delay} ms late; the client is `pushctl broadcast`, release build; this box has 2 cores and is shared).")
print(f"Binary: {version}.\n")
print("| broadcast | rate (each run) | client CPU µs per notification (each run) |")
print("|---|---|---|")
for kind, label in [("web", "Web Push, N subscriptions"), ("up", "UnifiedPush, N endpoints on one distributor")]:
    print(f"| {label} | " + ", ".join(f"{r:,.0f}/s" for r in rate(kind)) + " | " + ", ".join(f"{u:.1f}" for u in cpu(kind)) + " |")
print(f"\n**UnifiedPush ÷ Web Push client CPU per notification: {statistics.median(ratios):.2f}** (target ≤ 1.1; median of the pairwise "
      "ratios " + ", ".join(f"{r:.2f}" for r in ratios) + ").")
print(f"\nOne slow distributor beside a fast one (app `mix`: {m} endpoints on the fast distributor, {m // 4} on the slow one): "
      "when the fast distributor received its last push, from the broadcast's start, alone (`--channel fast`) and with the slow "
      "one's devices in the same broadcast:\n")
print("| round | window | fast alone | fast beside the slow | ratio | whole broadcast beside the slow |")
print("|---|---|---|---|---|---|")
for label, a_k, b_k in [("500 (set)", "alone", "beside"), ("2,000 (UnifiedPush's default)", "alonew", "besidew")]:
    for i, (a, b) in enumerate(zip(fastdone[a_k], fastdone[b_k]), 1):
        print(f"| {i} | {label} | {a:.2f} s | {b:.2f} s | {b / a:.2f} | {runs[b_k][i - 1][1]:.1f} s |")
print(f"\n**Fast distributor beside a slow one ÷ alone: {statistics.median(sloww):.2f} with a UnifiedPush app's default window "
      f"(2,000), {statistics.median(slow):.2f} with window 500** (target ≤ 1.2; medians of the rounds).")
print(f"\nRegistrations through `pushctl serve` with discovery (a GET on each endpoint first), one client connection, one at a "
      f"time: {float(open(regrate).read()):,.0f}/s.")
PY
echo "bench_unifiedpush.sh: bench/RESULTS.md section \"UnifiedPush\" updated"
