#!/usr/bin/env bash
# Sender at libcurl's floor (release build): every client side by side on ONE `pushctl simulator
# --client-auth certificate`, in this order:
#   1. with the system libcurl, REPEAT (default 3) interleaved pairs: `pushctl broadcast` (default configuration:
#      the lean ledger, `"deliveryLog": "failures"`) to the SMALL (default 100,000) registered devices of one app
#      (a fresh --id each time: each new broadcast sends to every device again), then the same broadcast under
#      `"deliveryLog": "all"` (a delivery-log row per accepted notification, the opt-in), then bare libcurl
#      (bench/curl_ceiling.c, cc -O2, the same request headers: apns-id, collapse id, expiration, …), SMALL
#      requests; pushctl, pushctl with the full log, bare, …;
#   2. with a libcurl >= 8.5 (CURL8_DIR, else /opt/curl8, else .build/curl8, else fetched there from Debian's
#      bookworm-backports when root; Tests/curl8/lib.sh): the same REPEAT interleaved pairs, both clients run
#      with LD_LIBRARY_PATH pointing at it;
#   3. pushctl broadcast to N (default 1,000,000) devices of another app, once (system libcurl), with the SQLite
#      file's growth over it (checkpointed with `PRAGMA wal_checkpoint(TRUNCATE)` before and after);
#   4. curl's CLI (HTTP/2, -Z, client certificate; CURL_N, default 100,000) and aioapns (AIO_N, default 20,000);
#   5. cold start: `pushctl send` to one device vs curl's CLI sending the same notification, COLD_RUNS
#      (default 15) fresh processes each, median wall-clock ms.
# The box drifts between minutes, so the pushctl-vs-bare-libcurl ratios come from the medians of the REPEAT
# interleaved runs of each client (every run's figures are printed too), not from one run of each.
# Then h2load (`-c 1 -m 100`, N requests, the median of H2_RUNS=3 runs, each on a fresh `--client-auth none`
# simulator: h2load cannot present a client certificate).
# Every row: notifications/s, client CPU µs per notification (utime+stime from /usr/bin/time -v), simulator CPU
# µs per notification (its /proc/PID/stat ticks around that client's run) and peak RSS. Prints the acceptance
# ratios of "A broadcast writes per shard, not per device" (and, no longer targets, the earlier ones) and replaces
# the "## Sender and broadcast" section of bench/RESULTS.md.
# (The 1-vs-4-connections item is bench/bench_connections.sh's.)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/.build/release/pushctl}
N=${N:-1000000}
SMALL=${SMALL:-100000}
CURL_N=${CURL_N:-100000}
AIO_N=${AIO_N:-20000}
COLD_RUNS=${COLD_RUNS:-15}
H2_RUNS=${H2_RUNS:-3}
REPEAT=${REPEAT:-3}
die() { echo "bench_sender.sh: $*" >&2; exit 1; }
if [ ! -x "$BIN" ]; then
  [ "$BIN" = "$PWD/.build/release/pushctl" ] || die "BIN=$BIN is not an executable"
  make release
fi
[ "$CURL_N" -le "$N" ] || die "CURL_N ($CURL_N) must not exceed N ($N): curl sends to the first CURL_N registered tokens"
[ "$COLD_RUNS" -ge 1 ] && [ "$H2_RUNS" -ge 1 ] && [ "$REPEAT" -ge 1 ] || die "COLD_RUNS, H2_RUNS and REPEAT must be at least 1"
TIME=/usr/bin/time
[ -x "$TIME" ] || die "$TIME (GNU time) is missing: make bench-deps"
for tool in h2load curl cc python3 sqlite3; do command -v "$tool" > /dev/null || die "$tool is missing: make bench-deps"; done
WORK=$(mktemp -d)
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
HZ=$(getconf CLK_TCK)

"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.bench > /dev/null
CERTS="$WORK/certs"
. bench/lib.sh

# thread_ticks PID OUT: until PID exits, reads the CPU ticks (utime + stime) of each of its threads every 50 ms, then
# writes each thread's last reading to OUT as "TID NAME TICKS" (a thread that ends loses at most its last 50 ms).
thread_ticks() {
  local pid=$1 out=$2
  : > "$out.all"
  while kill -0 "$pid" 2>/dev/null; do
    awk '{ n = $2; gsub(/[()]/, "", n); print $1, n, $14 + $15 }' /proc/"$pid"/task/*/stat >> "$out.all" 2>/dev/null || true
    sleep 0.05
  done
  awk '{ last[$1] = $2 " " $3 } END { for (t in last) print t, last[t] }' "$out.all" > "$out"
}

# timed NAME CMD...: runs CMD under /usr/bin/time -v ($WORK/NAME.time), stdout to NAME.out, stderr to NAME.err, the
# command line (NUL-separated) to NAME.cmd, wall seconds to NAME.wall and the simulator's CPU ticks during the
# run to NAME.sim; with THREADS=1, each thread's CPU ticks to NAME.threads (thread_ticks). Dies, showing its output,
# when CMD fails or the simulator is gone.
timed() {
  local name=$1 rc=0 t0 w0 w1 tpid cpid
  shift
  kill -0 "$SIM_PID" 2>/dev/null || die "the simulator is gone before '$name' ($(tail -n 3 "$WORK/sim.log"))"
  printf '%s\0' "$@" > "$WORK/$name.cmd"
  t0=$(sim_cpu_ticks)
  w0=$(date +%s.%N)
  if [ "${THREADS:-0}" = 1 ]; then
    "$TIME" -v -o "$WORK/$name.time" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err" &
    tpid=$!
    cpid=
    for _ in $(seq 200); do
      cpid=$(pgrep -P "$tpid" | head -n 1 || true)
      [ -n "$cpid" ] && break
      sleep 0.01
    done
    if [ -n "$cpid" ]; then thread_ticks "$cpid" "$WORK/$name.threads"; else : > "$WORK/$name.threads"; fi
    wait "$tpid" || rc=$?
  else
    "$TIME" -v -o "$WORK/$name.time" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err" || rc=$?
  fi
  w1=$(date +%s.%N)
  kill -0 "$SIM_PID" 2>/dev/null || die "the simulator died during '$name' ($(tail -n 3 "$WORK/sim.log"))"
  echo $(( $(sim_cpu_ticks) - t0 )) > "$WORK/$name.sim"
  awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.6f\n", b - a }' > "$WORK/$name.wall"
  if [ "$rc" -ne 0 ]; then
    tail -n 20 "$WORK/$name.out" "$WORK/$name.err" >&2 || true
    die "'$name' exited with status $rc: $*"
  fi
}

# ---- libcurl 8: find it (or fetch Debian's backports package privately into .build/curl8) and verify it
# (Tests/curl8/lib.sh, shared with the test that runs the sender's suites on it). ----
cc -O2 -o "$WORK/curl_ceiling" bench/curl_ceiling.c -lcurl
find_libcurls
BENCH_CURL8_LDD=${CURL8:+$CURL8_LDD}

# ---- One certificate-mode simulator for every client. ----
start_simulator --client-auth certificate
simulator_config "$WORK/pushctl.json" registry.sqlite com.example.bench big small
python3 - "$WORK" "$N" "$SMALL" <<'PY'
import os, sys
work, n, small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for name, count in (("big", n), ("small", small)):
    with open(f"{work}/{name}.txt", "w") as f:
        for _ in range(count):
            f.write(os.urandom(32).hex() + "\n")
PY
"$BIN" tokens import --config "$WORK/pushctl.json" --app small "$WORK/small.txt" > /dev/null
"$BIN" tokens import --config "$WORK/pushctl.json" --app big "$WORK/big.txt" > /dev/null

# The same configuration with a delivery-log row per accepted notification (the opt-in `"deliveryLog": "all"`).
python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["deliveryLog"] = "all"; json.dump(c, open(sys.argv[2], "w"))' \
  "$WORK/pushctl.json" "$WORK/pushctl-all.json"

broadcast() {  # [CONFIG=FILE] broadcast NAME APP ID [env VAR=…]: one `pushctl broadcast`, timed
  local name=$1 app=$2 id=$3
  shift 3
  THREADS=1 timed "$name" "$@" "$BIN" broadcast --config "${CONFIG:-$WORK/pushctl.json}" --app "$app" --id "$id" \
    --alert "Benchmark digest" --sound default --expiration 0 --json
}
# pushctl and bare libcurl interleaved, REPEAT runs each per libcurl: push-small-I/ceil-sys-I (system libcurl),
# push-small-8-I/ceil-8-I (libcurl 8). Each broadcast has a fresh id, so it sends to all SMALL devices again.
for run in $(seq "$REPEAT"); do
  echo "libcurl $SYS_CURL, run $run of $REPEAT: pushctl broadcast, $SMALL devices"
  broadcast "push-small-$run" small "bench-small-$run"
  echo "libcurl $SYS_CURL, run $run of $REPEAT: pushctl broadcast, $SMALL devices, deliveryLog all"
  CONFIG="$WORK/pushctl-all.json" broadcast "push-all-$run" small "bench-all-$run"
  echo "libcurl $SYS_CURL, run $run of $REPEAT: bare libcurl, $SMALL requests"
  timed "ceil-sys-$run" "$WORK/curl_ceiling" "https://localhost:$PORT" "$WORK/certs" "$SMALL" 500 100 "bench-small-$run"
done
if [ -n "$CURL8" ]; then
  for run in $(seq "$REPEAT"); do
    echo "libcurl $CURL8_VERSION, run $run of $REPEAT: pushctl broadcast, $SMALL devices"
    broadcast "push-small-8-$run" small "bench-small-curl8-$run" env "LD_LIBRARY_PATH=$CURL8"
    echo "libcurl $CURL8_VERSION, run $run of $REPEAT: bare libcurl, $SMALL requests"
    timed "ceil-8-$run" env "LD_LIBRARY_PATH=$CURL8" "$WORK/curl_ceiling" "https://localhost:$PORT" "$WORK/certs" "$SMALL" 500 100 \
      "bench-small-curl8-$run"
  done
fi
echo "pushctl broadcast, $N devices (one run)"
checkpointed_size() { sqlite3 "$WORK/registry.sqlite" "PRAGMA wal_checkpoint(TRUNCATE)" > /dev/null; stat -c %s "$WORK/registry.sqlite"; }
checkpointed_size > "$WORK/db-before-big"
broadcast push-big big bench-big
checkpointed_size > "$WORK/db-after-big"

# curl's CLI: the same payload, HTTP/2 multiplexed, client certificate, the first CURL_N tokens of the big app.
printf '%s' '{"aps":{"alert":"Benchmark digest","sound":"default"}}' > "$WORK/payload.json"
head -n "$CURL_N" "$WORK/big.txt" | sed "s|^|url = \"https://127.0.0.1:$PORT/3/device/|; s|\$|\"|" > "$WORK/urls.cfg"
echo "curl CLI, $CURL_N requests"
timed curl-cli curl --http2 -Z --parallel-max 1000 -s --cert "$WORK/certs/client.pem" --key "$WORK/certs/client.key" \
  --cacert "$WORK/certs/ca.pem" -X POST -H 'apns-topic: com.example.bench' -H 'apns-push-type: alert' \
  --data-binary @"$WORK/payload.json" -w '%{http_code}\n' --config "$WORK/urls.cfg"
CURL_OK=$(grep -c '^200$' "$WORK/curl-cli.out" || true)
[ "$CURL_OK" -eq "$CURL_N" ] || die "curl CLI: only $CURL_OK of $CURL_N answered 200 ($(sort "$WORK/curl-cli.out" | uniq -c | tr '\n' ' '))"

AIO_WHY=
if python3 -c 'import aioapns' 2> "$WORK/aioapns-import.err"; then
  echo "aioapns, $AIO_N notifications"
  timed aioapns python3 bench/aioapns_check.py --port "$PORT" --certificates "$WORK/certs" --topic com.example.bench --count "$AIO_N"
else
  AIO_WHY="aioapns is not importable ($(tail -n 1 "$WORK/aioapns-import.err")); make bench-deps installs it"
  echo "aioapns NOT measured: $AIO_WHY"
fi

# Cold start: a fresh process per send, pushctl and curl alternating, to one registered device.
COLD_TOKEN=$(head -n 1 "$WORK/small.txt")
echo "cold sends, $COLD_RUNS of each"
: > "$WORK/cold-pushctl.ms"
: > "$WORK/cold-curl.ms"
for _ in $(seq "$COLD_RUNS"); do
  t0=$(date +%s%N)
  "$BIN" send --config "$WORK/pushctl.json" --app small --token "$COLD_TOKEN" --alert "Cold start" > "$WORK/cold-pushctl.out" 2>&1 \
    || { cat "$WORK/cold-pushctl.out" >&2; die "pushctl send failed"; }
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000 )) >> "$WORK/cold-pushctl.ms"
  t0=$(date +%s%N)
  code=$(curl --http2 -s --cert "$WORK/certs/client.pem" --key "$WORK/certs/client.key" --cacert "$WORK/certs/ca.pem" \
    -X POST -H 'apns-topic: com.example.bench' -H 'apns-push-type: alert' -H 'apns-priority: 10' \
    --data-binary '{"aps":{"alert":"Cold start"}}' -o /dev/null -w '%{http_code}' \
    "https://127.0.0.1:$PORT/3/device/$COLD_TOKEN") || die "curl cold send failed (exit $?)"
  t1=$(date +%s%N)
  [ "$code" = 200 ] || die "curl cold send answered $code"
  echo $(( (t1 - t0) / 1000 )) >> "$WORK/cold-curl.ms"
done
stop_simulator
cp "$WORK/sim.log" "$WORK/sim-cert.log"

# h2load against fresh --client-auth none simulators, with the headers pushctl's broadcast sends (one fixed apns-id;
# the collapse id is the first SMALL broadcast's id).
H2_TOKEN=$(head -n 1 "$WORK/big.txt")
for run in $(seq "$H2_RUNS"); do
  echo "h2load run $run of $H2_RUNS, $N requests"
  start_simulator --client-auth none
  timed "h2load-$run" h2load -n "$N" -c 1 -m 100 -d "$WORK/payload.json" -H 'apns-topic: com.example.bench' \
    -H 'apns-push-type: alert' -H 'apns-priority: 10' -H 'apns-expiration: 0' -H 'apns-collapse-id: bench-small-1' \
    -H 'apns-id: 6e1f8a3c-2b1d-4c5e-9f70-0a1b2c3d4e5f' -H 'content-type: application/json' \
    "https://127.0.0.1:$PORT/3/device/$H2_TOKEN"
  stop_simulator
  ok=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$WORK/h2load-$run.out")
  if [ "${ok:-0}" -ne "$N" ]; then
    grep -v '^progress:' "$WORK/h2load-$run.out" "$WORK/h2load-$run.err" | head -n 30 >&2 || true
    cat "$WORK/sim.log" >&2
    die "h2load run $run (port $PORT): ${ok:-no} of $N requests succeeded"
  fi
  [ -n "$(h2load_rate "$WORK/h2load-$run.out")" ] || die "h2load run $run printed no req/s"
done

export WORK N SMALL CURL_N AIO_N COLD_RUNS H2_RUNS REPEAT HZ BIN CURL8 CURL8_WHY CURL8_VERSION BENCH_CURL8_LDD SYS_CURL AIO_WHY COLD_TOKEN H2_TOKEN
export CURL_CLI_VERSION LOAD
CURL_CLI_VERSION=$(curl --version | head -n 1 | cut -d' ' -f2)
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - > "$WORK/section.md" <<'PY'
import datetime, json, os, re, shlex, statistics, sys

E = os.environ
work = E["WORK"]
n, small, curl_n, aio_n, hz = (int(E[k]) for k in ("N", "SMALL", "CURL_N", "AIO_N", "HZ"))
curl8, curl8_version, sys_curl = E["CURL8"], E["CURL8_VERSION"], E["SYS_CURL"]

def read(name): return open(f"{work}/{name}").read()

def fail(msg): sys.exit(f"bench_sender.sh: {msg}")

def timev(name):
    t = read(f"{name}.time")
    def get(key):
        m = re.search(rf"{key}: ([0-9.]+)", t)
        if not m: fail(f"no '{key}' in {name}.time")
        return float(m.group(1))
    return get(r"User time \(seconds\)") + get(r"System time \(seconds\)"), get(r"Maximum resident set size \(kbytes\)") / 1024

def measure(name, count, rate, label, lib, notes=""):
    cpu, rss = timev(name)
    ticks = int(read(f"{name}.sim"))
    if rate <= 0 or count <= 0: fail(f"{name}: rate {rate} for {count} notifications")
    if ticks <= 0: fail(f"{name}: the simulator used no CPU ticks while serving {count} notifications")
    return dict(name=name, label=label, lib=lib, count=count, rate=rate, cpu_us=cpu / count * 1e6,
                sim_us=ticks / hz / count * 1e6, rss=rss, notes=notes)

def broadcast(name, count, label, lib):
    out = read(f"{name}.out").strip()
    try: j = json.loads(out)
    except ValueError:
        try: j = json.loads(out.splitlines()[-1])
        except (ValueError, IndexError): fail(f"{name}: no JSON summary in its output: {out[-300:]!r}")
    if j.get("sentThisRun") != count or j.get("accepted") != count:
        fail(f"{name}: sent {j.get('sentThisRun')}, accepted {j.get('accepted')} of {count}: {out}")
    row = measure(name, count, float(j["rate"]), label, lib, f"accepted {j['accepted']:,}")
    threads = read(f"{name}.threads").split("\n") if os.path.exists(f"{work}/{name}.threads") else []
    apns = [int(t.split()[2]) for t in threads if len(t.split()) == 3 and t.split()[1] == "sender-apns"]
    if apns: row["transport_us"] = sum(apns) / hz / count * 1e6
    return row

def ceiling(name, label, lib):
    out = read(f"{name}.out")
    m = re.search(r"(\d+) sent, (\d+) answered 200 in [0-9.]+ s \(([0-9.]+)/s\), CPU ([0-9.]+) s .*libcurl ([^\s,]+)", out)
    if not m: fail(f"{name}: unexpected output {out!r}")
    if m.group(5) != lib: fail(f"{name}: loaded libcurl {m.group(5)}, expected {lib}")
    if int(m.group(2)) != small: fail(f"{name}: {m.group(2)} of {small} answered 200")
    own = float(m.group(4)) / small * 1e6
    return dict(measure(name, small, float(m.group(3)), label, lib, f"its own CPU count: {own:.1f} µs/req"), own_us=own)

def not_measured(label, lib, why): return dict(label=label, lib=lib, why=why)

repeat = int(E["REPEAT"])
def per(runs, key, fmt="{:.1f}"): return "/".join(fmt.format(r[key]) for r in runs)
def basis(): return f"medians of {repeat} interleaved runs" if repeat > 1 else "one run of each (REPEAT=1)"

def repeated(name, runs, what):
    """The median row of REPEAT runs of one client: each column's median on its own; the runs kept in 'runs'."""
    R = dict(runs[0], name=name, runs=runs)
    for k in ("rate", "cpu_us", "sim_us", "rss"): R[k] = statistics.median(r[k] for r in runs)
    if all("transport_us" in r for r in runs): R["transport_us"] = statistics.median(r["transport_us"] for r in runs)
    if repeat > 1:
        R["notes"] = (f"median of {repeat} interleaved runs, each column on its own; per run: {per(runs, 'rate', '{:,.0f}')}/s, "
                      f"client {per(runs, 'cpu_us')} µs, simulator {per(runs, 'sim_us')} µs, {per(runs, 'rss')} MB; {what}")
    else:
        R["notes"] = f"one run (REPEAT=1); {what}"
    return R

def push_runs(prefix, label, lib):
    runs = [broadcast(f"{prefix}-{i}", small, label, lib) for i in range(1, repeat + 1)]
    return repeated(prefix, runs, f"each accepted {small:,}")

def ceil_runs(prefix, label, lib):
    runs = [ceiling(f"{prefix}-{i}", label, lib) for i in range(1, repeat + 1)]
    own = "/".join(f"{r['own_us']:.1f}" for r in runs)
    return repeated(prefix, runs, f"its own CPU count: {own} µs/req")

rows = {}
rows["push-small"] = push_runs("push-small", f"`pushctl broadcast`, {small:,} devices", sys_curl)
rows["push-all"] = push_runs("push-all", f"`pushctl broadcast`, {small:,} devices, `\"deliveryLog\": \"all\"` (opt-in)", sys_curl)
rows["ceil-sys"] = ceil_runs("ceil-sys", "bare libcurl (`bench/curl_ceiling.c`)", sys_curl)
rows["push-big"] = broadcast("push-big", n, f"`pushctl broadcast`, {n:,} devices", sys_curl)
rows["push-big"]["notes"] += " (one run)"
if curl8:
    rows["push-small-8"] = push_runs("push-small-8", f"`pushctl broadcast`, {small:,} devices, `LD_LIBRARY_PATH`", curl8_version)
    rows["ceil-8"] = ceil_runs("ceil-8", "bare libcurl (`bench/curl_ceiling.c`), `LD_LIBRARY_PATH`", curl8_version)
else:
    rows["ceil-8"] = not_measured("bare libcurl (`bench/curl_ceiling.c`)", "8.x", E["CURL8_WHY"])
    rows["push-small-8"] = not_measured(f"`pushctl broadcast`, {small:,} devices", "8.x", E["CURL8_WHY"])
rows["curl-cli"] = measure("curl-cli", curl_n, curl_n / float(read("curl-cli.wall")), "curl CLI (`-Z --parallel-max 1000`)",
                           E["CURL_CLI_VERSION"], f"all {curl_n:,} answered 200; rate over the process's wall time")
if E["AIO_WHY"]:
    rows["aioapns"] = not_measured("aioapns", "—", E["AIO_WHY"])
else:
    out = read("aioapns.out")
    m = re.search(r"\(([0-9,]+)/s\)", out)
    if not m or f"accepted {aio_n}," not in out: fail(f"aioapns: unexpected output {out!r}")
    rows["aioapns"] = measure("aioapns", aio_n, float(m.group(1).replace(",", "")), "aioapns (`bench/aioapns_check.py`)", "—",
                              f"all {aio_n:,} accepted")

h2 = []
for run in range(1, int(E["H2_RUNS"]) + 1):
    rate = float(re.search(r"finished in [^,]*, ([0-9.]+) req/s", read(f"h2load-{run}.out")).group(1))
    h2.append(measure(f"h2load-{run}", n, rate, "h2load (`-c 1 -m 100`, no client certificate, own simulator)", "—"))
h2_sorted = sorted(h2, key=lambda r: r["rate"])
h2_mid = h2_sorted[(len(h2) - 1) // 2]
all_rates = ", ".join(f"{r['rate']:,.0f}" for r in h2)
all_sim = ", ".join(f"{r['sim_us']:.1f}" for r in h2)
h2_mid["notes"] = (f"median of {len(h2)} runs by rate (all: {all_rates}/s; simulator {all_sim} µs/req)" if len(h2) > 1
                  else "one run (H2_RUNS=1)")
rows["h2load"] = h2_mid

cold_p = [int(x) / 1000 for x in read("cold-pushctl.ms").split()]
cold_c = [int(x) / 1000 for x in read("cold-curl.ms").split()]
cp, cc_ = statistics.median(cold_p), statistics.median(cold_c)

# ---- acceptance ----
acc = []
def check(label, value, ok, target, detail=""):
    acc.append(f"- {label}: **{value}** (target {target}) — {'MET' if ok else 'NOT MET'}{detail}")
def missing(label, why):
    acc.append(f"- {label}: not measured — {why}")
pairs = [("7.88" if sys_curl.startswith("7.88") else sys_curl, "push-small", "ceil-sys")]
pairs.append(("8.x" if not curl8 else curl8_version, "push-small-8", "ceil-8"))
for lib, p, c in pairs:
    P, C = rows[p], rows[c]
    if "why" in P: missing(f"(a) pushctl CPU/notif ÷ bare libcurl CPU/notif, libcurl {lib}", P["why"]); continue
    r = P["cpu_us"] / C["cpu_us"]
    check(f"(a) pushctl CPU/notif ÷ bare libcurl CPU/notif (same headers), libcurl {lib}", f"{r:.2f}", r <= 1.2, "≤ 1.2",
          f" ({P['cpu_us']:.1f} vs {C['cpu_us']:.1f} µs, {small:,} each; {basis()}: "
          f"pushctl {per(P['runs'], 'cpu_us')} µs, bare {per(C['runs'], 'cpu_us')} µs)")
    if p == "push-small":
        B = rows["push-big"]
        r = B["cpu_us"] / C["cpu_us"]
        acc.append(f"- (a), informational: pushctl CPU/notif at {n:,} devices (one run) ÷ bare libcurl CPU/notif, libcurl {lib}: "
                   f"**{r:.2f}** — the {n:,}-device broadcast against the bare median of {small:,} requests "
                   f"({B['cpu_us']:.1f} vs {C['cpu_us']:.1f} µs; {'within' if r <= 1.2 else 'above'} (a)'s ≤ 1.2)")
for lib, p, c in pairs:
    P, C = rows[p], rows[c]
    if "why" in P: continue
    if "transport_us" not in P:
        acc.append(f"- (a), informational, libcurl {lib}: pushctl's transport thread was not measured (no `sender-apns` "
                   "thread seen in /proc)")
        continue
    T = P["transport_us"]
    acc.append(f"- (a), informational, where pushctl's CPU goes, libcurl {lib}: its transport thread alone (`sender-apns`: the "
               f"curl multi loop, the answer policy, the header callbacks) ÷ bare libcurl's whole process **{T / C['cpu_us']:.2f}** "
               f"({T:.1f} vs {C['cpu_us']:.1f} µs/notif; per run {per(P['runs'], 'transport_us')} µs); the rest of pushctl — "
               f"the engine's other threads (feed, pump, outcome committer, SQLite, start-up) — {P['cpu_us'] - T:.1f} µs/notif "
               f"({(P['cpu_us'] - T) / C['cpu_us']:.2f} of bare libcurl). Threads' CPU from /proc/PID/task/*/stat, read every 50 ms.")
for lib, p, c in pairs:
    P, C = rows[p], rows[c]
    if "why" in P: missing(f"(b) pushctl rate ÷ bare libcurl rate, libcurl {lib}", P["why"]); continue
    r = P["rate"] / C["rate"]
    check(f"(b) pushctl rate ÷ bare libcurl rate, libcurl {lib}", f"{r:.2f}", r >= 0.85, "≥ 0.85",
          f" ({P['rate']:,.0f} vs {C['rate']:,.0f}/s; {basis()}: "
          f"pushctl {per(P['runs'], 'rate', '{:,.0f}')}/s, bare {per(C['runs'], 'rate', '{:,.0f}')}/s)")
P, L, C = rows["push-small"], rows["push-all"], rows["ceil-sys"]
acc.append(f"- (a) and (b), informational, with the opt-in `\"deliveryLog\": \"all\"` (a delivery-log row and a last-success "
           f"update per accepted notification), libcurl {sys_curl}: CPU/notif ÷ bare libcurl **{L['cpu_us'] / C['cpu_us']:.2f}**, "
           f"rate ÷ bare libcurl **{L['rate'] / C['rate']:.2f}** ({L['cpu_us']:.1f} vs {C['cpu_us']:.1f} µs, {L['rate']:,.0f} vs "
           f"{C['rate']:,.0f}/s; against the default in the same runs: CPU {L['cpu_us'] / P['cpu_us']:.2f}×, rate "
           f"{L['rate'] / P['rate']:.2f}×; {basis()})")
grow = int(read("db-after-big")) - int(read("db-before-big"))
check(f"SQLite: the main database file's growth over the {n:,}-device broadcast (checkpointed, `PRAGMA wal_checkpoint(TRUNCATE)` "
      "before and after)", f"{grow / 1e6:.2f} MB", grow <= 1_000_000, "≤ 1 MB",
      f" ({int(read('db-before-big')):,} → {int(read('db-after-big')):,} bytes; every device accepted)")
acc.append("- No longer targets (reported): (c) simulator CPU per pushctl notification vs per h2load request, (d) peak RSS, "
           "(e) cold `send` vs curl's CLI:")
H = rows["h2load"]
for p in ("push-big", "push-small", "push-small-8"):
    P = rows[p]
    if "why" in P: continue
    r = P["sim_us"] / H["sim_us"]
    runs = (f"; median of {repeat} runs: {per(P['runs'], 'sim_us')} µs" if "runs" in P and repeat > 1
            else "; one run" if p == "push-big" else "")
    acc.append(f"  - (c) simulator CPU/notif serving {P['label'].replace(', `LD_LIBRARY_PATH`', '')} (libcurl {P['lib']}) ÷ per h2load "
               f"request: **{r:.2f}** ({P['sim_us']:.1f} vs {H['sim_us']:.1f} µs{runs})")
rs, rb = rows["push-small"]["rss"], rows["push-big"]["rss"]
diff = rb / rs - 1
acc.append(f"  - (d) pushctl peak RSS at {small:,} / {n:,} devices: **{rs:.1f} / {rb:.1f} MB** ({diff * 100:+.1f}%"
           + (f"; {small:,}: median of {per(rows['push-small']['runs'], 'rss')} MB)" if repeat > 1 else ")")
           + "; the 10M-device flatness target is bench/bench_scale.sh's")
r = cp / cc_
acc.append(f"  - (e) cold `pushctl send` ÷ curl CLI, one device: **{r:.2f}** (medians of {len(cold_p)}: {cp:.1f} vs {cc_:.1f} ms; "
           f"pushctl {min(cold_p):.1f}–{max(cold_p):.1f}, curl {min(cold_c):.1f}–{max(cold_c):.1f})")
acc.append("- 4 connections vs 1 over a long round trip: measured by `bash bench/bench_connections.sh` "
           "(section \"Connections over a long round trip\"), not here.")

# ---- table ----
order = ["push-small", "push-all", "ceil-sys", "push-small-8", "ceil-8", "push-big", "curl-cli", "aioapns", "h2load"]
table = ["| client | libcurl | notifications | notifications/s | client CPU µs/notif | simulator CPU µs/notif | peak RSS | notes |",
         "|---|---|---|---|---|---|---|---|"]
for k in order:
    R = rows[k]
    if "why" in R:
        table.append(f"| {R['label']} | {R['lib']} | — | **not measured** | — | — | — | {R['why']} |")
    else:
        table.append(f"| {R['label']} | {R['lib']} | {R['count']:,} | {R['rate']:,.0f} | {R['cpu_us']:.1f} | {R['sim_us']:.1f} | "
                     f"{R['rss']:.1f} MB | {R['notes']} |")

# ---- command lines (as run, in the temporary directory) ----
def cmd(name):
    args = read(f"{name}.cmd").split("\0")[:-1]
    out = []
    for a in args:
        a = a.replace(work + "/", "")
        if a == E["BIN"]: a = "pushctl"
        if a == "curl_ceiling": a = "./curl_ceiling"
        a = re.sub(r"(127\.0\.0\.1|localhost):\d+", r"\1:PORT", a)
        a = a.replace(E["H2_TOKEN"], "TOKEN")
        out.append(a)
    s = " ".join(shlex.quote(a) for a in out)
    return "/usr/bin/time -v " + re.sub(r"--port \d+", "--port PORT", s)
cmds = ["pushctl simulator --certificates certs --port 0 --client-auth certificate",
        f"pushctl tokens import --config pushctl.json --app small small.txt     # {small:,} random tokens",
        f"pushctl tokens import --config pushctl.json --app big big.txt         # {n:,} random tokens",
        "cc -O2 -o curl_ceiling bench/curl_ceiling.c -lcurl"]
def pair(p, c, id_prefix):  # the commands of run 1; run I has --id ID_PREFIX-I
    return [cmd(f"{p}-1") + f"   # run I of {repeat}: --id {id_prefix}-I",
            cmd(f"{c}-1") + f"   # run I of {repeat}, right after pushctl's run I"]
cmds += pair("push-small", "ceil-sys", "bench-small")
cmds.insert(-1, cmd("push-all-1") + f"   # run I of {repeat}: --id bench-all-I, right after pushctl's run I; "
            "pushctl-all.json: pushctl.json plus \"deliveryLog\": \"all\"")
if curl8: cmds += pair("push-small-8", "ceil-8", "bench-small-curl8")
cmds.append(cmd("push-big") + "   # once")
cmds.append(cmd("curl-cli") + f"   # urls.cfg: the first {curl_n:,} tokens of big.txt")
if not E["AIO_WHY"]: cmds.append(cmd("aioapns"))
cmds += [f"pushctl send --config pushctl.json --app small --token TOKEN --alert 'Cold start'   # ×{len(cold_p)}, fresh process each",
         "curl --http2 -s --cert certs/client.pem --key certs/client.key --cacert certs/ca.pem -X POST -H 'apns-topic: com.example.bench' "
         "-H 'apns-push-type: alert' -H 'apns-priority: 10' --data-binary '{\"aps\":{\"alert\":\"Cold start\"}}' "
         "-o /dev/null -w '%{http_code}' https://127.0.0.1:PORT/3/device/TOKEN   # alternating with pushctl send",
         f"pushctl simulator --certificates certs --port 0 --client-auth none    # a fresh one per h2load run",
         cmd("h2load-1")]
cmds = [c.replace(E["COLD_TOKEN"], "TOKEN") for c in cmds]

if curl8:
    lib8 = (f"libcurl 8: {curl8_version} from `{curl8}`; `ldd` of pushctl under that `LD_LIBRARY_PATH` resolves "
            f"`libcurl.so.4` to `{E['BENCH_CURL8_LDD']}`, and curl_ceiling printed {curl8_version}.")
else:
    lib8 = f"**libcurl 8 was not measured**: {E['CURL8_WHY']}."
now = datetime.datetime.now(datetime.timezone.utc)
print(f"""Measured {now:%Y-%m-%d %H:%M} UTC by `bash bench/bench_sender.sh` (N={n} SMALL={small} CURL_N={curl_n} AIO_N={aio_n}
COLD_RUNS={len(cold_p)} REPEAT={repeat}; release build; load average at the end: {E['LOAD']}). One `pushctl simulator
--client-auth certificate` serves every client: first, per libcurl, {repeat} interleaved pairs of `pushctl broadcast` to the
{small:,} devices (a fresh `--id` each: every new broadcast sends to all of them again) and bare libcurl (with the system
libcurl, each pair also runs the broadcast under the opt-in `"deliveryLog": "all"` between the two), then the rest
in the order of the table. The simulator, the client and SQLite share the 2 cores and the box drifts between minutes, so
compare rows of one run only; the pushctl and bare libcurl rows of the {small:,} runs are medians of their {repeat} runs
(each column on its own, every run in the notes), and ratios (a)–(c) use those medians. h2load cannot present a client
certificate: it runs against its own `--client-auth none` simulator, with the headers pushctl sends (one fixed apns-id).
Client CPU and peak RSS: `/usr/bin/time -v` of the client process (start-up included); simulator CPU: its utime + stime
ticks (/proc) during that client's run ÷ its notifications.
Rates: pushctl's own `rate`, curl_ceiling's, aioapns's and h2load's printed figure; curl CLI over its wall time.
System libcurl {sys_curl}. {lib8}

| client | libcurl | notifications | notifications/s | client CPU µs/notif | simulator CPU µs/notif | peak RSS | notes |
|---|---|---|---|---|---|---|---|
""" + "\n".join(table[2:]) + f"""

Cold start, one device, fresh process, medians of {len(cold_p)}: `pushctl send` {cp:.1f} ms, curl CLI {cc_:.1f} ms.

Acceptance ("A broadcast writes per shard, not per device"), from this run:

""" + "\n".join(acc) + """

Commands (in a temporary directory holding `pushctl.json` and `certs/` from `pushctl cert make-dev`):

```
""" + "\n".join(cmds) + "\n```")
PY
python3 bench/update_results.py "Sender and broadcast" < "$WORK/section.md"
echo
sed -n '/^| client /,/^$/p' "$WORK/section.md"
grep -E '^(Cold start|- )' "$WORK/section.md"
echo "bench/RESULTS.md: section \"Sender and broadcast\" updated"
