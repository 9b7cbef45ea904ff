# Shared by the bench scripts (source it). Needs BIN (pushctl), WORK (a scratch dir) and CERTS (ca.pem,
# server.pem, server.key) to be set.

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
