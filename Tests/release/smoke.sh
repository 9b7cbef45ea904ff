#!/usr/bin/env bash
# The release binary (`make release`: static Swift runtime, linker flags the debug build used by every other test
# does not have) does its main jobs: prints its help, runs the simulator, imports tokens, sends to one device and
# broadcasts to all of them, each checked in its output. Usage: bash Tests/release/smoke.sh .build/release/pushctl
set -euo pipefail
BIN=$(realpath "${1:?usage: smoke.sh PUSHCTL}")
WORK=$(mktemp -d)
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
fail() { echo "release smoke: $*" >&2; exit 1; }

# Outputs are read whole, then searched: `cmd | grep -q` fails under pipefail when grep stops before cmd is done.
HELP=$("$BIN" --help) || fail "--help exited $?"
grep -q "self-hosted push provider for APNs, Web Push and FCM" <<<"$HELP" || fail "--help does not describe pushctl"
"$BIN" cert make-dev --out "$WORK/certs" --topic com.example.smoke > /dev/null
CERTS="$WORK/certs"
. "$(dirname "$0")/../../bench/lib.sh"
start_simulator --client-auth certificate --record "$WORK/record.jsonl"
simulator_config "$WORK/pushctl.json" registry.sqlite com.example.smoke smoke
python3 -c 'import os; print("\n".join(os.urandom(32).hex() for _ in range(300)))' > "$WORK/tokens.txt"
IMPORTED=$("$BIN" tokens import --config "$WORK/pushctl.json" --app smoke "$WORK/tokens.txt") || fail "tokens import exited $?"
grep -q "imported 300 tokens" <<<"$IMPORTED" || fail "tokens import did not report 300 tokens: $IMPORTED"
TOKEN=$(head -n 1 "$WORK/tokens.txt")
"$BIN" send --config "$WORK/pushctl.json" --app smoke --token "$TOKEN" --alert "Smoke" > "$WORK/send.out" \
  || fail "send exited $? ($(cat "$WORK/send.out"))"
grep -q " 200 accepted " "$WORK/send.out" || fail "send did not report 200 accepted: $(cat "$WORK/send.out")"
"$BIN" broadcast --config "$WORK/pushctl.json" --app smoke --id smoke-1 --alert "Smoke" --json > "$WORK/broadcast.out" 2> /dev/null \
  || fail "broadcast exited $?"
python3 - "$WORK/broadcast.out" <<'PY'
import json, sys
report = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
if (report["state"], report["accepted"], report["total"]) != ("completed", 300, 300):
    sys.exit(f"release smoke: broadcast report {report}")
PY
# The relocation table was read once by the dynamic loader and given back (ExecutableImage): none of its whole
# pages is resident in the simulator, which has been running and serving.
python3 - "$SIM_PID" "$BIN" <<'PY'
import re, struct, subprocess, sys
pid, exe = sys.argv[1], sys.argv[2]
section = next((int(m.group(1), 16), int(m.group(2), 16))
               for m in (re.match(r'\s*\[\s*\d+\]\s+\.rela\.dyn\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)', line)
                         for line in subprocess.run(["readelf", "-S", "-W", exe], capture_output=True, text=True).stdout.splitlines())
               if m)
offset, size = section
first, last = (offset + 4095) // 4096, (offset + size) // 4096   # whole pages of the table, by file page
resident = 0
with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
    for line in open(f"/proc/{pid}/maps"):
        fields = line.split()
        if len(fields) < 6 or fields[5] != exe: continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        file_page = int(fields[2], 16) // 4096
        for page in range(max(first, file_page), min(last, file_page + (high - low) // 4096)):
            pagemap.seek((low // 4096 + page - file_page) * 8)
            resident += struct.unpack("Q", pagemap.read(8))[0] >> 63
if last - first < 100: sys.exit(f"release smoke: .rela.dyn holds only {last - first} whole pages; is pushctl still position independent?")
if resident: sys.exit(f"release smoke: {resident} of the {last - first} whole pages of .rela.dyn are resident in the simulator")
PY
stop_simulator
RECORDED=$(wc -l < "$WORK/record.jsonl")
[ "$RECORDED" -eq 301 ] || fail "the simulator recorded $RECORDED notifications, not 301 (1 send + 300 broadcast)"
echo "release smoke: PASS (help, simulator, import, send, broadcast of 300, relocation table released)"
