#!/usr/bin/env bash
# The last step of `make test`: no process a test started may still run. make gives every step
# PUSHPROVIDER_TEST_RUN (one value per run) and every process a test starts inherits it (pushctl, simulators,
# PostgreSQL, tinyproxy, chromium, webhook receivers), so a process that still carries this run's value after the
# tests is a leftover: it is reported (pid, user, command line) and the step fails. Leftovers are then stopped
# (by pid, SIGKILL), so the machine is clean for the next run. Stragglers get 15 s to finish exiting first.
set -euo pipefail
: "${PUSHPROVIDER_TEST_RUN:?run by make test, which sets PUSHPROVIDER_TEST_RUN}"
exec python3 - "$PUSHPROVIDER_TEST_RUN" <<'PY'
import os, signal, sys, time

marker = b"PUSHPROVIDER_TEST_RUN=" + sys.argv[1].encode()

def ancestors():
    """This process and its parents (make, its shells): they carry the marker and are not leftovers."""
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        with open(f"/proc/{pid}/stat", "rb") as f:
            pid = int(f.read().rsplit(b")", 1)[1].split()[1])
    return pids

def leftovers():
    mine, found = ancestors(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in mine:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if marker not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            user = os.stat(f"/proc/{entry}").st_uid
        except OSError:  # gone meanwhile, or a zombie: not running
            continue
        if command:
            found.append((int(entry), user, command))
    return found

deadline = time.monotonic() + 15
found = leftovers()
while found and time.monotonic() < deadline:
    time.sleep(0.5)
    found = leftovers()
if not found:
    print("leftovers: PASS (no process of this test run is still running)")
    sys.exit(0)
for pid, user, command in found:
    print(f"leftovers: FAIL: pid {pid} (uid {user}) still running: {command[:300]}", file=sys.stderr)
for pid, _, _ in found:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
print(f"leftovers: {len(found)} process(es) left behind by the tests (stopped now)", file=sys.stderr)
sys.exit(1)
PY
