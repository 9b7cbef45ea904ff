#!/usr/bin/env bash
# registerBatch with and without installation fields, two pushctl builds side by side on one registry (SQLite): the
# registry is filled as bench/bench_audience.sh fills it (N devices with every installation field, N/2 token-only
# ones of another app; imported by A), then RUNS rounds, each A token-only, A with fields, B token-only, B with
# fields (`tokens bench-register --batch 100`, REG registrations each). Prints every run, then per build the
# medians and the with-fields ÷ token-only ratio (of the medians, and the median of the rounds' ratios). Not run by
# `make bench`: it compares two binaries (e.g. a build of an older commit against this one). Both builds must use
# the same schema version.
#   bash bench/compare_register_fields.sh OLD/pushctl .build/release/pushctl
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: $0 PUSHCTL_A PUSHCTL_B" >&2; exit 2; }
A=$(realpath "$1"); B=$(realpath "$2")
N=${N:-1000000}; REG=${REG:-30000}; RUNS=${RUNS:-5}
mkdir -p .build
WORK=$(mktemp -d "$PWD/.build/compare-register-fields.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
. bench/lib.sh
cat > "$WORK/pushctl.json" <<JSON
{ "database": "registry.sqlite",
  "apps": {
    "big": { "topic": "com.example.bench", "endpoint": "production", "auth": { "p12": "none.p12", "passwordEnv": "UNUSED" } },
    "half": { "topic": "com.example.bench", "endpoint": "production", "auth": { "p12": "none.p12", "passwordEnv": "UNUSED" } },
    "reg": { "topic": "com.example.bench", "endpoint": "production", "auth": { "p12": "none.p12", "passwordEnv": "UNUSED" } } } }
JSON
CONFIG="$WORK/pushctl.json"
audience_jsonl "$N" "$WORK/big.jsonl"
"$A" tokens import --config "$CONFIG" --app big --format jsonl "$WORK/big.jsonl" > /dev/null
rm -f "$WORK/big.jsonl"
python3 -c 'import os, sys; sys.stdout.write("".join(os.urandom(32).hex() + "\n" for _ in range(int(sys.argv[1]))))' $((N / 2)) \
  | "$A" tokens import --config "$CONFIG" --app half - > /dev/null
rate() { sed 's/.*rate=\([0-9.]*\).*/\1/'; }
: > "$WORK/runs.txt"
for run in $(seq "$RUNS"); do
  for side in A B; do
    bin=$A; [ "$side" = B ] && bin=$B
    t=$("$bin" tokens bench-register --config "$CONFIG" --app reg --count "$REG" --batch 100 | rate)
    f=$("$bin" tokens bench-register --config "$CONFIG" --app reg --count "$REG" --batch 100 --with-fields | rate)
    echo "round $run $side token-only $t/s with-fields $f/s ratio $(python3 -c "print(f'{$f / $t:.2f}')")"
    echo "$side $t $f" >> "$WORK/runs.txt"
  done
done
python3 - "$WORK/runs.txt" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for side in "AB":
    t = [float(r[1]) for r in rows if r[0] == side]; f = [float(r[2]) for r in rows if r[0] == side]
    tm, fm = statistics.median(t), statistics.median(f)
    rr = statistics.median(b / a for a, b in zip(t, f))
    print(f"{side}: token-only median {tm:,.0f}/s, with fields median {fm:,.0f}/s, ratio of medians {fm / tm:.2f}, median of round ratios {rr:.2f}")
PY
