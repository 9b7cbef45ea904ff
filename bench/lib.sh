# Shared by the bench scripts (source it). The simulator functions need BIN (pushctl), WORK (a scratch dir) and CERTS (ca.pem,
# server.pem, server.key) to be set.

# Makes the scratch directory WORK, removed on exit with the simulator if one still runs, and development
# certificates in CERTS (made by BIN).
bench_workspace() {
  WORK=$(mktemp -d)
  SIM_PID=
  trap bench_cleanup EXIT
  "$BIN" cert make-dev --out "$WORK/certs" --topic com.example.bench > /dev/null
  CERTS="$WORK/certs"
}
bench_cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"; }

# Writes N random 32-byte APNs tokens, one hex line each, to FILE. Usage: random_tokens FILE N
random_tokens() {
  python3 -c 'import os, sys
with open(sys.argv[1], "w") as f:
    for _ in range(int(sys.argv[2])): f.write(os.urandom(32).hex() + "\n")' "$1" "$2"
}

# Builds bench/curl_ceiling.c (bare libcurl) as WORK/curl_ceiling.
build_curl_ceiling() { cc -O2 -o "$WORK/curl_ceiling" bench/curl_ceiling.c -lcurl; }

# Starts `pushctl simulator` with the given flags on a free port; sets SIM_PID and PORT.
start_simulator() {
  # Emptied here, not only by the background job's redirection: that one may run after the first read below,
  # which then fails on a missing file (set -e) or finds the previous simulator's port.
  : > "$WORK/sim.log"
  "$BIN" simulator --certificates "$CERTS" --port 0 "$@" > "$WORK/sim.log" 2>&1 &
  SIM_PID=$!
  for _ in $(seq 100); do
    PORT=$(sed -n 's/.*listening on https:\/\/[^:]*:\([0-9]*\).*/\1/p' "$WORK/sim.log")
    [ -n "$PORT" ] && return 0
    sleep 0.1
  done
  cat "$WORK/sim.log"; exit 1
}

# Stops it with SIGTERM (it prints its counters to sim.log).
stop_simulator() { kill -TERM "$SIM_PID"; wait "$SIM_PID" || true; SIM_PID=; }

# The simulator's CPU time so far in clock ticks (utime + stime; `getconf CLK_TCK` per second).
sim_cpu_ticks() { awk '{print $14 + $15}' "/proc/$SIM_PID/stat"; }

# The req/s figure of an h2load output file.
h2load_rate() { sed -n 's/.*finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p' "$1"; }

# Writes a pushctl configuration FILE: the registry DATABASE (relative to the file, or a postgres:// URL) and
# each APP with TOPIC sending to the running simulator (PORT) with the dev client certificate (certs/client.p12
# next to FILE). Usage: simulator_config FILE DATABASE TOPIC APP...
simulator_config() {
  local file=$1 database=$2 topic=$3 apps="" app
  shift 3
  for app in "$@"; do
    apps+="${apps:+,
}    \"$app\": { \"topic\": \"$topic\", \"endpoint\": \"simulator\",
      \"auth\": { \"p12\": \"certs/client.p12\", \"passwordFile\": \"certs/client.p12.password\" } }"
  done
  cat > "$file" <<JSON
{ "database": "$database",
  "simulator": { "host": "127.0.0.1", "port": $PORT, "certificates": "certs" },
  "apps": {
$apps } }
JSON
}

# Writes N registrations with every installation field as JSON lines to FILE (appVersion 2.10 on even lines, 2.2
# on odd ones; two devices per user), for `tokens import --format jsonl`. Usage: audience_jsonl N FILE
audience_jsonl() {
  python3 -c '
import os, sys, json
n = int(sys.argv[1]); out = sys.stdout
zones = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"]
for i in range(n):
    out.write(json.dumps({"token": os.urandom(32).hex(), "user": "u%d" % (i // 2), "timeZone": zones[i % 4],
        "locale": ["de-DE", "en-US", "fr-FR"][i % 3], "appVersion": "2.10" if i % 2 == 0 else "2.2", "osVersion": "17.%d" % (i % 5),
        "installation": "inst-%d" % i, "tags": {"plan": "pro" if i % 2 else "free", "score": i % 100}}) + "\n")
' "$1" > "$2"
}

# Writes the configuration the registration-over-HTTP benchmarks serve: SQLite, the API on PORT and the admin
# listener on ADMIN_PORT, no rate limit, app `bench` whose send key hashes to HASH (sha256 hex). Usage:
# registration_config FILE PORT ADMIN_PORT HASH
registration_config() {
  cat > "$1" <<JSON
{ "database": "registry.sqlite",
  "server": { "host": "127.0.0.1", "port": $2, "rateLimitPerSecond": 1000000, "rateLimitBurst": 1000000, "admin": { "host": "127.0.0.1", "port": $3 } },
  "apps": { "bench": { "topic": "com.example.bench", "endpoint": "production",
    "auth": { "p12": "none.p12", "passwordEnv": "UNUSED" }, "sendKeys": ["sha256:$4"] } } }
JSON
}

# The libcurls a benchmark compares (needs BIN and WORK; sources Tests/curl8/lib.sh): SYS_CURL := the system
# libcurl's version; CURL8 := a directory holding a libcurl >= 8.5 that BIN resolves libcurl.so.4 to under
# LD_LIBRARY_PATH (CURL8_DIR, else /opt/curl8, else .build/curl8, else Debian's bookworm-backports package fetched
# there when root), with CURL8_VERSION and CURL8_LDD (the file BIN loads) — or CURL8 empty and the reason in
# CURL8_WHY. Exits when the system's libcurl cannot be loaded or CURL8_DIR is set but holds none.
find_libcurls() {
  . Tests/curl8/lib.sh
  local arch rc=0
  arch=$(cc -print-multiarch 2>/dev/null || true)
  curl_loaded "" "$WORK" || { echo "$(basename "$0"): the system's libcurl: $CURL8_WHY" >&2; exit 1; }
  SYS_CURL=$CURL_LOADED_VERSION
  CURL8_VERSION=
  CURL8_LDD=
  curl8_find "$WORK" "/opt/curl8/usr/lib/${arch:-x86_64-linux-gnu}" || rc=$?
  [ "$rc" -ne 2 ] || { echo "$(basename "$0"): $CURL8_WHY" >&2; exit 1; }
  if [ -n "$CURL8" ] && ! { curl8_check "$WORK" && curl8_resolves "$BIN"; }; then CURL8=; fi
  if [ -n "$CURL8" ]; then
    echo "libcurl 8: $CURL8_VERSION from $CURL8 ($(basename "$BIN") resolves libcurl.so.4 to $CURL8_LDD under LD_LIBRARY_PATH)"
  else
    echo "libcurl 8 NOT measured: $CURL8_WHY"
  fi
}
