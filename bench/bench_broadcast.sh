#!/usr/bin/env bash
# Sender/broadcast benchmark (release build), all against one `pushctl simulator` in certificate mode:
#   1. pushctl broadcast to N (default 1,000,000) registered devices over one connection: notifications/s,
#      CPU seconds and peak RSS; the same at SMALL (100,000) devices for the RSS comparison;
#   2. the same payload from curl's CLI (HTTP/2, -Z --parallel-max 1000, client certificate) and from aioapns,
#      with smaller counts (they are 10-100x slower; rates are what is compared);
#   3. bench/curl_ceiling.c: bare libcurl on the same simulator (what libcurl itself allows on this box);
#   4. h2load (the ceiling; it cannot present a client certificate, so against a --client-auth none simulator).
# Figures and command lines replace the "## Sender and broadcast" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/.build/release/pushctl
N=${N:-1000000}
SMALL=${SMALL:-100000}
CURL_N=${CURL_N:-100000}
AIO_N=${AIO_N:-20000}
[ -x "$BIN" ] || swift build -c release --product pushctl
WORK=$(mktemp -d)
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
TIME=/usr/bin/time

"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.bench > /dev/null
CERTS="$WORK/certs"
. bench/lib.sh

start_simulator --client-auth certificate
cat > "$WORK/pushctl.json" <<JSON
{ "database": "registry.sqlite",
  "simulator": { "host": "127.0.0.1", "port": $PORT, "certificates": "certs" },
  "apps": {
    "big":   { "topic": "com.example.bench", "endpoint": "simulator", "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" } },
    "small": { "topic": "com.example.bench", "endpoint": "simulator", "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" } } } }
JSON
python3 - "$WORK" "$N" "$SMALL" <<'PY'
import os, sys
work, n, small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for name, count in (("big", n), ("small", small)):
    with open(f"{work}/{name}.txt", "w") as f:
        for _ in range(count):
            f.write(os.urandom(32).hex() + "\n")
PY
"$BIN" tokens import --config "$WORK/pushctl.json" --app big "$WORK/big.txt" > /dev/null
"$BIN" tokens import --config "$WORK/pushctl.json" --app small "$WORK/small.txt" > /dev/null

run_broadcast() {  # app id → prints the JSON summary; time -v output in $WORK/$1.time
  $TIME -v -o "$WORK/$1.time" "$BIN" broadcast --config "$WORK/pushctl.json" --app "$1" --id "bench-$1" \
    --alert "Benchmark digest" --sound default --json 2> "$WORK/$1.err"
}
SMALL_JSON=$(run_broadcast small)
SIM_T0=$(sim_cpu_ticks)
BIG_JSON=$(run_broadcast big)
SIM_TICKS=$(( $(sim_cpu_ticks) - SIM_T0 ))
echo "$BIG_JSON"

# curl's CLI: the same payload, HTTP/2 multiplexed, client certificate.
PAYLOAD='{"aps":{"alert":"Benchmark digest","sound":"default"}}'
printf '%s' "$PAYLOAD" > "$WORK/payload.json"
head -n "$CURL_N" "$WORK/big.txt" | sed "s|^|url = \"https://127.0.0.1:$PORT/3/device/|; s|\$|\"|" > "$WORK/curl.cfg"
CURL_CMD="curl --http2 -Z --parallel-max 1000 -s --cert client.pem --key client.key --cacert ca.pem -X POST -H 'apns-topic: com.example.bench' -H 'apns-push-type: alert' --data-binary @payload.json -w '%{http_code}\\n' --config urls.cfg"
start=$(date +%s.%N)
curl --http2 -Z --parallel-max 1000 -s --cert "$WORK/certs/client.pem" --key "$WORK/certs/client.key" \
  --cacert "$WORK/certs/ca.pem" -X POST -H 'apns-topic: com.example.bench' -H 'apns-push-type: alert' \
  --data-binary @"$WORK/payload.json" -w '%{http_code}\n' --config "$WORK/curl.cfg" > "$WORK/curl.out" || true
end=$(date +%s.%N)
CURL_OK=$(grep -c '^200$' "$WORK/curl.out" || true)
CURL_RATE=$(python3 -c "print(round($CURL_N / ($end - $start)))")

# Bare libcurl, same simulator, same payload: the ceiling for any libcurl-based sender here.
cc -O2 -o "$WORK/curl_ceiling" bench/curl_ceiling.c -lcurl
CEILING=$("$WORK/curl_ceiling" "https://localhost:$PORT" "$WORK/certs" "$CURL_N" || true)
echo "$CEILING"

# aioapns (third-party Python client).
python3 bench/aioapns_check.py --port "$PORT" --certificates "$WORK/certs" --topic com.example.bench --count "$AIO_N" > "$WORK/aio.txt" || true
AIO_RATE=$(sed -n 's/.*(\([0-9,]*\)\/s).*/\1/p' "$WORK/aio.txt" | tr -d ,)
stop_simulator

# h2load: the ceiling, against a simulator without client authentication.
start_simulator --client-auth none
TOKEN=$(head -n 1 "$WORK/big.txt")
h2load -n "$N" -c 1 -m 100 -d "$WORK/payload.json" -H 'apns-topic: com.example.bench' \
  "https://127.0.0.1:$PORT/3/device/$TOKEN" > "$WORK/h2load.txt"
stop_simulator
H2_RATE=$(h2load_rate "$WORK/h2load.txt")

python3 - "$WORK" "$N" "$SMALL" "$CURL_N" "$CURL_OK" "$CURL_RATE" "$AIO_N" "${AIO_RATE:-0}" "${H2_RATE:-0}" "$BIG_JSON" "$SMALL_JSON" "$CURL_CMD" "$CEILING" "$SIM_TICKS" "$(getconf CLK_TCK)" "$(curl --version | head -1 | cut -d' ' -f2)" <<'PY' | python3 bench/update_results.py "Sender and broadcast"
import datetime, json, re, sys
work, n, small, curl_n, curl_ok, curl_rate, aio_n, aio_rate, h2_rate, big, small_json, curl_cmd, ceiling, sim_ticks, hz, curl_version = sys.argv[1:]
n, small = int(n), int(small)
def tv(name):
    t = open(f"{work}/{name}.time").read()
    get = lambda k: re.search(rf"{k}: ([0-9.:]+)", t).group(1)
    return float(get("User time \\(seconds\\)")) + float(get("System time \\(seconds\\)")), int(get("Maximum resident set size \\(kbytes\\)")) / 1024
big, small_json = json.loads(big), json.loads(small_json)
cpu_big, rss_big = tv("big")
cpu_small, rss_small = tv("small")
aio = open(f"{work}/aio.txt").read().strip()
rate = big["rate"]
m = re.search(r"in ([0-9.]+) s \(([0-9]+)/s\), CPU ([0-9.]+) s \(([0-9.]+) us", ceiling)
ceil_rate, ceil_us = (int(m.group(2)), float(m.group(4))) if m else (0, 0.0)
sim_us = int(sim_ticks) / int(hz) / max(1, big["sentThisRun"]) * 1e6
push_us = cpu_big / max(1, big["sentThisRun"]) * 1e6
budget = 2 / ((ceil_us + sim_us) / 1e6) if ceil_us else 0
print(f"""Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `bash bench/bench_broadcast.sh` (release build; the
simulator, the client and SQLite share the 2 cores). One simulator in certificate mode serves pushctl, curl and
aioapns in the same run; h2load, which cannot present a client certificate, runs against a `--client-auth none` one.

| client | notifications | rate (/s) | notes |
|---|---|---|---|
| `pushctl broadcast` ({n:,} registered devices, one connection) | {big['sentThisRun']:,} | {rate:,.0f} | accepted {big['accepted']:,}; CPU {cpu_big:.1f} s; peak RSS {rss_big:.1f} MB |
| `pushctl broadcast` ({int(small):,} devices) | {small_json['sentThisRun']:,} | {small_json['rate']:,.0f} | CPU {cpu_small:.1f} s; peak RSS {rss_small:.1f} MB |
| curl CLI {curl_version} | {int(curl_n):,} | {int(curl_rate):,} | {int(curl_ok):,} answered 200 |
| bare libcurl (`bench/curl_ceiling.c`) | {int(curl_n):,} | {ceil_rate:,} | no registry or bookkeeping; {ceil_us:.0f} µs CPU per request |
| aioapns | {int(aio_n):,} | {int(aio_rate or 0):,} | |
| h2load (ceiling) | {int(n):,} | {float(h2_rate):,.0f} | `-c 1 -m 100`, no client certificate |

- pushctl / curl: {rate / max(1, int(curl_rate)):.1f}× (target ≥ 1.5×); pushctl / aioapns: {rate / max(1, int(aio_rate or 1)):.1f}× (target ≥ 15×).
- Peak RSS {rss_small:.1f} MB at {int(small):,} devices vs {rss_big:.1f} MB at {int(n):,} ({(rss_big / rss_small - 1) * 100:+.1f}%; targets ≤ 64 MB and within 10%).
- CPU per notification in the {n:,} run: pushctl {push_us:.0f} µs (libcurl's share alone: {ceil_us:.0f} µs in the bare
  run), simulator {sim_us:.0f} µs. Both share 2 cores, so even bare libcurl cannot exceed 2 / ({ceil_us:.0f} + {sim_us:.0f}) µs
  ≈ {budget:,.0f}/s here, and one curl thread no more than 1 / {ceil_us:.0f} µs ≈ {1e6 / ceil_us if ceil_us else 0:,.0f}/s.

Commands (in a temporary directory holding `pushctl.json` and `certs/` from `pushctl cert make-dev`):

```
pushctl simulator --certificates certs --port 0 --client-auth certificate
pushctl tokens import --config pushctl.json --app big big.txt        # {n:,} random tokens
/usr/bin/time -v pushctl broadcast --config pushctl.json --app big --id bench-big --alert "Benchmark digest" --sound default --json
{curl_cmd}          # first {int(curl_n):,} tokens
python3 bench/aioapns_check.py --port PORT --certificates certs --topic com.example.bench --count {aio_n}
cc -O2 -o curl_ceiling bench/curl_ceiling.c -lcurl && ./curl_ceiling https://localhost:PORT certs {int(curl_n)}
h2load -n {n} -c 1 -m 100 -d payload.json -H 'apns-topic: com.example.bench' https://127.0.0.1:PORT/3/device/TOKEN
```

aioapns output:

```
{aio}
```""")
PY
