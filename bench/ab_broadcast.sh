#!/usr/bin/env bash
# Two pushctl builds side by side over an emulated round trip: CPU per notification and rate of `pushctl broadcast`
# for BASE and NEW, with bare libcurl (bench/curl_ceiling.c, perform mode, the same total in flight) beside them.
# For a change to the transport: a ratio between builds means something only when both ran minutes apart on the
# same box, so each round runs BASE, NEW and bare libcurl back to back; medians of REPEAT rounds, every run listed.
#   bash bench/ab_broadcast.sh BASE_PUSHCTL NEW_PUSHCTL
# N (default 60000) devices on SQLite; DELAYS (default "100 50 0") ms; ROWS (default "c2w1000 c4w500": connections ×
# window per connection; curl_ceiling gets their product as its window, on as many connections); REPEAT (default 3).
# Prints a Markdown table; writes nothing into bench/RESULTS.md (copy what a decision rests on there).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: bench/ab_broadcast.sh BASE_PUSHCTL NEW_PUSHCTL" >&2; exit 2; }
BASE=$(realpath "$1") NEW=$(realpath "$2")
for b in "$BASE" "$NEW"; do [ -x "$b" ] || { echo "ab_broadcast.sh: $b is not executable" >&2; exit 2; }; done
BIN=$NEW
N=${N:-60000}
DELAYS=${DELAYS:-"100 50 0"}
ROWS=${ROWS:-"c2w1000 c4w500"}
REPEAT=${REPEAT:-3}
. bench/lib.sh
bench_workspace
build_curl_ceiling
random_tokens "$WORK/tokens.txt" "$N"

config() {  # config ROW: c<connections>w<window>
  local c=${1#c}; c=${c%w*}
  cat > "$WORK/$1.json" <<JSON
{ "database": "registry.sqlite",
  "simulator": { "host": "127.0.0.1", "port": $PORT, "certificates": "certs" },
  "apps": { "bench": { "topic": "com.example.bench", "endpoint": "simulator", "connections": $c, "window": ${1#*w},
    "auth": { "p12": "certs/client.p12", "passwordFile": "certs/client.p12.password" } } } }
JSON
}
cpu_of() { awk -F': ' '/User time/{u=$2} /System time/{s=$2} END{printf "%.3f", u + s}' "$1"; }

: > "$WORK/runs"
imported=
for d in $DELAYS; do
  start_simulator --client-auth certificate --delay-ms "$d"
  for row in $ROWS; do config "$row"; done
  first=${ROWS%% *}
  [ -n "$imported" ] || "$BIN" tokens import --config "$WORK/$first.json" --app bench "$WORK/tokens.txt" > /dev/null
  imported=1
  for r in $(seq "$REPEAT"); do
    for row in $ROWS; do
      c=${row#c}; c=${c%w*}; w=$(( ${row#*w} * c ))
      for kind in base new curl; do
        id="ab-$d-$row-$r-$kind"
        case $kind in
          base|new)
            bin=$BASE; [ $kind = new ] && bin=$NEW
            /usr/bin/time -v -o "$WORK/time" "$bin" broadcast --config "$WORK/$row.json" --app bench --id "$id" \
              --alert "Benchmark digest" --json > "$WORK/out" 2> "$WORK/err" || { tail -n 5 "$WORK/err" >&2; exit 1; }
            rate=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
a = j["accepted"]; assert a == int(sys.argv[2]), f"accepted {a}"; print(j["rate"])' "$WORK/out" "$N") ;;
          curl)
            /usr/bin/time -v -o "$WORK/time" "$WORK/curl_ceiling" "https://localhost:$PORT" "$CERTS" "$N" "$w" \
              "$(( w < 1000 ? w / 5 : 200 ))" "$id" "$c" > "$WORK/out" 2> "$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
            rate=$(sed -n 's/.*in [0-9.]* s (\([0-9]*\)\/s).*/\1/p' "$WORK/out") ;;
        esac
        echo "$d $row $r $kind $(cpu_of "$WORK/time") $rate" | tee -a "$WORK/runs" >&2
      done
    done
  done
  stop_simulator
done
python3 - "$WORK/runs" "$N" <<'PY'
import collections, statistics, sys
n = int(sys.argv[2])
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    d, row, _, kind, cpu, rate = line.split()
    runs[(d, row, kind)].append((float(cpu) / n * 1e6, float(rate)))
med = lambda k, i: statistics.median(x[i] for x in runs[k])
print("| delay | connections × window | base | new | bare libcurl | new ÷ base, CPU | new ÷ base, rate | new ÷ bare, CPU |")
print("|---|---|---|---|---|---|---|---|")
for (d, row) in dict.fromkeys((d, row) for (d, row, _) in runs):
    b, nw, c = ((med((d, row, k), 0), med((d, row, k), 1)) for k in ("base", "new", "curl"))
    c_, w = row[1:].split("w")
    print(f"| {d} ms | {c_} × {w} | {b[0]:.1f} µs, {b[1]:,.0f}/s | {nw[0]:.1f} µs, {nw[1]:,.0f}/s | {c[0]:.1f} µs, {c[1]:,.0f}/s"
          f" | {nw[0] / b[0]:.2f}× | {nw[1] / b[1]:.2f}× | {nw[0] / c[0]:.2f}× |")
PY
