#!/usr/bin/env bash
# Instructions per notification, by library, of `pushctl broadcast` and of bare libcurl (bench/curl_ceiling.c,
# socket-action mode, the same window on one connection), each run once under valgrind's callgrind against the
# simulator at 0 ms. Instruction counts do not drift with the box as CPU time does (±25% here): a change worth a few
# percent, which ab_broadcast.sh cannot resolve in three rounds, shows here. They leave out what only time shows
# (cache misses, threads waking one another, the kernel), so a decision needs both.
#   bash bench/instructions.sh PUSHCTL [PUSHCTL2]
# N (default 60000) devices on SQLite; WINDOW (default 500). With two builds both are counted against the same
# registry. Runs take ~3 min each (callgrind is ~50× slower). valgrind cannot read the DWARF of a Swift binary
# ("Possibly corrupted debuginfo file"): each build is counted from a copy with its debug sections stripped (its
# symbols stay). Prints a Markdown table; writes nothing into bench/RESULTS.md. KEEP=DIR keeps the callgrind
# outputs (cg.pushctl-1, cg.curl, ...) in DIR, for callgrind_annotate by function.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: bench/instructions.sh PUSHCTL [PUSHCTL2]" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "instructions.sh: needs valgrind (make bench-deps installs it)" >&2; exit 2; }
BUILDS=()
for b in "$@"; do [ -x "$b" ] || { echo "instructions.sh: $b is not executable" >&2; exit 2; }; BUILDS+=("$(realpath "$b")"); done
BIN=${BUILDS[0]}
N=${N:-60000}
WINDOW=${WINDOW:-500}
. bench/lib.sh
bench_workspace
build_curl_ceiling
random_tokens "$WORK/tokens.txt" "$N"
start_simulator --client-auth certificate --delay-ms 0
simulator_config "$WORK/config.json" registry.sqlite com.example.bench bench
python3 - "$WORK/config.json" "$WINDOW" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["apps"]["bench"].update(connections=1, window=int(sys.argv[2]))
json.dump(c, open(sys.argv[1], "w"))
PY
"$BIN" tokens import --config "$WORK/config.json" --app bench "$WORK/tokens.txt" > /dev/null

# count NAME COMMAND...: runs COMMAND under callgrind, writes "NAME LIBRARY INSTRUCTIONS" lines for each object file.
count() {
  local name=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$name" "$@" > "$WORK/out.$name" 2> "$WORK/err.$name" \
    || { tail -n 5 "$WORK/err.$name" >&2; exit 1; }
  callgrind_annotate --threshold=100 "$WORK/cg.$name" | python3 -c '
import collections, re, sys
name, libs = sys.argv[1], collections.Counter()
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+\S.*\[(.*)\]\s*$", line)
    if m: libs[m.group(2)] += int(m.group(1).replace(",", ""))
for lib, n in libs.items(): print(name, lib, n)' "$name" >> "$WORK/counts"
}
: > "$WORK/counts"
i=0
for b in "${BUILDS[@]}"; do
  i=$((i + 1))
  strip --strip-debug -o "$WORK/pushctl-$i" "$b"
  count "pushctl-$i" "$WORK/pushctl-$i" broadcast --config "$WORK/config.json" --app bench --id "instructions-$i" \
    --alert "Benchmark digest" --json
  python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["accepted"]; assert a == int(sys.argv[2]), a' \
    "$WORK/out.pushctl-$i" "$N"
done
count curl "$WORK/curl_ceiling" --socket-action "https://localhost:$PORT" "$CERTS" "$N" "$WINDOW" $(( WINDOW / 5 )) \
  instructions-curl 1
stop_simulator
[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP"; cp "$WORK"/cg.* "$KEEP"/; }
python3 - "$WORK/counts" "$N" "${BUILDS[@]}" <<'PY'
import collections, os, sys
n, builds = int(sys.argv[2]), sys.argv[3:]
counts = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    name, lib, count = line.split()
    lib = os.path.basename(lib)
    lib = "pushctl" if lib.startswith("pushctl-") else "curl_ceiling" if lib == "curl_ceiling" else lib.split(".so")[0]
    counts[name][lib] = counts[name].get(lib, 0) + int(count)
names = [f"pushctl-{i + 1}" for i in range(len(builds))] + ["curl"]
libs = sorted({l for c in counts.values() for l in c}, key=lambda l: -max(c.get(l, 0) for c in counts.values()))
print("| per notification | " + " | ".join(f"`{os.path.basename(b)}`" for b in builds) + " | bare libcurl |")
print("|---" * (len(names) + 1) + "|")
for lib in libs:
    cells = [counts[nm].get(lib, 0) / n for nm in names]
    if max(cells) >= 100: print(f"| {lib} | " + " | ".join(f"{c:,.0f}" for c in cells) + " |")
tot = [sum(counts[nm].values()) / n for nm in names]
print("| **total** | " + " | ".join(f"**{t:,.0f}**" for t in tot) + " |")
print("| ÷ bare libcurl | " + " | ".join(f"{t / tot[-1]:.3f}×" for t in tot) + " |")
PY
