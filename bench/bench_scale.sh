#!/usr/bin/env bash
# One broadcast at scale (release build): N (default 10,000,000) random tokens imported into a SQLite registry
# on disk, then one `pushctl broadcast` to all of them through a certificate-mode `pushctl simulator` — and, for
# the memory-flatness target, a broadcast to SMALL (default 100,000) devices of another app in the same registry
# right before it. Records the import (time, rows/s, peak RSS), the broadcasts (duration, rate, accepted, CPU per
# notification, peak RSS) and the database's size after each step, and replaces the "## Broadcast at scale"
# section of bench/RESULTS.md. The two broadcasts run REPEAT (default 3) interleaved rounds, each with the system
# libcurl and then with a libcurl >= 8.5 (CURL8_DIR, else /opt/curl8, else .build/curl8, else fetched there from
# Debian's bookworm-backports when root; Tests/curl8/lib.sh), each with a fresh --id (every new broadcast sends
# to all devices again); rows are medians of their REPEAT runs, each column on its own (REPEAT=1: about 20 minutes
# for 10,000,000 devices on this box, REPEAT=3 about 50). It runs in a temporary directory under .build/ (the registry of 10M devices needs
# about a GB) and removes it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/.build/release/pushctl}
N=${N:-10000000}
SMALL=${SMALL:-100000}
REPEAT=${REPEAT:-3}
[ "$REPEAT" -ge 1 ] || { echo "bench_scale.sh: REPEAT must be at least 1" >&2; exit 1; }
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
find_libcurls
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

# pair LIB I [env VAR=…]: the small broadcast, then the big one; their JSON to small-LIB-I.json / big-LIB-I.json,
# /usr/bin/time -v to .time, the simulator's CPU ticks during the big one to big-LIB-I.sim, the database after it
# to big-LIB-I.bytes.
pair() {
  local lib=$1 i=$2 t0
  shift 2
  "$@" "$TIME" -v -o "$WORK/small-$lib-$i.time" "$BIN" broadcast --config "$WORK/pushctl.json" --app small \
    --id "bench-scale-small-$lib-$i" --alert "Benchmark digest" --sound default --json > "$WORK/small-$lib-$i.json" 2> "$WORK/small-$lib-$i.err"
  t0=$(sim_cpu_ticks)
  "$@" "$TIME" -v -o "$WORK/big-$lib-$i.time" "$BIN" broadcast --config "$WORK/pushctl.json" --app big \
    --id "bench-scale-$lib-$i" --alert "Benchmark digest" --sound default --json > "$WORK/big-$lib-$i.json" 2> "$WORK/big-$lib-$i.err"
  echo $(( $(sim_cpu_ticks) - t0 )) > "$WORK/big-$lib-$i.sim"
  db_bytes > "$WORK/big-$lib-$i.bytes"
  echo "libcurl $lib, round $i: $(cat "$WORK/big-$lib-$i.json")"
}
for i in $(seq "$REPEAT"); do
  pair sys "$i"
  if [ -n "$CURL8" ]; then pair 8 "$i" env "LD_LIBRARY_PATH=$CURL8"; fi
done
stop_simulator

export WORK N IMPORTED_BYTES SMALL REPEAT SYS_CURL CURL8 CURL8_VERSION CURL8_WHY
export HZ; HZ=$(getconf CLK_TCK)
python3 - <<'PY' | python3 bench/update_results.py "Broadcast at scale"
import datetime, json, os, re, statistics, sys
E = os.environ
work, n, imported, small, repeat, hz = E["WORK"], int(E["N"]), int(E["IMPORTED_BYTES"]), int(E["SMALL"]), int(E["REPEAT"]), int(E["HZ"])
version = {"sys": E["SYS_CURL"], "8": E["CURL8_VERSION"]}
libs = ["sys"] + (["8"] if E["CURL8"] else [])
def tv(name):
    t = open(f"{work}/{name}.time").read()
    get = lambda k: re.search(rf"{k}: ([0-9.:]+)", t).group(1)
    wall = get("Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)").split(":")
    seconds = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    cpu = float(get("User time \\(seconds\\)")) + float(get("System time \\(seconds\\)"))
    return seconds, cpu, int(get("Maximum resident set size \\(kbytes\\)")) / 1024
imp_s, imp_cpu, imp_rss = tv("import")
def run(kind, lib, i, count):
    seconds, cpu, rss = tv(f"{kind}-{lib}-{i}")
    j = json.loads(open(f"{work}/{kind}-{lib}-{i}.json").read())
    if j["accepted"] != count: sys.exit(f"bench_scale.sh: {kind}-{lib}-{i} accepted {j['accepted']} of {count}")
    sent = max(1, j["sentThisRun"])
    r = dict(seconds=seconds, rate=j["rate"], cpu=cpu / sent * 1e6, rss=rss, j=j)
    if kind == "big":
        r["sim"] = int(open(f"{work}/big-{lib}-{i}.sim").read()) / hz / sent * 1e6
        r["bytes"] = int(open(f"{work}/big-{lib}-{i}.bytes").read())
    return r
med = lambda runs, k: statistics.median(r[k] for r in runs)
per = lambda runs, k, fmt: "/".join(fmt.format(r[k]) for r in runs)
gb = lambda x: x / 1e9
rows, acceptance, states = [], [], []
for lib in libs:
    sm = [run("small", lib, i, small) for i in range(1, repeat + 1)]
    bg = [run("big", lib, i, n) for i in range(1, repeat + 1)]
    note = lambda runs: (f"median of {repeat}; per run: {per(runs, 'rate', '{:,.0f}')}/s, {per(runs, 'cpu', '{:.1f}')} µs, "
                         f"{per(runs, 'rss', '{:.1f}')} MB" if repeat > 1 else "one run")
    rows.append(f"| {version[lib]} | `pushctl broadcast` to another app's {small:,} devices, just before | {small:,} | {med(sm, 'seconds'):,.0f} s | "
                f"{med(sm, 'rate'):,.0f}/s | {med(sm, 'cpu'):.1f} µs | {med(sm, 'rss'):.1f} MB | — | {note(sm)} |")
    rows.append(f"| {version[lib]} | `pushctl broadcast` (one connection, window 500) | {n:,} | {med(bg, 'seconds'):,.0f} s | "
                f"{med(bg, 'rate'):,.0f}/s | {med(bg, 'cpu'):.1f} µs (simulator {med(bg, 'sim'):.1f} µs) | {med(bg, 'rss'):.1f} MB | "
                f"{gb(bg[-1]['bytes']):.2f} GB | {note(bg)} |")
    ratio = med(bg, "rss") / med(sm, "rss")
    acceptance.append(f"- libcurl {version[lib]}: peak RSS at {n:,} devices ÷ at {small:,}: **{ratio:.2f}** ({med(bg, 'rss'):.1f} vs "
                      f"{med(sm, 'rss'):.1f} MB{'; medians of ' + str(repeat) + ' runs' if repeat > 1 else ''}; target ≤ 1.15) — "
                      f"{'MET' if ratio <= 1.15 else 'NOT MET'}")
    for r in bg:
        b = r["j"]
        states.append(f"{version[lib]}: state {b['state']}, accepted {b['accepted']:,}, deferred {b['deferred']:,}, possibly duplicated "
                      f"{b['possiblyDuplicated']:,}, {len(b.get('workers', {}))} worker")
if not E["CURL8"]: acceptance.append(f"- libcurl 8: not measured — {E['CURL8_WHY']}")
last = max(int(open(f"{work}/big-{lib}-{repeat}.bytes").read()) for lib in libs)
basis = (f"the broadcasts are medians of {repeat} interleaved rounds (each round: the small and the big broadcast with the "
         "system libcurl, then with libcurl 8), each column on its own" if repeat > 1 else "one round (REPEAT=1) on each libcurl")
print(f"""Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `bash bench/bench_scale.sh` (release build; SQLite on
this box's disk; the simulator, pushctl and SQLite share the 2 cores; {basis}).

| libcurl | step | devices | duration | rate | CPU / device | peak RSS | database after | runs |
|---|---|---|---|---|---|---|---|---|
| — | `pushctl tokens import` (batches of 50,000, from stdin) | {n:,} | {imp_s:,.0f} s | {n / imp_s:,.0f} rows/s | {imp_cpu / n * 1e6:.1f} µs | {imp_rss:.1f} MB | {gb(imported):.2f} GB | one |
""" + "\n".join(rows) + f"""

Broadcasts: {"; ".join(states)}. Default configuration (the lean ledger): after every broadcast the database holds
the registry and a few rows per shard ({gb(last - imported) * 1000:+.1f} MB over all {len(states)} big broadcasts, WAL included).

Acceptance ("A broadcast writes per shard, not per device"):

""" + "\n".join(acceptance) + """

Commands (in a temporary directory under `.build/` holding `pushctl.json` and `certs/`):

```
pushctl simulator --certificates certs --port 0 --client-auth certificate
python3 -c '…N random tokens…' | /usr/bin/time -v pushctl tokens import --config pushctl.json --app big -
python3 -c '…SMALL random tokens…' | pushctl tokens import --config pushctl.json --app small -
/usr/bin/time -v pushctl broadcast --config pushctl.json --app small --id bench-scale-small-LIB-I --alert "Benchmark digest" --sound default --json
/usr/bin/time -v pushctl broadcast --config pushctl.json --app big --id bench-scale-LIB-I --alert "Benchmark digest" --sound default --json
# libcurl 8: the same two as `env LD_LIBRARY_PATH=DIR /usr/bin/time -v pushctl …`
```""")
PY
