#!/usr/bin/env bash
# Scale-out on one box (release build): N devices (default 1,000,000) broadcast through the simulator by
# 1, 2 and 4 `pushctl worker` processes sharing one PostgreSQL database, against the single-process SQLite
# `pushctl broadcast` of the same run. Per run: notifications/s, CPU per notification of the workers and of
# the database server, and each worker's share (from the claim log). Everything shares this box's 2 cores,
# so the figure that carries over to several hosts is CPU per notification, not the rate.
# The box's speed drifts within a run, so the SQLite baseline runs first and last in each round and the mean is
# the reference. WORKER_COUNTS lists the PostgreSQL runs. REPEAT (default 3) interleaved rounds, each with the
# system libcurl and then with a libcurl >= 8.5 (CURL8_DIR, else /opt/curl8, else .build/curl8, else fetched there
# from Debian's bookworm-backports when root; Tests/curl8/lib.sh; every process that sends runs with
# LD_LIBRARY_PATH pointing at it); each row is the median of its REPEAT runs, each column on its own.
# Writes the "Scale-out workers" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/.build/release/pushctl
N=${N:-1000000}
WORKER_COUNTS=${WORKER_COUNTS:-"1 2 4"}
REPEAT=${REPEAT:-3}
die() { echo "bench_workers.sh: $*" >&2; exit 1; }
[ "$REPEAT" -ge 1 ] || die "REPEAT must be at least 1"
[ -x "$BIN" ] || make release
WORK=$(mktemp -d)
SIM_PID=; WORKER_PIDS=()
cleanup() {
  [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true
  for p in "${WORKER_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  pg_stop; rm -rf "$WORK"
}
trap cleanup EXIT
HZ=$(getconf CLK_TCK)
"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.bench > /dev/null
CERTS="$WORK/certs"
. bench/lib.sh
. bench/pg.sh
find_libcurls
# Sized as a database server is (the usual guidance is a quarter of RAM; 2 GB holds this run's working set),
# so backends do not evict dirty pages mid-run. Each PostgreSQL run starts right after a CHECKPOINT (not
# counted: every devices page then pays a full-page image in the WAL, as a registry older than the last
# checkpoint does in production) and ends with one (counted: the pages it dirtied are written).
PG_EXTRA="-c shared_buffers=${PG_SHARED_BUFFERS:-2GB} ${PG_EXTRA:-}"
pg_start
pg_createdb bench
start_simulator --client-auth certificate
psql_bench() { psql -X -q -t -A -h 127.0.0.1 -p "$PG_PORT" -U postgres -d bench "$@"; }

simulator_config "$WORK/sqlite.json" registry.sqlite com.example.bench bench
simulator_config "$WORK/pg.json" "$PG_URL_BASE/bench" com.example.bench bench
python3 - "$WORK/tokens.txt" "$N" <<'PY'
import os, sys
with open(sys.argv[1], "w") as f:
    for _ in range(int(sys.argv[2])):
        f.write(os.urandom(32).hex() + "\n")
PY
"$BIN" tokens import --config "$WORK/sqlite.json" --app bench "$WORK/tokens.txt" > /dev/null
"$BIN" tokens import --config "$WORK/pg.json" --app bench "$WORK/tokens.txt" > /dev/null
# What an operator does after a bulk load; otherwise the first run pays for autovacuum of the import.
psql_bench -c "VACUUM ANALYZE"

cpu_s() {  # user + system seconds of a /usr/bin/time -v file
  python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
g = lambda k: float(re.search(rf"{k}: ([0-9.]+)", t).group(1))
print(g("User time \\(seconds\\)") + g("System time \\(seconds\\)"))
PY
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# One round with one libcurl: the single-process SQLite baseline, then the PostgreSQL runs, then the baseline
# again. LIB names the round's files; ENV is the command prefix that selects the libcurl (empty or
# `env LD_LIBRARY_PATH=…`). Appends to $WORK/results: "LIB I sqlite FIRST|LAST CPU-seconds json" and
# "LIB I pg W accepted ms shards shares worker-ticks server-ticks detach-cpu wal".
sqlite_run() {  # sqlite_run ID: prints "CPU-seconds json"
  local json
  json=$($ENV /usr/bin/time -v -o "$WORK/$1.time" "$BIN" broadcast --config "$WORK/sqlite.json" --app bench \
    --id "$1" --alert "Benchmark digest" --json 2> "$WORK/$1.err") || { tail -n 5 "$WORK/$1.err" >&2; die "$1 failed"; }
  echo "$(cpu_s "$WORK/$1.time") $json"
}
round() {  # round LIB I
  local lib=$1 i=$2 first last w id facts wal lsn0 before after pg0 pg_ticks detach_cpu
  first=$(sqlite_run "bench-sqlite-$lib-$i-first")
  echo "libcurl $lib, round $i, sqlite (first): $first"
  echo "$lib $i sqlite first $first" >> "$WORK/results"
  # PostgreSQL: W workers started first and idle, then `broadcast --detach`; the run ends when the database
  # says the broadcast is completed. Worker CPU is read from /proc over exactly that span.
  for w in $WORKER_COUNTS; do
    WORKER_PIDS=()
    for k in $(seq "$w"); do
      $ENV "$BIN" worker --config "$WORK/pg.json" > "$WORK/worker-$lib-$i-$w.$k.log" 2>&1 &
      WORKER_PIDS+=($!)
    done
    sleep 2
    psql_bench -c CHECKPOINT
    lsn0=$(psql_bench -c "SELECT pg_current_wal_lsn()")
    before=0; for p in "${WORKER_PIDS[@]}"; do before=$(( before + $(ticks "$p") )); done
    pg0=$(pg_cpu_ticks)
    id=bench-$lib-$i-w$w
    /usr/bin/time -v -o "$WORK/detach-$id.time" "$BIN" broadcast --config "$WORK/pg.json" --app bench --id "$id" \
      --alert "Benchmark digest" --detach > /dev/null 2> "$WORK/detach-$id.err"
    until [ "$(psql_bench -c "SELECT state FROM broadcasts WHERE id = '$id'")" = completed ]; do
      for p in "${WORKER_PIDS[@]}"; do kill -0 "$p" 2>/dev/null || { cat "$WORK"/worker-$lib-$i-$w.*.log; exit 1; }; done
      sleep 1
    done
    wal=$(psql_bench -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn0')::bigint")
    psql_bench -c CHECKPOINT
    after=0; for p in "${WORKER_PIDS[@]}"; do after=$(( after + $(ticks "$p") )); done
    pg_ticks=$(( $(pg_cpu_ticks) - pg0 ))
    for p in "${WORKER_PIDS[@]}"; do kill -TERM "$p"; done
    for p in "${WORKER_PIDS[@]}"; do wait "$p" || true; done
    WORKER_PIDS=()
    facts=$(psql_bench -F ' ' -c "
      SELECT (SELECT coalesce(sum(devices), 0) FROM broadcast_counts WHERE broadcast_id = '$id' AND kind = 'accepted'),
             finished_ms - created_ms,
             (SELECT count(*) FROM broadcast_shards WHERE broadcast_id = '$id'),
             (SELECT string_agg(s::text, ',' ORDER BY s DESC) FROM
                (SELECT sum(sent) s FROM broadcast_claims WHERE broadcast_id = '$id' GROUP BY owner) x)
      FROM broadcasts WHERE id = '$id'")
    detach_cpu=$(cpu_s "$WORK/detach-$id.time")
    echo "$lib $i pg $w $facts $(( after - before )) $pg_ticks $detach_cpu $wal" >> "$WORK/results"
    echo "libcurl $lib, round $i, pg, $w workers: accepted, ms, shards, per-worker sent: $facts; worker ticks $(( after - before )), server ticks $pg_ticks, WAL $wal bytes"
  done
  last=$(sqlite_run "bench-sqlite-$lib-$i-last")
  echo "libcurl $lib, round $i, sqlite (last): $last"
  echo "$lib $i sqlite last $last" >> "$WORK/results"
}
: > "$WORK/results"
for i in $(seq "$REPEAT"); do
  ENV= round sys "$i"
  if [ -n "$CURL8" ]; then ENV="env LD_LIBRARY_PATH=$CURL8" round 8 "$i"; fi
done
stop_simulator

export WORK N HZ REPEAT WORKER_COUNTS SYS_CURL CURL8 CURL8_VERSION CURL8_WHY
export PGV; PGV=$(psql --version | cut -d' ' -f3)
python3 - <<'PY' | python3 bench/update_results.py "Scale-out workers"
import datetime, json, os, statistics
E = os.environ
work, n, hz, repeat, pgv = E["WORK"], int(E["N"]), int(E["HZ"]), int(E["REPEAT"]), E["PGV"]
version = {"sys": E["SYS_CURL"], "8": E["CURL8_VERSION"]}
libs = ["sys"] + (["8"] if E["CURL8"] else [])
sqlite, pg = {}, {}
for line in open(f"{work}/results"):
    lib, i, kind, rest = line.rstrip("\n").split(" ", 3)
    if kind == "sqlite":
        which, cpu, js = rest.split(" ", 2)
        j = json.loads(js)
        if j["accepted"] != n: raise SystemExit(f"bench_workers.sh: SQLite run {lib}/{i}/{which} accepted {j['accepted']} of {n}")
        sqlite.setdefault((lib, which), []).append(dict(rate=j["rate"], us=float(cpu) / max(1, j["sentThisRun"]) * 1e6,
                                                       accepted=j["accepted"]))
    else:
        w, accepted, ms, shards, shares, wticks, pticks, dcpu, wal = rest.split()
        accepted, ms = int(accepted), int(ms)
        if accepted != n: raise SystemExit(f"bench_workers.sh: PostgreSQL run {lib}/{i}/{w} workers accepted {accepted} of {n}")
        worker_us = (int(wticks) / hz + float(dcpu)) / accepted * 1e6
        server_us = int(pticks) / hz / accepted * 1e6
        pg.setdefault((lib, w), []).append(dict(rate=accepted / (ms / 1000), accepted=accepted, shards=shards,
            worker_us=worker_us, server_us=server_us, wal=int(wal) / accepted, total=worker_us + server_us,
            share=" / ".join(f"{int(x) / accepted:.0%}" for x in shares.split(","))))
med = lambda runs, k: statistics.median(r[k] for r in runs)
def per(runs, k, fmt): return "/".join(fmt.format(r[k]) for r in runs)
rows, acceptance, refs = [], [], []
for lib in libs:
    s1, s2 = sqlite[(lib, "first")], sqlite[(lib, "last")]
    sq_us = (med(s1, "us") + med(s2, "us")) / 2
    refs.append(f"{sq_us:.0f} µs with libcurl {version[lib]}")
    for label, runs in (("first", s1), ("last", s2)):
        us = med(runs, "us")
        note = f"per run: {per(runs, 'rate', '{:,.0f}')}/s, {per(runs, 'us', '{:.0f}')} µs" if repeat > 1 else "one run"
        rows.append(f"| {version[lib]} | SQLite, one `pushctl broadcast` ({label}) | {med(runs, 'rate'):,.0f}/s | {n:,} | {us:.0f} µs | "
                    f"(in-process) | — | {us:.0f} µs | {us / sq_us:.2f} | all | {note} |")
    for w in E["WORKER_COUNTS"].split():
        runs = pg[(lib, w)]
        total = med(runs, "total")
        note = (f"per run: {per(runs, 'rate', '{:,.0f}')}/s, workers {per(runs, 'worker_us', '{:.0f}')} µs, server "
                f"{per(runs, 'server_us', '{:.1f}')} µs, WAL {per(runs, 'wal', '{:.1f}')} B; shares {'; '.join(r['share'] for r in runs)}"
                if repeat > 1 else "one run")
        rows.append(f"| {version[lib]} | PostgreSQL, {w} `pushctl worker` ({runs[0]['shards']} shard{'s' if runs[0]['shards'] != '1' else ''}) | {med(runs, 'rate'):,.0f}/s | {n:,} | "
                    f"{med(runs, 'worker_us'):.0f} µs | {med(runs, 'server_us'):.1f} µs | {med(runs, 'wal'):.1f} B | {total:.0f} µs | "
                    f"{total / sq_us:.2f} | {runs[len(runs) // 2]['share']} | {note} |")
        wal_per, server_us = med(runs, "wal"), med(runs, "server_us")
        acceptance.append(f"- libcurl {version[lib]}, {w} worker{'s' if w != '1' else ''}: WAL **{wal_per:.1f} bytes** per notification "
                          f"(target ≤ 100) — {'MET' if wal_per <= 100 else 'NOT MET'}; database server CPU **{server_us:.1f} µs** per "
                          f"notification (target ≤ 10.3, a third of the 31 µs measured before the lean ledger) — "
                          f"{'MET' if server_us <= 31 / 3 else 'NOT MET'}")
if not E["CURL8"]: acceptance.append(f"- libcurl 8: not measured — {E['CURL8_WHY']}")
table = "\n".join(rows)
basis = (f"medians of {repeat} interleaved rounds (each round: SQLite, the PostgreSQL runs, SQLite again, with the system "
         "libcurl, then the same with libcurl 8), each column on its own" if repeat > 1 else "one round (REPEAT=1)")
print(f"""Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `bash bench/bench_workers.sh` (release build; PostgreSQL {pgv}
from Debian, fsync on; the simulator, the database server and every worker share this box's 2 cores, so CPU per
notification is the figure that carries over to several hosts; the rate here still grows with workers because one
worker is bound by its window of 500 and the commit round trip, not by CPU).
{n:,} devices, one broadcast per run; {basis}. × SQLite compares with the mean of the two SQLite rows of the same
libcurl ({"; ".join(refs)}). The simulator's own CPU is not counted.

| libcurl | run | notifications/s | accepted | pushctl CPU / notif. | database server CPU / notif. | WAL / notif. | total CPU / notif. | × SQLite | each worker's share | runs |
|---|---|---|---|---|---|---|---|---|---|---|
{table}

Acceptance ("A broadcast writes per shard, not per device"), from this run:

{chr(10).join(acceptance)}

Rate: accepted ÷ (broadcast finished − created, database clock). Worker CPU: utime + stime of every worker process
over the run (from /proc) plus the `broadcast --detach` process. Server CPU: the postmaster, its backends and
reaped children (autovacuum, the checkpointer and the polling `psql` included). WAL: `pg_wal_lsn_diff` of
`pg_current_wal_lsn()` from right after the run's starting `CHECKPOINT` to its completion. The import is followed by
`VACUUM ANALYZE`. The server runs with `shared_buffers=2GB`; each PostgreSQL run starts right after a
`CHECKPOINT` and ends with one (counted in the CPU: the pages it dirtied are written). Default configuration: the
lean ledger (`"deliveryLog": "failures"`): an accepted device writes nothing of its own; each commit of up to 200
outcomes updates its shard's checkpoint, its claim's count and a few counter rows.

Notes:
- Before the lean ledger (2026-11-23/26, same box) the server wrote a delivery-log row, an outcome row and the
  device's last-success time per notification: 1,476 bytes of WAL and 31 µs of server CPU per notification, so one
  database core capped the whole cluster near 30k notifications/s.
- With `shared_buffers=256MB` (what `bench_postgres.sh` uses) backends evicted dirty pages in the middle of the
  runs of the old ledger; give PostgreSQL enough shared buffers for the devices table and its indexes.
- The box drifts: the two SQLite runs of one round differ by up to 12%, so compare rows of one script run only.

Commands:

```
bash bench/bench_workers.sh           # N={n} WORKER_COUNTS="{E['WORKER_COUNTS']}" REPEAT={repeat}
/usr/bin/time -v pushctl broadcast --config sqlite.json --app bench --id bench-sqlite-LIB-I-first --alert "Benchmark digest" --json
pushctl worker --config pg.json &     # × W, then:
psql -c CHECKPOINT                    # before the run, and again at its end
pushctl broadcast --config pg.json --app bench --id bench-LIB-I-wW --alert "Benchmark digest" --detach
# libcurl 8: the broadcasts and workers run as `env LD_LIBRARY_PATH=DIR pushctl …`
```""")
PY
