#!/usr/bin/env bash
# pushctl against bare libcurl over a round trip (release build): CPU per notification and rate. The simulator
# answers every request after each of DELAYS (default "0 50 100" ms, an emulated round trip to APNs); at each one,
# `pushctl broadcast` of N devices (default 30,000, SQLite) and bench/curl_ceiling.c (bare libcurl, in both its
# curl_multi_perform and its --socket-action mode) send with the same total in flight:
#   - one connection, window 500 (every delay);
#   - 2,000 in flight: pushctl `connections: 2` with `window: 1000` each, curl_ceiling window 2000 on 2 connections
#     (at 50 and 100 ms: a window of 500 cannot fill a long round trip).
# With the system libcurl and with a libcurl >= 8.5 (CURL8_DIR, else /opt/curl8, else .build/curl8, else fetched
# there from Debian's bookworm-backports when root; Tests/curl8/lib.sh), REPEAT (default 3) interleaved rounds:
# each round runs every row's three clients on each libcurl back to back, so a ratio compares runs made seconds
# apart on a box that may be shared. Each figure is the median of its REPEAT runs (every run in the notes).
# CPU is user + system time of the client process (/usr/bin/time); the simulator's is not counted.
# Writes the "Connections over a long round trip" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/.build/release/pushctl}
N=${N:-30000}
DELAYS=${DELAYS:-"0 50 100"}
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
cc -O2 -o "$WORK/curl_ceiling" bench/curl_ceiling.c -lcurl

config() {  # config CONNECTIONS WINDOW
  cat > "$WORK/c$1w$2.json" <<JSON
{ "database": "registry.sqlite",
  "simulator": { "host": "127.0.0.1", "port": $PORT, "certificates": "certs" },
  "apps": { "bench": { "topic": "com.example.bench", "endpoint": "simulator", "connections": $1, "window": $2,
    "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" } } } }
JSON
}
python3 - "$WORK/tokens.txt" "$N" <<'PY'
import os, sys
with open(sys.argv[1], "w") as f:
    for _ in range(int(sys.argv[2])):
        f.write(os.urandom(32).hex() + "\n")
PY

# cpu_of FILE: user + system seconds from /usr/bin/time -v.
cpu_of() {
  python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
g = lambda k: float(re.search(rf"{k}: ([0-9.]+)", t).group(1))
print(g("User time \\(seconds\\)") + g("System time \\(seconds\\)"))
PY
}

# run LIB DELAY ROW KIND I CONNECTIONS WINDOW [env VAR=…]: one client run; NAME.rate and NAME.cpu (seconds).
run() {
  local lib=$1 d=$2 row=$3 kind=$4 i=$5 c=$6 w=$7 name="$1-d$2-$3-$4-$5"
  shift 7
  local sim0
  sim0=$(sim_cpu_ticks)
  case $kind in
    pushctl)
      # Per thread: the transport threads (sender-apns) apart from the engine's and start-up's.
      python3 bench/threads.py "bench-$name" "$WORK/$name.threads" &
      local sampler=$!
      "$@" /usr/bin/time -v -o "$WORK/$name.time" "$BIN" broadcast --config "$WORK/c${c}w$w.json" --app bench \
        --id "bench-$name" --alert "Benchmark digest" --json > "$WORK/$name.out" 2> "$WORK/$name.err" \
        || { tail -n 5 "$WORK/$name.err" >&2; die "$name failed"; }
      python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); n=int(sys.argv[2]);
a=j["accepted"]; assert a == n, f"accepted {a} of {n}"; print(j["rate"])' "$WORK/$name.out" "$N" > "$WORK/$name.rate"
      wait "$sampler" || die "$name: no thread sample" ;;
    perform|socket-action)
      local flag=
      [ "$kind" = socket-action ] && flag=--socket-action
      "$@" /usr/bin/time -v -o "$WORK/$name.time" "$WORK/curl_ceiling" $flag "https://localhost:$PORT" "$CERTS" "$N" "$w" \
        "$(( w < 1000 ? w / 5 : 200 ))" "bench-$name" "$c" > "$WORK/$name.out" 2> "$WORK/$name.err" \
        || { cat "$WORK/$name.out" "$WORK/$name.err" >&2; die "$name failed"; }
      sed -n 's/.*in [0-9.]* s (\([0-9]*\)\/s).*/\1/p' "$WORK/$name.out" > "$WORK/$name.rate" ;;
  esac
  cpu_of "$WORK/$name.time" > "$WORK/$name.cpu"
  # The simulator's CPU during the run: with the client's, what one notification costs the 2 cores.
  echo "$(( $(sim_cpu_ticks) - sim0 )) $(getconf CLK_TCK)" | awk '{print $1 / $2}' > "$WORK/$name.sim"
  echo "libcurl $lib, ${d} ms, $row, $kind, run $i: $(cat "$WORK/$name.rate")/s, CPU $(cat "$WORK/$name.cpu") s, load $(cut -d' ' -f1 /proc/loadavg)"
}
LIBS="sys"
[ -n "$CURL8" ] && LIBS="sys 8"
ROWS=
for d in $DELAYS; do
  start_simulator --client-auth certificate --delay-ms "$d"
  config 1 500
  config 2 1000
  rows="c1w500"
  [ "$d" -gt 0 ] && rows="c1w500 c2w1000"
  [ -n "$ROWS" ] || "$BIN" tokens import --config "$WORK/c1w500.json" --app bench "$WORK/tokens.txt" > /dev/null
  ROWS="$ROWS $d:$rows"
  for i in $(seq "$REPEAT"); do
    for lib in $LIBS; do
      envs=()
      [ "$lib" = 8 ] && envs=(env "LD_LIBRARY_PATH=$CURL8")
      for row in $rows; do
        c=${row#c}; c=${c%w*}; w=${row#*w}
        # pushctl's window is per connection; curl_ceiling's is the total.
        run "$lib" "$d" "$row" pushctl "$i" "$c" "$w" "${envs[@]}"
        for kind in perform socket-action; do run "$lib" "$d" "$row" "$kind" "$i" "$c" "$(( w * c ))" "${envs[@]}"; done
      done
    done
  done
  stop_simulator
done

export WORK N REPEAT LIBS ROWS SYS_CURL CURL8 CURL8_VERSION CURL8_WHY
python3 - <<'PY' | python3 bench/update_results.py "Connections over a long round trip"
import datetime, os, statistics
E = os.environ
work, n, repeat = E["WORK"], int(E["N"]), int(E["REPEAT"])
version = {"sys": E["SYS_CURL"], "8": E["CURL8_VERSION"]}
def runs(lib, d, row, kind):
    out = []
    for i in range(1, repeat + 1):
        name = f"{work}/{lib}-d{d}-{row}-{kind}-{i}"
        rate = float(open(name + ".rate").read())
        out.append((rate, float(open(name + ".cpu").read()) / n * 1e6, float(open(name + ".sim").read()) / n * 1e6))
    return out
def med(rs): return statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs)
def sim(rs): return statistics.median(r[2] for r in rs)
def transport(lib, d, row):
    """pushctl's transport threads (sender-apns), µs per notification, median of its runs."""
    out = []
    for i in range(1, repeat + 1):
        lines = open(f"{work}/{lib}-d{d}-{row}-pushctl-{i}.threads").read().split("\n")
        out.append(sum(float(l.split("\t")[1]) for l in lines if l.startswith("sender-apns")) / n * 1e6)
    return statistics.median(out)
cores = os.cpu_count()
rows, acc, notes, budget = [], [], [], []
specs = []  # (delay, row): ROWS is "0:c1w500 50:c1w500 c2w1000 …", each delay's rows after it
for tok in E["ROWS"].split():
    if ":" in tok:
        d, row = tok.split(":"); specs.append((int(d), row))
    else:
        specs.append((specs[-1][0], tok))
for lib in E["LIBS"].split():
    for d, row in specs:
        c, w = int(row[1:row.index("w")]), int(row[row.index("w") + 1:])
        inflight = c * w
        p, b, s = runs(lib, d, row, "pushctl"), runs(lib, d, row, "perform"), runs(lib, d, row, "socket-action")
        (pr, pc), (br, bc), (sr, sc) = med(p), med(b), med(s)
        cap = inflight * 1000 / d if d else None
        share = f"{pr / cap:.0%}" if cap else "—"
        # The rate the box's cores allow when client and simulator share them: cores ÷ (client + simulator CPU
        # per notification). At 100 ms with 2,000 in flight the round trip alone allows 20,000/s.
        ps = sim(p)
        allow = cores * 1e6 / (pc + ps)
        pt = transport(lib, d, row)
        budget.append(f"| {version[lib]} | {d} ms | {c} × {w:,} | {pc:.1f} µs | {pt:.1f} µs ({pt / sc:.2f}×) | {ps:.1f} µs | {allow:,.0f}/s | "
                      + (f"{cap:,.0f}/s | {pr / min(cap, allow):.0%} |" if cap else f"— | {pr / allow:.0%} |"))
        rows.append(f"| {version[lib]} | {d} ms | {c} × {w:,} | {pr:,.0f}/s, {pc:.1f} µs | {br:,.0f}/s, {bc:.1f} µs | "
                    f"{sr:,.0f}/s, {sc:.1f} µs | **{pc / bc:.2f}×** | {pr / br:.2f}× | {share} |")
        notes.append(f"- {version[lib]}, {d} ms, {c} × {w}: pushctl " + ", ".join(f"{r:,.0f}/s {u:.1f} µs" for r, u, _ in p)
                     + "; perform " + ", ".join(f"{r:,.0f}/s {u:.1f} µs" for r, u, _ in b)
                     + "; socket-action " + ", ".join(f"{r:,.0f}/s {u:.1f} µs" for r, u, _ in s))
        ok = lambda cond: "MET" if cond else "NOT MET"
        if d == 100 and inflight == 2000:
            acc.append(f"- {version[lib]}, 100 ms, 2,000 in flight: CPU {pc / bc:.2f}× bare libcurl (target ≤ 1.0×) — {ok(pc <= bc)}; "
                       f"{pr / cap:.0%} of in-flight ÷ RTT (target ≥ 90%) — {ok(pr >= 0.9 * cap)}")
        if d == 100 and inflight == 500:
            acc.append(f"- {version[lib]}, 100 ms, one connection, window 500: CPU {pc / bc:.2f}× (target ≤ 1.2×) — {ok(pc <= 1.2 * bc)}")
        if d == 0:
            acc.append(f"- {version[lib]}, 0 ms, window 500: CPU {pc / bc:.2f}× (target ≤ 1.2×) — {ok(pc <= 1.2 * bc)}; "
                       f"rate {pr / br:.2f}× (target ≥ 0.9×) — {ok(pr >= 0.9 * br)}")
if not E["CURL8"]: acc.append(f"- libcurl 8: not measured — {E['CURL8_WHY']}")
basis = f"medians of {repeat} interleaved rounds (each round runs every row's three clients back to back)" if repeat > 1 else "one run each (REPEAT=1)"
print(f"""Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `bash bench/bench_connections.sh` (release build; the simulator
answers every request after the delay, an emulated round trip to APNs; {n:,} devices on SQLite, one `pushctl broadcast`
per run against `bench/curl_ceiling.c` — bare libcurl, one process, the same headers — with the same total in flight;
CPU per notification is the client process's user + system time ÷ {n:,}; client and simulator share the 2 cores;
{basis}).

| libcurl | delay | in flight (connections × window) | pushctl | bare libcurl, perform | bare libcurl, socket-action | pushctl CPU ÷ perform | pushctl rate ÷ perform | pushctl ÷ (in flight ÷ RTT) |
|---|---|---|---|---|---|---|---|---|
""" + "\n".join(rows) + f"""

What the box allows: client and simulator share its {cores} cores, so no client can send faster than cores ÷ (its
CPU per notification + the simulator's). pushctl's runs (medians):

| libcurl | delay | in flight | pushctl CPU | its transport threads (÷ bare socket-action) | simulator CPU | the cores allow | the round trip allows | pushctl ÷ the lower |
|---|---|---|---|---|---|---|---|---|
""" + "\n".join(budget) + """

Acceptance (issue 41):

""" + "\n".join(acc) + """

Every run (rate, CPU per notification), in round order:

""" + "\n".join(notes) + f"""

Commands:

```
bash bench/bench_connections.sh       # N={n} DELAYS="{' '.join(sorted({str(d) for d, _ in specs}, key=int))}" REPEAT={repeat}
pushctl simulator --certificates certs --port 0 --client-auth certificate --delay-ms D
pushctl broadcast --config C --app bench --id ID --alert "Benchmark digest" --json    # C: "connections": 1, "window": 500 or "connections": 2, "window": 1000
curl_ceiling [--socket-action] https://localhost:PORT certs {n} 500|2000 100|200 ID 1|2   # bench/curl_ceiling.c; libcurl 8 with LD_LIBRARY_PATH=its directory
```""")
PY
