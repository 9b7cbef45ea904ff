#!/usr/bin/env bash
# Audiences and installation fields (release build), one script run, medians of 3 interleaved runs:
#  - a broadcast to a 1,000,000-device registry filtered by an audience to 500,000 (`--where 'appVersion>=2.3'`:
#    half the devices are on 2.10, half on 2.2 — version order, not text order) against an unfiltered broadcast to
#    another app's 500,000 devices in the same registry; target: the filtered rate within 15% of the unfiltered;
#  - registrations with every installation field (installation, user, timeZone, locale, appVersion, osVersion,
#    tags) against registrations with a token only (`tokens bench-register --batch 100`: registerBatch, the
#    server's group commit); target: within 15%.
# Replaces the "## Audiences" section of bench/RESULTS.md. Runs in a temporary directory under .build/.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/.build/release/pushctl}
N=${N:-1000000}
REG=${REG:-30000}
[ -x "$BIN" ] || make release
mkdir -p .build
WORK=$(mktemp -d "$PWD/.build/bench-audience.XXXXXX")
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.bench > /dev/null
CERTS="$WORK/certs"
. bench/lib.sh
start_simulator --client-auth certificate
simulator_config "$WORK/pushctl.json" registry.sqlite com.example.bench big half reg
CONFIG="$WORK/pushctl.json"

# 1M devices with installation fields (JSON lines, every field; appVersion 2.10 on even lines, 2.2 on odd ones),
# and 500k token-only devices of another app.
audience_jsonl "$N" "$WORK/big.jsonl"
IMPORT_T0=$(date +%s.%N)
"$BIN" tokens import --config "$CONFIG" --app big --format jsonl "$WORK/big.jsonl" > /dev/null
IMPORT_S=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$IMPORT_T0" "$(date +%s.%N)")
rm -f "$WORK/big.jsonl"
python3 -c 'import os, sys; sys.stdout.write("".join(os.urandom(32).hex() + "\n" for _ in range(int(sys.argv[1]))))' $((N / 2)) \
  | "$BIN" tokens import --config "$CONFIG" --app half - > /dev/null
FILTERED=$("$BIN" tokens count --config "$CONFIG" --app big --where 'appVersion>=2.3')
[ "$FILTERED" = "$((N / 2))" ] || { echo "bench_audience.sh: the audience holds $FILTERED devices, expected $((N / 2))" >&2; exit 1; }

: > "$WORK/runs.jsonl"
for run in 1 2 3; do
  "$BIN" broadcast --config "$CONFIG" --app big --id "filtered-$run" --where 'appVersion>=2.3' --alert "Benchmark" --json \
    2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({"kind":"filtered","rate":d["rate"],"sent":d["sentThisRun"],"accepted":d["accepted"]}))' >> "$WORK/runs.jsonl"
  "$BIN" broadcast --config "$CONFIG" --app half --id "unfiltered-$run" --alert "Benchmark" --json \
    2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({"kind":"unfiltered","rate":d["rate"],"sent":d["sentThisRun"],"accepted":d["accepted"]}))' >> "$WORK/runs.jsonl"
  "$BIN" tokens bench-register --config "$CONFIG" --app reg --count "$REG" --batch 100 \
    | sed 's/^/token-only /' >> "$WORK/register.txt"
  "$BIN" tokens bench-register --config "$CONFIG" --app reg --count "$REG" --batch 100 --with-fields \
    | sed 's/^/fields /' >> "$WORK/register.txt"
done
stop_simulator

python3 - "$WORK" "$N" "$REG" "$IMPORT_S" <<'PY' | python3 bench/update_results.py "Audiences"
import datetime, json, re, statistics, sys
work, n, reg, import_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
runs = [json.loads(line) for line in open(f"{work}/runs.jsonl")]
def rates(kind): return [r["rate"] for r in runs if r["kind"] == kind]
for r in runs:
    if r["accepted"] != n // 2 or r["sent"] != n // 2:
        sys.exit(f"bench_audience.sh: a run sent {r['sent']} and accepted {r['accepted']} of {n // 2}: {r}")
filtered, unfiltered = rates("filtered"), rates("unfiltered")
f_med, u_med = statistics.median(filtered), statistics.median(unfiltered)
regs = {"token-only": [], "fields": []}
for line in open(f"{work}/register.txt"):
    kind, rest = line.split(" ", 1)
    regs[kind].append(float(re.search(r"rate=([0-9.]+)", rest).group(1)))
t_med, w_med = statistics.median(regs["token-only"]), statistics.median(regs["fields"])
ratio_b, ratio_r = f_med / u_med, w_med / t_med
ok = lambda r: "MET" if r >= 0.85 else "NOT MET"
fmt = lambda xs: ", ".join(f"{x:,.0f}" for x in xs)
print(f"""Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `bash bench/bench_audience.sh` (release build; SQLite on this
box's disk; the simulator, pushctl and SQLite share the 2 cores). Medians of 3 runs, each kind run in turn
(filtered, unfiltered, registrations without and with fields, three times).

| benchmark | runs | median | target |
|---|---|---|---|
| broadcast to an audience: `--where 'appVersion>=2.3'` over {n:,} devices (every installation field set), {n // 2:,} match | {fmt(filtered)}/s | **{f_med:,.0f}/s** | — |
| unfiltered broadcast to another app's {n // 2:,} devices | {fmt(unfiltered)}/s | **{u_med:,.0f}/s** | — |
| filtered ÷ unfiltered | | **{ratio_b:.2f}** | ≥ 0.85 — {ok(ratio_b)} |
| registerBatch, 100 per call, token only ({reg:,} per run) | {fmt(regs['token-only'])}/s | **{t_med:,.0f}/s** | — |
| the same with every installation field | {fmt(regs['fields'])}/s | **{w_med:,.0f}/s** | — |
| with fields ÷ token only | | **{ratio_r:.2f}** | ≥ 0.85 — {ok(ratio_r)} |

Importing the {n:,} devices with every field (`tokens import --format jsonl`, registerBatch transactions of 10,000)
took {import_s:,.0f} s ({n / import_s:,.0f} rows/s). The filtered broadcast reads the app's devices in key order and
checks the clause per row (`app_version_key >= '12.13'`), so it reads twice the devices it sends; reading is a small
part of a notification's cost next to sending it.

Commands (in a temporary directory under `.build/` holding `pushctl.json` and `certs/`):

```
pushctl simulator --certificates certs --port 0 --client-auth certificate
pushctl tokens import --config pushctl.json --app big --format jsonl big.jsonl   # {n:,} registrations with every field
python3 -c '…{n // 2:,} random tokens…' | pushctl tokens import --config pushctl.json --app half -
# three times, in this order:
pushctl broadcast --config pushctl.json --app big --id filtered-N --where 'appVersion>=2.3' --alert Benchmark --json
pushctl broadcast --config pushctl.json --app half --id unfiltered-N --alert Benchmark --json
pushctl tokens bench-register --config pushctl.json --app reg --count {reg} --batch 100
pushctl tokens bench-register --config pushctl.json --app reg --count {reg} --batch 100 --with-fields
```""")
PY
