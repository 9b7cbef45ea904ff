#!/usr/bin/env bash
# One broadcast at scale (release build): N (default 10,000,000) random tokens imported into a SQLite registry
# on disk, then one `pushctl broadcast` to all of them through a certificate-mode `pushctl simulator` — and, for
# the memory-flatness target, a broadcast to SMALL (default 100,000) devices of another app in the same registry
# right before it. Records the import (time, rows/s, peak RSS), the broadcasts (duration, rate, accepted, CPU per
# notification, peak RSS) and the database's size after each step, and replaces the "## Broadcast at scale"
# section of bench/RESULTS.md. It runs in a temporary directory under .build/ (the registry of 10M devices needs
# about a GB) and removes it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/.build/release/pushctl}
N=${N:-10000000}
SMALL=${SMALL:-100000}
[ -x "$BIN" ] || make release
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench_scale.sh: $TIME (GNU time) is missing: make bench-deps" >&2; exit 1; }
mkdir -p .build
WORK=$(mktemp -d "$PWD/.build/bench-scale.XXXXXX")
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.bench > /dev/null
CERTS="$WORK/certs"
. bench/lib.sh
start_simulator --client-auth certificate
simulator_config "$WORK/pushctl.json" registry.sqlite com.example.bench big small
db_bytes() { du -cb "$WORK"/registry.sqlite* | tail -n 1 | cut -f1; }

# Tokens stream from a generator into `tokens import -` (no 650 MB token file).
python3 -c '
import os, sys
n = int(sys.argv[1]); out = sys.stdout
for _ in range(n // 1000):
    out.write("".join(os.urandom(32).hex() + "\n" for _ in range(1000)))
' "$N" | "$TIME" -v -o "$WORK/import.time" "$BIN" tokens import --config "$WORK/pushctl.json" --app big - > "$WORK/import.out"
COUNT=$("$BIN" tokens count --config "$WORK/pushctl.json" --app big)
[ "$COUNT" = "$N" ] || { echo "bench_scale.sh: registry holds $COUNT devices, expected $N" >&2; exit 1; }
python3 -c 'import os, sys; sys.stdout.write("".join(os.urandom(32).hex() + "\n" for _ in range(int(sys.argv[1]))))' "$SMALL" \
  | "$BIN" tokens import --config "$WORK/pushctl.json" --app small - > /dev/null
IMPORTED_BYTES=$(db_bytes)

"$TIME" -v -o "$WORK/small.time" "$BIN" broadcast --config "$WORK/pushctl.json" --app small --id bench-scale-small \
  --alert "Benchmark digest" --sound default --json > "$WORK/small.json" 2> "$WORK/small.err"

SIM_T0=$(sim_cpu_ticks)
"$TIME" -v -o "$WORK/broadcast.time" "$BIN" broadcast --config "$WORK/pushctl.json" --app big --id bench-scale \
  --alert "Benchmark digest" --sound default --json > "$WORK/broadcast.json" 2> "$WORK/broadcast.err"
SIM_TICKS=$(( $(sim_cpu_ticks) - SIM_T0 ))
AFTER_BYTES=$(db_bytes)
stop_simulator
cat "$WORK/broadcast.json"

python3 - "$WORK" "$N" "$IMPORTED_BYTES" "$AFTER_BYTES" "$SIM_TICKS" "$(getconf CLK_TCK)" "$SMALL" <<'PY' | python3 bench/update_results.py "Broadcast at scale"
import datetime, json, re, sys
work, n, imported, after, sim_ticks, hz, small = sys.argv[1:]
n, imported, after, small = int(n), int(imported), int(after), int(small)
def tv(name):
    t = open(f"{work}/{name}.time").read()
    get = lambda k: re.search(rf"{k}: ([0-9.:]+)", t).group(1)
    wall = get("Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)").split(":")
    seconds = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    cpu = float(get("User time \\(seconds\\)")) + float(get("System time \\(seconds\\)"))
    return seconds, cpu, int(get("Maximum resident set size \\(kbytes\\)")) / 1024
imp_s, imp_cpu, imp_rss = tv("import")
bc_s, bc_cpu, bc_rss = tv("broadcast")
sm_s, sm_cpu, sm_rss = tv("small")
b = json.loads(open(f"{work}/broadcast.json").read())
sb = json.loads(open(f"{work}/small.json").read())
if sb["accepted"] != small or b["accepted"] != n: sys.exit(f"bench_scale.sh: accepted {sb['accepted']} of {small}, {b['accepted']} of {n}")
ratio = bc_rss / sm_rss
sent = max(1, b["sentThisRun"])
sim_us = int(sim_ticks) / int(hz) / sent * 1e6
gb = lambda x: x / 1e9
print(f"""Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `bash bench/bench_scale.sh` (release build; SQLite on
this box's disk; the simulator, pushctl and SQLite share the 2 cores).

| step | devices | duration | rate | CPU / device | peak RSS | database after |
|---|---|---|---|---|---|---|
| `pushctl tokens import` (batches of 50,000, from stdin) | {n:,} | {imp_s:,.0f} s | {n / imp_s:,.0f} rows/s | {imp_cpu / n * 1e6:.1f} µs | {imp_rss:.1f} MB | {gb(imported):.2f} GB |
| `pushctl broadcast` to another app's {small:,} devices, just before | {sb['sentThisRun']:,} | {sm_s:,.0f} s | {sb['rate']:,.0f}/s | {sm_cpu / max(1, sb['sentThisRun']) * 1e6:.1f} µs | {sm_rss:.1f} MB | — |
| `pushctl broadcast` (one connection, window 500) | {b['sentThisRun']:,} | {bc_s:,.0f} s | {b['rate']:,.0f}/s | {bc_cpu / sent * 1e6:.1f} µs (simulator {sim_us:.1f} µs) | {bc_rss:.1f} MB | {gb(after):.2f} GB |

Broadcast: state {b['state']}, accepted {b['accepted']:,}, deferred {b['deferred']:,}, possibly duplicated
{b['possiblyDuplicated']:,}, {len(b.get('workers', {}))} worker. Default configuration (the lean ledger): the database after the broadcast
holds the registry and a few rows per shard ({gb(after - imported) * 1000:+.1f} MB over the broadcast, WAL included).

Acceptance ("A broadcast writes per shard, not per device"): peak RSS at {n:,} devices ÷ at {small:,}: **{ratio:.2f}**
({bc_rss:.1f} vs {sm_rss:.1f} MB; target ≤ 1.15) — {'MET' if ratio <= 1.15 else 'NOT MET'}.

Commands (in a temporary directory under `.build/` holding `pushctl.json` and `certs/`):

```
pushctl simulator --certificates certs --port 0 --client-auth certificate
python3 -c '…N random tokens…' | /usr/bin/time -v pushctl tokens import --config pushctl.json --app big -
python3 -c '…SMALL random tokens…' | pushctl tokens import --config pushctl.json --app small -
/usr/bin/time -v pushctl broadcast --config pushctl.json --app small --id bench-scale-small --alert "Benchmark digest" --sound default --json
/usr/bin/time -v pushctl broadcast --config pushctl.json --app big --id bench-scale --alert "Benchmark digest" --sound default --json
```""")
PY
