#!/usr/bin/env bash
# Several HTTP/2 connections over a long round trip (release build): the simulator answers every request
# after DELAY_MS (default 100 ms, an emulated round trip to APNs), and one `pushctl broadcast` of N devices
# (default 100,000, SQLite) runs with `apps.ID.connections` 1, 2 and 4 (COUNTS) at the default window (500 per
# connection), with the system libcurl and with a libcurl >= 8.5 (CURL8_DIR, else /opt/curl8, else .build/curl8,
# else fetched there from Debian's bookworm-backports when root; Tests/curl8/lib.sh), REPEAT (default 3)
# interleaved rounds: each round runs every connection count on each libcurl, a fresh --id each time. Each row is
# the median of its REPEAT runs (every run in the notes). Over a long round trip one connection caps near
# window ÷ RTT; more connections send more until the CPU is the limit. Writes the "Connections over a long round
# trip" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/.build/release/pushctl
N=${N:-100000}
DELAY_MS=${DELAY_MS:-100}
COUNTS=${COUNTS:-"1 2 4"}
REPEAT=${REPEAT:-3}
die() { echo "bench_connections.sh: $*" >&2; exit 1; }
[ "$REPEAT" -ge 1 ] || die "REPEAT must be at least 1"
[ -x "$BIN" ] || make release
WORK=$(mktemp -d)
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.bench > /dev/null
CERTS="$WORK/certs"
. bench/lib.sh
find_libcurls
start_simulator --client-auth certificate --delay-ms "$DELAY_MS"

config() {  # config CONNECTIONS
  cat > "$WORK/c$1.json" <<JSON
{ "database": "registry.sqlite",
  "simulator": { "host": "127.0.0.1", "port": $PORT, "certificates": "certs" },
  "apps": { "bench": { "topic": "com.example.bench", "endpoint": "simulator", "connections": $1,
    "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" } } } }
JSON
}
python3 - "$WORK/tokens.txt" "$N" <<'PY'
import os, sys
with open(sys.argv[1], "w") as f:
    for _ in range(int(sys.argv[2])):
        f.write(os.urandom(32).hex() + "\n")
PY
for c in $COUNTS; do config "$c"; done
"$BIN" tokens import --config "$WORK/c$(echo $COUNTS | cut -d' ' -f1).json" --app bench "$WORK/tokens.txt" > /dev/null

# run LIB C I [env VAR=…]: one broadcast with C connections; its JSON summary to LIB-cC-I.json, its CPU seconds
# (utime + stime, /usr/bin/time -v) to LIB-cC-I.cpu.
run() {
  local lib=$1 c=$2 i=$3 name="$1-c$2-$3"
  shift 3
  "$@" /usr/bin/time -v -o "$WORK/$name.time" "$BIN" broadcast --config "$WORK/c$c.json" --app bench --id "bench-$name" \
    --alert "Benchmark digest" --json > "$WORK/$name.json" 2> "$WORK/$name.err" || { tail -n 5 "$WORK/$name.err" >&2; die "$name failed"; }
  python3 - "$WORK/$name.time" > "$WORK/$name.cpu" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
g = lambda k: float(re.search(rf"{k}: ([0-9.]+)", t).group(1))
print(g("User time \\(seconds\\)") + g("System time \\(seconds\\)"))
PY
  echo "libcurl $lib, connections $c, run $i: $(cat "$WORK/$name.json") (CPU $(cat "$WORK/$name.cpu") s)"
}
LIBS="sys"
[ -n "$CURL8" ] && LIBS="sys 8"
for i in $(seq "$REPEAT"); do
  for c in $COUNTS; do
    run sys "$c" "$i"
    [ -n "$CURL8" ] && run 8 "$c" "$i" env "LD_LIBRARY_PATH=$CURL8"
  done
done
stop_simulator

export WORK N DELAY_MS COUNTS REPEAT LIBS SYS_CURL CURL8 CURL8_VERSION CURL8_WHY
python3 - <<'PY' | python3 bench/update_results.py "Connections over a long round trip"
import datetime, json, os, statistics
E = os.environ
work, n, delay, repeat = E["WORK"], int(E["N"]), int(E["DELAY_MS"]), int(E["REPEAT"])
counts = E["COUNTS"].split()
version = {"sys": E["SYS_CURL"], "8": E["CURL8_VERSION"]}
cap = 500 * 1000 / max(1, delay)
def runs(lib, c):
    out = []
    for i in range(1, repeat + 1):
        j = json.load(open(f"{work}/{lib}-c{c}-{i}.json"))
        if j["accepted"] != n: raise SystemExit(f"bench_connections.sh: {lib}-c{c}-{i} accepted {j['accepted']} of {n}")
        out.append(dict(rate=j["rate"], cpu=float(open(f"{work}/{lib}-c{c}-{i}.cpu").read()) / max(1, j["sentThisRun"]) * 1e6))
    return out
rows, acc = [], []
for lib in E["LIBS"].split():
    base = None
    for c in counts:
        rs = runs(lib, c)
        rate, cpu = statistics.median(r["rate"] for r in rs), statistics.median(r["cpu"] for r in rs)
        base = base or rate
        per = "; per run: " + "/".join(f"{r['rate']:,.0f}" for r in rs) + "/s, " + "/".join(f"{r['cpu']:.0f}" for r in rs) + " µs"
        rows.append(f"| {version[lib]} | {c} | {500 * int(c):,} | {rate:,.0f}/s | {rate / base:.2f}× | {cpu:.0f} µs | {n:,} each | "
                    f"{'median of ' + str(repeat) if repeat > 1 else 'one run'}{per if repeat > 1 else ''} |")
        if c == "1":
            share = rate / cap
            acc.append(f"- libcurl {version[lib]}: one connection with the default window reaches **{share:.0%}** of window ÷ RTT "
                       f"(target ≥ 90%) — {'MET' if share >= 0.9 else 'NOT MET'} ({rate:,.0f}/s against {cap:,.0f}/s"
                       f"{'; median of ' + str(repeat) + ' runs' if repeat > 1 else ''})")
if not E["CURL8"]: acc.append(f"- libcurl 8: not measured — {E['CURL8_WHY']}")
basis = f"medians of {repeat} interleaved rounds (each round runs every row once)" if repeat > 1 else "one run each (REPEAT=1)"
print(f"""Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `bash bench/bench_connections.sh` (release build; the simulator
answers every request after {delay} ms, an emulated round trip to APNs; {n:,} devices on SQLite, one `pushctl broadcast`
per run, default window of 500 per connection; client and simulator share the 2 cores; {basis}, each column on its own).

| libcurl | `apps.ID.connections` | window | notifications/s | × 1 connection | pushctl CPU / notif. | accepted | runs |
|---|---|---|---|---|---|---|---|
""" + "\n".join(rows) + f"""

One connection is bound by its window: 500 in flight ÷ {delay} ms ≈ {cap:,.0f}/s at most. A slot comes back with APNs'
answer (answered notifications wait for their commit in a second window of the same size), so the link stays full.

Acceptance ("A broadcast writes per shard, not per device"):

""" + "\n".join(acc) + f"""

Commands:

```
bash bench/bench_connections.sh       # N={n} DELAY_MS={delay} COUNTS="{E['COUNTS']}" REPEAT={repeat}
pushctl simulator --certificates certs --port 0 --client-auth certificate --delay-ms {delay}
pushctl broadcast --config C --app bench --id bench-LIB-cN-I --alert "Benchmark digest" --json   # C: "connections": N; libcurl 8 with LD_LIBRARY_PATH=its directory
```""")
PY
