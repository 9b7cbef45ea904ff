#!/usr/bin/env bash
# HTTP API registration benchmark: wrk, HTTP/1.1 keep-alive, 50 connections, a unique token per request,
# against the release `pushctl serve` with a real SQLite file (WAL, group commit). Appends to bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release/pushctl}
DURATION=${DURATION:-20}
THREADS=${THREADS:-2}   # wrk threads; they share the 2 cores with the server
. bench/lib.sh
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
key=bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
hash=$(printf '%s' "$key" | sha256sum | cut -d' ' -f1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
registration_config "$work/pushctl.json" "$port" "$port" "$hash"
# Request logging costs a formatted line per request; the benchmark measures the API, so logs go at warning.
LOG_LEVEL=warning $BIN serve --config "$work/pushctl.json" > "$work/serve.out" 2> "$work/serve.err" &
server=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
cmd="wrk -t$THREADS -c50 -d${DURATION}s --latency -s bench/register.lua http://127.0.0.1:$port"
PUSHCTL_BENCH_KEY=$key wrk -t2 -c50 -d3s -s bench/register.lua "http://127.0.0.1:$port" > /dev/null  # warm-up
out=$(PUSHCTL_BENCH_KEY=$key $cmd)
echo "$out"
line=$(grep '^BENCH' <<<"$out")
count=$(sqlite3 "$work/registry.sqlite" "select count(*) from devices" 2>/dev/null || echo "?")
mode=$(sqlite3 "$work/registry.sqlite" "pragma journal_mode" 2>/dev/null || echo "?")
rss=$(awk '/VmHWM/ {print $2}' /proc/$server/status)
{
  echo "### Registration over HTTP ($(date -u +%F), $(nproc) cores)"
  echo
  echo '```'
  echo "LOG_LEVEL=warning $BIN serve --config pushctl.json   # release build, SQLite journal_mode=$mode"
  echo "PUSHCTL_BENCH_KEY=… $cmd"
  echo "$line"
  echo '```'
  echo
  echo "Rows in the registry afterwards: $count (every 201 is a committed row). Server peak RSS: $((rss / 1024)) MB."
  echo "Target (issue 7): ≥ 15,000 req/s with p99 ≤ 10 ms, durable (WAL). wrk and the server share the 2 cores."
} | python3 bench/update_results.py "HTTP API"
