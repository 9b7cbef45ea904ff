#!/usr/bin/env bash
# Registration over HTTP, two (or more) pushctl builds side by side: RUNS interleaved rounds (A then B, then C…), each a fresh
# `pushctl serve` on a new SQLite file, a 2 s wrk warm-up, then DURATION s measured (wrk -t2 -c50,
# bench/register.lua: a new token per request). Prints each run's rate, latency and the server's CPU per request
# (utime+stime from /proc), then the medians and the median of the pair ratios B/A (and C/A…). Not run by `make
# bench`: it compares binaries (e.g. a build of an older commit against this one).
#   bash bench/compare_registration.sh OLD/pushctl .build/release/pushctl
#   bash bench/compare_registration.sh OLD/pushctl MIDDLE/pushctl .build/release/pushctl   # rounds of three
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 PUSHCTL_A PUSHCTL_B [PUSHCTL_C…]" >&2; exit 2; }
bins=(); for b in "$@"; do bins+=("$(realpath "$b")"); done
RUNS=${RUNS:-5}; DURATION=${DURATION:-8}
. bench/lib.sh
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
one() { # one BIN: prints "rps cpu_us_per_request"
  local bin=$1 work key hash port aport server out t0 t1 n
  work=$(mktemp -d); key=bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  hash=$(printf '%s' "$key" | sha256sum | cut -d' ' -f1); port=$(free_port); aport=$(free_port)
  registration_config "$work/pushctl.json" "$port" "$aport" "$hash"
  LOG_LEVEL=warning "$bin" serve --config "$work/pushctl.json" > "$work/serve.out" 2> "$work/serve.err" &
  server=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
  PUSHCTL_BENCH_KEY=$key wrk -t2 -c50 -d2s -s bench/register.lua "http://127.0.0.1:$port" > /dev/null
  t0=$(awk '{print $14 + $15}' "/proc/$server/stat")
  out=$(PUSHCTL_BENCH_KEY=$key wrk -t2 -c50 -d"${DURATION}s" --latency -s bench/register.lua "http://127.0.0.1:$port" | grep '^BENCH')
  t1=$(awk '{print $14 + $15}' "/proc/$server/stat")
  kill "$server"; wait "$server" 2>/dev/null || true; rm -rf "$work"
  n=$(sed 's/.*requests=\([0-9]*\).*/\1/' <<<"$out")
  echo "$(sed 's/.*rps=\([0-9]*\).*/\1/' <<<"$out") $(( (t1 - t0) * 1000000 / $(getconf CLK_TCK) / n ))"
}
names=(A B C D E F G H)
rows=()
for i in $(seq "$RUNS"); do
  line="" row=""
  for k in "${!bins[@]}"; do
    r=$(one "${bins[$k]}")
    line+="${line:+   }${names[$k]} ${r% *} req/s ${r#* } µs/req"
    row+="${row:+ }$r"
  done
  if [ ${#bins[@]} -eq 2 ]; then echo "pair $i: $line"; else echo "round $i: $line"; fi
  rows+=("$row")
done
printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
r = [list(map(float, l.split())) for l in sys.stdin]
med = statistics.median
n = len(r[0]) // 2
names = "ABCDEFGH"
if n == 2:
    print(f"median rate A {med(x[0] for x in r):,.0f}/s, B {med(x[2] for x in r):,.0f}/s; median of the pair ratios B/A {med(x[2] / x[0] for x in r):.2f}")
    print(f"median CPU per request A {med(x[1] for x in r):.0f} µs, B {med(x[3] for x in r):.0f} µs")
else:
    print("median rate " + ", ".join(f"{names[k]} {med(x[2*k] for x in r):,.0f}/s" for k in range(n)) + "; medians of the round ratios "
          + ", ".join(f"{names[k]}/A {med(x[2*k] / x[0] for x in r):.2f}" for k in range(1, n)))
    print("median CPU per request " + ", ".join(f"{names[k]} {med(x[2*k+1] for x in r):.0f} µs" for k in range(n)))'
