#!/usr/bin/env python3
"""CPU per thread name of one process, sampled from /proc until it ends (bench_connections.sh).

Usage: threads.py MARKER OUT — waits (at most 20 s) for a `pushctl` process whose command line holds MARKER, reads
/proc/PID/task/*/stat every 100 ms while it runs, and writes OUT: one line per thread name, its user + system seconds
(each thread's last sample: a thread is counted until it ends; the last < 100 ms of each are missed)."""
import os, sys, time

marker, out = sys.argv[1], sys.argv[2]
tick = os.sysconf("SC_CLK_TCK")


def find():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"pushctl" and any(marker.encode() in a for a in argv):
            return pid
    return None


deadline = time.monotonic() + 20
pid = None
while pid is None and time.monotonic() < deadline:
    pid = find()
    if pid is None:
        time.sleep(0.01)
if pid is None:
    sys.exit(f"threads.py: no pushctl process with {marker}")
last = {}  # tid -> (name, ticks)
while True:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        break
    for tid in tids:
        try:
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        last[tid] = (name, int(fields[11]) + int(fields[12]))
    time.sleep(0.1)
by_name = {}
for name, ticks in last.values():
    by_name[name] = by_name.get(name, 0) + ticks
with open(out, "w") as f:
    for name, ticks in sorted(by_name.items(), key=lambda kv: -kv[1]):
        f.write(f"{name}\t{ticks / tick:.2f}\n")
