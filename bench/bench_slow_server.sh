#!/usr/bin/env bash
# A sender that costs the same when the server is slow (issue 57), release build. Three `pushctl simulator`s side
# by side: FAST (answers as soon as it can, in bursts), and two answering at a fixed rate, one answer per write
# (`--answers-per-second` RATES, default 300 and 2000: a server that is the bottleneck, its answers trickling in).
# One registry: app `apns` with N (default 3,000) tokens, and per simulator an app `web-NAME` with N Web Push
# subscriptions minted on it (a subscription lives on the push service that minted it). Then, for the system's
# libcurl and a libcurl >= 8.5 (Tests/curl8/lib.sh, as bench_sender.sh), REPEAT (default 3) rounds of interleaved
# pairs: for each service and rate, `pushctl broadcast` against FAST, then against that rate (the same devices,
# a fresh --id): client CPU µs per notification (utime+stime, /usr/bin/time) and rate. The figure per service,
# rate and libcurl is the median of the pairs' ratios slow ÷ fast (target ≤ 1.5). Last, once per service, rate and
# libcurl, the broadcast under `strace -f -c` for poll(2) calls (poll, ppoll: libcurl's own per-transfer socket
# checks) and epoll_wait calls per notification. BASELINE=/path/to/an/older/pushctl runs the whole matrix for it too,
# so before and after come from one run. Replaces the "## Slow server" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/.build/release/pushctl}
N=${N:-3000}
REPEAT=${REPEAT:-3}
RATES=${RATES:-300 2000}
BASELINE=${BASELINE:-}
die() { echo "bench_slow_server.sh: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "BIN=$BIN is not an executable (make release)"
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || die "BASELINE=$BASELINE is not an executable"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is missing: make bench-deps"
command -v strace > /dev/null || die "strace is missing: make bench-deps"
WORK=$(mktemp -d /tmp/pushprovider-bench-slow.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.bench > /dev/null
"$BIN" webpush key new --out "$WORK/vapid.pem" > "$WORK/vapid.pub"
. bench/lib.sh
find_libcurls

# sim NAME FLAGS...: starts a simulator; sets PORT_NAME.
sim() {
  local name=$1 port
  shift
  "$BIN" simulator --certificates "$WORK/certs" --port 0 "$@" > "$WORK/sim-$name.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on https:\/\/[^:]*:\([0-9]*\).*/\1/p' "$WORK/sim-$name.log")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$WORK/sim-$name.log"; die "simulator $name did not start"; }
  printf -v "PORT_$name" '%s' "$port"
}
SIMS="fast"
sim fast --client-auth either
for rate in $RATES; do
  sim "r$rate" --client-auth either --answers-per-second "$rate"
  SIMS+=" r$rate"
done

# One configuration file per simulator (the APNs app's endpoint is the config's simulator), one registry.
hosts=""
for s in $SIMS; do p=PORT_$s; hosts+="${hosts:+, }\"127.0.0.1:${!p}\""; done
webapps=""
for s in $SIMS; do
  webapps+=",
    \"web-$s\": { \"topic\": \"com.example.bench\", \"endpoint\": \"simulator\",
      \"auth\": { \"p12\": \"certs/client.p12\", \"passwordFile\": \"certs/client.p12.password\" },
      \"webpush\": { \"vapidKey\": \"vapid.pem\", \"subject\": \"mailto:bench@example.com\", \"allowedHosts\": [$hosts], \"caFile\": \"certs/ca.pem\" } }"
done
for s in $SIMS; do
  p=PORT_$s
  cat > "$WORK/$s.json" <<JSON
{ "database": "registry.sqlite",
  "simulator": { "host": "127.0.0.1", "port": ${!p}, "certificates": "certs" },
  "apps": {
    "apns": { "topic": "com.example.bench", "endpoint": "simulator",
      "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" } }$webapps } }
JSON
done
random_tokens "$WORK/tokens" "$N"
"$BIN" tokens import --config "$WORK/fast.json" --app apns "$WORK/tokens" > /dev/null
for s in $SIMS; do
  p=PORT_$s
  python3 Tests/webpush/mint_subscriptions.py 127.0.0.1 "${!p}" "$WORK/certs/ca.pem" "$(cat "$WORK/vapid.pub")" "$N" 0 \
    | python3 -c 'import json, sys
for line in sys.stdin: print(json.dumps({"subscription": json.loads(line)["subscription"]}))' > "$WORK/subs-$s.jsonl"
  "$BIN" tokens import --config "$WORK/fast.json" --app "web-$s" --service webpush --format jsonl "$WORK/subs-$s.jsonl" > /dev/null
done

# run CLIENT LIBCURL SERVICE SIM ID: one broadcast; appends "client libcurl service sim wall user sys" to pairs.
run() {
  local client=$1 lib=$2 service=$3 s=$4 id=$5 app=apns env=()
  [ "$service" = apns ] || app=web-$s
  [ "$lib" = system ] || env=(env "LD_LIBRARY_PATH=$CURL8")
  /usr/bin/time -f "%e %U %S" -o "$WORK/time" "${env[@]}" "$client" broadcast --config "$WORK/$s.json" --app "$app" \
    --id "$id" --alert "Benchmark" --title "PushProvider" > /dev/null 2> "$WORK/broadcast.err" \
    || { cat "$WORK/broadcast.err"; die "broadcast $id failed"; }
  echo "$(basename "$client") $lib $service $s $(cat "$WORK/time")" >> "$WORK/pairs"
}
LIBS="system"
[ -z "$CURL8" ] || LIBS+=" curl8"
CLIENTS=("$BIN")
[ -z "$BASELINE" ] || CLIENTS+=("$BASELINE")
: > "$WORK/pairs"
n=0
for i in $(seq "$REPEAT"); do
  for lib in $LIBS; do
    for client in "${CLIENTS[@]}"; do
      for service in apns web; do
        for s in $SIMS; do
          [ "$s" = fast ] && continue
          n=$((n + 1))
          run "$client" "$lib" "$service" fast "p$n-fast"
          run "$client" "$lib" "$service" "$s" "p$n-$s"
        done
      done
    done
  done
  echo "round $i of $REPEAT done"
done

# poll(2) and epoll_wait(2) calls per notification, once per client, libcurl, service and simulator.
: > "$WORK/polls"
for lib in $LIBS; do
  for client in "${CLIENTS[@]}"; do
    for service in apns web; do
      for s in $SIMS; do
        n=$((n + 1)); app=apns env=()
        [ "$service" = apns ] || app=web-$s
        [ "$lib" = system ] || env=(env "LD_LIBRARY_PATH=$CURL8")
        strace -f -c -e trace=poll,ppoll,epoll_wait,epoll_pwait -o "$WORK/strace" "${env[@]}" "$client" broadcast \
          --config "$WORK/$s.json" --app "$app" --id "strace-$n" --alert "Benchmark" --title "PushProvider" > /dev/null 2>&1 \
          || die "broadcast strace-$n failed"
        polls=$(python3 - "$WORK/strace" <<'PY'
import sys
counts = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[-1] in ("poll", "ppoll", "epoll_wait", "epoll_pwait") and f[3].isdigit():
        counts[f[-1]] = int(f[3])
print(counts.get("poll", 0) + counts.get("ppoll", 0), counts.get("epoll_wait", 0) + counts.get("epoll_pwait", 0))
PY
)
        echo "$(basename "$client") $lib $service $s $polls" >> "$WORK/polls"
      done
    done
  done
done

export N REPEAT SYS_CURL CURL8_VERSION
python3 - "$WORK/pairs" "$WORK/polls" "$("$BIN" --version | head -1)" <<'PY' | tee "$WORK/section" | python3 bench/update_results.py "Slow server"
import os, statistics, sys
pairs, polls, version = sys.argv[1], sys.argv[2], sys.argv[3]
n, repeat = int(os.environ["N"]), int(os.environ["REPEAT"])
libname = {"system": "libcurl " + os.environ["SYS_CURL"], "curl8": "libcurl " + os.environ.get("CURL8_VERSION", "8")}
rows = [l.split() for l in open(pairs)]
# Consecutive rows are (fast, slow) pairs.
ratios, cpu, rate = {}, {}, {}
for a, b in zip(rows[0::2], rows[1::2]):
    client, lib, service, _, wall, user, sys_ = a
    slow = b[3]
    fast_us = (float(user) + float(sys_)) / n * 1e6
    slow_us = (float(b[5]) + float(b[6])) / n * 1e6
    key = (client, lib, service, slow)
    ratios.setdefault(key, []).append(slow_us / fast_us)
    cpu.setdefault(key, []).append((fast_us, slow_us))
    rate.setdefault(key, []).append((n / float(wall), n / float(b[4])))
calls = {}
for l in open(polls):
    client, lib, service, s, p, e = l.split()
    calls[(client, lib, service, s)] = (int(p) / n, int(e) / n)
print(f"{version}; N = {n} per broadcast, {repeat} interleaved pairs (fast, then slow) per row; client CPU is")
print("utime+stime per notification; the ratio is the median of the pairs' slow ÷ fast. `bash bench/bench_slow_server.sh`.")
print()
print("| client | libcurl | service | server | CPU µs/notification fast → slow (medians) | slow ÷ fast | rate /s fast → slow | poll(2) per notification fast → slow | epoll_wait per notification fast → slow |")
print("|---|---|---|---|---|---|---|---|---|")
for key in sorted(ratios, key=lambda k: (k[0], k[1] != "system", k[2], int(k[3][1:]))):
    client, lib, service, slow = key
    f = statistics.median(c[0] for c in cpu[key]); s = statistics.median(c[1] for c in cpu[key])
    rf = statistics.median(r[0] for r in rate[key]); rs = statistics.median(r[1] for r in rate[key])
    pf, ef = calls.get((client, lib, service, "fast"), (0, 0)); ps, es = calls.get((client, lib, service, slow), (0, 0))
    verdict = "≤ 1.5 ✓" if statistics.median(ratios[key]) <= 1.5 else "> 1.5 ✗"
    print(f"| {client} | {libname[lib]} | {'Web Push' if service == 'web' else 'APNs'} | {slow[1:]}/s | {f:.0f} → {s:.0f} | "
          f"**{statistics.median(ratios[key]):.2f}** ({verdict}; pairs {', '.join(f'{r:.2f}' for r in ratios[key])}) | "
          f"{rf:.0f} → {rs:.0f} | {pf:.1f} → {ps:.1f} | {ef:.2f} → {es:.2f} |")
PY
