#!/usr/bin/env bash
# FCM against APNs on one machine (release build): one `pushctl simulator` process plays APNs, Google's OAuth token
# endpoint and FCM HTTP v1 (checking every message as FCM does); two apps share it, `apns` with N imported APNs tokens
# and `android` with N FCM registration tokens (`tokens import --service fcm`), whose service account the simulator
# wrote and trusts. Then REPEAT (default 3) interleaved pairs of `pushctl broadcast` to each app (a fresh --id each
# time): client CPU µs per notification (utime+stime, /usr/bin/time) and rate; the ratio FCM ÷ APNs is the median of
# the pairwise ratios (target ≤ 1.2, issue 40). The simulator's record is off, so neither side pays for it.
# Replaces the "## FCM" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/.build/release/pushctl}
N=${N:-20000}
REPEAT=${REPEAT:-3}
die() { echo "bench_fcm.sh: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "BIN=$BIN is not an executable (make release)"
WORK=$(mktemp -d /tmp/pushprovider-bench-fcm.XXXXXX)
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill -TERM "$SIM_PID" 2>/dev/null && wait "$SIM_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
SIM=$(free_port)

"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.app > /dev/null
# config FCM: the apps, `android` with FCM once its service account exists (the simulator writes it at start).
config() {
  cat > "$WORK/pushctl.json" <<JSON
{ "database": "registry.sqlite",
  "simulator": { "host": "127.0.0.1", "port": $SIM, "certificates": "certs" },
  "apps": {
    "apns": { "topic": "com.example.app", "endpoint": "simulator",
      "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" } },
    "android": { "topic": "com.example.app", "endpoint": "simulator",
      "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" }$1 } } }
JSON
}
config ""
"$BIN" simulator --config "$WORK/pushctl.json" --client-auth either --fcm-service-account "$WORK/fcm.json" > "$WORK/sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 300); do grep -q "listening on" "$WORK/sim.log" && break; sleep 0.1; done
grep -q "listening on" "$WORK/sim.log" || { cat "$WORK/sim.log"; die "the simulator did not start"; }
config ', "fcm": { "serviceAccount": "fcm.json", "endpoint": "simulator" }'

python3 -c 'import os, sys; [print(os.urandom(32).hex()) for _ in range(int(sys.argv[1]))]' "$N" \
  | "$BIN" tokens import --config "$WORK/pushctl.json" --app apns - > /dev/null
# Registration tokens in FCM's shape (<22>:APA91b<134>, base64url), as Android apps hand them over.
python3 - "$N" <<'PY' | "$BIN" tokens import --config "$WORK/pushctl.json" --app android --service fcm - > /dev/null
import base64, os, sys
def chunk(n): return base64.urlsafe_b64encode(os.urandom(n)).decode().rstrip("=")[:n]
for _ in range(int(sys.argv[1])): print(chunk(22) + ":APA91b" + chunk(134))
PY
[ "$("$BIN" tokens count --config "$WORK/pushctl.json" --app android --service fcm)" = "$N" ] || die "not every FCM token registered"

# One broadcast: "wall user sys" of the client.
broadcast() {
  /usr/bin/time -f "%e %U %S" -o "$WORK/time" "$BIN" broadcast --config "$WORK/pushctl.json" --app "$1" --id "$2" \
    --alert "Benchmark" --title "PushProvider" > /dev/null 2> "$WORK/broadcast.err" || { cat "$WORK/broadcast.err"; die "broadcast $2 failed"; }
  cat "$WORK/time"
}
: > "$WORK/pairs"
for i in $(seq "$REPEAT"); do
  echo "apns $(broadcast apns "apns-$i")" >> "$WORK/pairs"
  echo "fcm $(broadcast android "fcm-$i")" >> "$WORK/pairs"
done

python3 - "$N" "$WORK/pairs" "$("$BIN" --version | head -1)" <<'PY' | python3 bench/update_results.py "FCM"
import statistics, sys
n, pairs, version = int(sys.argv[1]), sys.argv[2], sys.argv[3]
runs = {"apns": [], "fcm": []}
for kind, wall, user, sys_ in (line.split() for line in open(pairs)):
    runs[kind].append((n / float(wall), (float(user) + float(sys_)) / n * 1e6))
ratios = [f[1] / a[1] for a, f in zip(runs["apns"], runs["fcm"])]
print(f"`bash bench/bench_fcm.sh` (N={n}, {len(ratios)} interleaved pairs, one `pushctl simulator` playing APNs, Google's")
print("token endpoint and FCM HTTP v1; the client is `pushctl broadcast`, release build; this box has 2 cores and is shared).")
print(f"Binary: {version}.\n")
print("| broadcast | rate (each run) | client CPU µs per notification (each run) |")
print("|---|---|---|")
for kind, label in (("apns", "APNs, N tokens"), ("fcm", "FCM, N registration tokens")):
    print(f"| {label} | " + ", ".join(f"{r:,.0f}/s" for r, _ in runs[kind]) + " | " + ", ".join(f"{u:.1f}" for _, u in runs[kind]) + " |")
print(f"\n**FCM ÷ APNs client CPU per notification: {statistics.median(ratios):.2f}** (median of the pairwise ratios "
      + ", ".join(f"{r:.2f}" for r in ratios) + "; target ≤ 1.2).")
PY
echo "bench_fcm.sh: bench/RESULTS.md section \"FCM\" updated"
