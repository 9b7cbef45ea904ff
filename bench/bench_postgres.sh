#!/usr/bin/env bash
# The same work on SQLite and on PostgreSQL, in one run (release build, everything on this box's 2 cores):
# import N random tokens, broadcast to them through the simulator (one pushctl process), and registrations
# over HTTP (wrk) with one `serve` on SQLite vs two `serve` instances on one PostgreSQL database.
# Writes the "PostgreSQL" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/.build/release/pushctl
N=${N:-200000}
SKIP_REG=${SKIP_REG:-0}
DURATION=${DURATION:-15}
[ -x "$BIN" ] || make release
WORK=$(mktemp -d)
SIM_PID=; S1=; S2=
cleanup() {
  [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true
  for p in $S1 $S2; do kill "$p" 2>/dev/null || true; done
  pg_stop; rm -rf "$WORK"
}
trap cleanup EXIT
TIME=/usr/bin/time
"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.bench > /dev/null
CERTS="$WORK/certs"
. bench/lib.sh
. bench/pg.sh
pg_start
pg_createdb bench
start_simulator --client-auth certificate

key=bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
hash=$(printf '%s' "$key" | sha256sum | cut -d' ' -f1)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
config() {  # config NAME DATABASE HTTP_PORT [ENDPOINT]
  cat > "$WORK/$1.json" <<JSON
{ "database": "$2",
  "server": { "host": "127.0.0.1", "port": $3, "rateLimitPerSecond": 1000000, "rateLimitBurst": 1000000, "admin": { "host": "127.0.0.1", "port": $3 } },
  "simulator": { "host": "127.0.0.1", "port": $PORT, "certificates": "certs" },
  "apps": { "bench": { "topic": "com.example.bench", "endpoint": "${4:-simulator}",
    "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" }, "registrationKeys": ["sha256:$hash"] } } }
JSON
}
P1=$(free_port); P2=$(free_port); P3=$(free_port)
config sqlite registry.sqlite "$P1"
config pg1 "$PG_URL_BASE/bench" "$P2"
config pg2 "$PG_URL_BASE/bench" "$P3"
python3 - "$WORK/tokens.txt" "$N" <<'PY'
import os, sys
with open(sys.argv[1], "w") as f:
    for _ in range(int(sys.argv[2])):
        f.write(os.urandom(32).hex() + "\n")
PY

declare -A IMPORT_S BCAST_JSON BCAST_CPU PG_TICKS
for backend in sqlite pg1; do
  t0=$(date +%s.%N)
  "$BIN" tokens import --config "$WORK/$backend.json" --app bench "$WORK/tokens.txt" > /dev/null
  IMPORT_S[$backend]=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
  pg0=$(pg_cpu_ticks)
  BCAST_JSON[$backend]=$($TIME -v -o "$WORK/$backend.time" "$BIN" broadcast --config "$WORK/$backend.json" --app bench \
    --id "bench-$backend" --alert "Benchmark digest" --json 2> "$WORK/$backend.err")
  PG_TICKS[$backend]=$(( $(pg_cpu_ticks) - pg0 ))
  BCAST_CPU[$backend]=$(python3 - "$WORK/$backend.time" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
g = lambda k: float(re.search(rf"{k}: ([0-9.]+)", t).group(1))
print(g("User time \\(seconds\\)") + g("System time \\(seconds\\)"))
PY
)
  echo "$backend: ${BCAST_JSON[$backend]}"
done
stop_simulator

# Registrations: one serve on SQLite (wrk -t2 -c50), then two serve instances on one PostgreSQL database
# (one wrk -t1 -c25 against each, at the same time).
serve() { LOG_LEVEL=warning "$BIN" serve --config "$WORK/$1.json" > "$WORK/$1.serve.out" 2>&1 & echo $!; }
wait_http() { for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/healthz" && return; sleep 0.1; done; }
# The servers only take registrations: endpoint production, so `serve` starts no built-in simulator.
config sqlite registry.sqlite "$P1" production
config pg1 "$PG_URL_BASE/bench" "$P2" production
config pg2 "$PG_URL_BASE/bench" "$P3" production
S1=$(serve sqlite); wait_http "$P1"
SQLITE_OUT=$(PUSHCTL_BENCH_KEY=$key wrk -t2 -c50 -d"${DURATION}s" --latency -s bench/register.lua "http://127.0.0.1:$P1" | grep '^BENCH')
kill "$S1"; wait "$S1" 2>/dev/null || true; S1=
S1=$(serve pg1); S2=$(serve pg2); wait_http "$P2"; wait_http "$P3"
pg0=$(pg_cpu_ticks)
PUSHCTL_BENCH_KEY=$key wrk -t1 -c25 -d"${DURATION}s" --latency -s bench/register.lua "http://127.0.0.1:$P2" | grep '^BENCH' > "$WORK/w1" &
w1=$!
PUSHCTL_BENCH_KEY=$key wrk -t1 -c25 -d"${DURATION}s" --latency -s bench/register.lua "http://127.0.0.1:$P3" | grep '^BENCH' > "$WORK/w2" &
w2=$!
wait $w1 $w2
REG_PG_TICKS=$(( $(pg_cpu_ticks) - pg0 ))
ROWS=$(psql -X -A -t -h 127.0.0.1 -p "$PG_PORT" -U postgres -d bench -c "select count(*) from devices where app = 'bench'")

python3 - "$N" "$(getconf CLK_TCK)" "${IMPORT_S[sqlite]}" "${IMPORT_S[pg1]}" "${BCAST_JSON[sqlite]}" "${BCAST_JSON[pg1]}" \
  "${BCAST_CPU[sqlite]}" "${BCAST_CPU[pg1]}" "${PG_TICKS[pg1]}" "$SQLITE_OUT" "$(cat "$WORK/w1")" "$(cat "$WORK/w2")" \
  "$REG_PG_TICKS" "$ROWS" "$DURATION" "$(psql --version | cut -d' ' -f3)" <<'PY' | python3 bench/update_results.py "PostgreSQL"
import datetime, json, re, sys
(n, hz, imp_sq, imp_pg, js_sq, js_pg, cpu_sq, cpu_pg, pg_ticks, wrk_sq, wrk1, wrk2, reg_ticks, rows, duration, pgv) = sys.argv[1:]
n, hz = int(n), int(hz)
sq, pg = json.loads(js_sq), json.loads(js_pg)
def w(line):
    d = dict(kv.split("=") for kv in line.split()[1:])
    return {k: float(v) for k, v in d.items()}
ws, w1, w2 = w(wrk_sq), w(wrk1), w(wrk2)
pg_us = int(pg_ticks) / hz / max(1, pg["sentThisRun"]) * 1e6
us = lambda cpu, j: float(cpu) / max(1, j["sentThisRun"]) * 1e6
reg_rps = w1["rps"] + w2["rps"]
reg_us = int(reg_ticks) / hz / max(1, w1["requests"] + w2["requests"]) * 1e6
print(f"""Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `bash bench/bench_postgres.sh` (release build; PostgreSQL {pgv}
from Debian with fsync on, the simulator, pushctl and wrk all share the 2 cores). One process per broadcast: shards
and `pushctl worker` are not built yet, so this is the single-process baseline the scale-out figures will be
compared with.

| work | SQLite | PostgreSQL |
|---|---|---|
| `pushctl tokens import` of {n:,} tokens | {float(imp_sq):.1f} s | {float(imp_pg):.1f} s |
| `pushctl broadcast` to {n:,} devices | {sq['rate']:,.0f}/s, accepted {sq['accepted']:,} | {pg['rate']:,.0f}/s, accepted {pg['accepted']:,} |
| pushctl CPU per notification | {us(cpu_sq, sq):.0f} µs | {us(cpu_pg, pg):.0f} µs |
| database server CPU per notification | (in-process) | {pg_us:.0f} µs |
| registrations over HTTP ({duration} s, 50 connections) | {ws['rps']:,.0f}/s, p99 {ws['p99_ms']:.1f} ms (one `serve`) | {reg_rps:,.0f}/s, p99 {max(w1['p99_ms'], w2['p99_ms']):.1f} ms (two `serve` on one database; {reg_us:.0f} µs server CPU per registration) |

After the registration run the PostgreSQL database held {int(rows):,} devices of the app ({n:,} imported + every 2xx).

Commands:

```
bash bench/bench_postgres.sh          # N={n} DURATION={duration}
pushctl tokens import --config C --app bench tokens.txt
/usr/bin/time -v pushctl broadcast --config C --app bench --id bench-BACKEND --alert "Benchmark digest" --json
LOG_LEVEL=warning pushctl serve --config C          # C: "database": "registry.sqlite" or "postgres://postgres@127.0.0.1:PORT/bench"
PUSHCTL_BENCH_KEY=… wrk -t2 -c50 -d{duration}s --latency -s bench/register.lua http://127.0.0.1:PORT            # SQLite
PUSHCTL_BENCH_KEY=… wrk -t1 -c25 -d{duration}s --latency -s bench/register.lua http://127.0.0.1:PORT1 &         # PostgreSQL,
PUSHCTL_BENCH_KEY=… wrk -t1 -c25 -d{duration}s --latency -s bench/register.lua http://127.0.0.1:PORT2           # both at once
```""")
PY
