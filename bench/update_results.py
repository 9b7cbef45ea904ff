#!/usr/bin/env python3
"""Replace the body of one '## SECTION' in bench/RESULTS.md with stdin (the heading is kept).

Usage: some_command | bench/update_results.py "HTTP API"
"""
import pathlib
import sys

section = sys.argv[1]
path = pathlib.Path(__file__).with_name("RESULTS.md")
body = sys.stdin.read().strip("\n")
lines = path.read_text().split("\n")
heading = f"## {section}"
if heading not in lines:
    lines += ["", heading, ""]
start = lines.index(heading) + 1
end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
lines[start:end] = ["", body, ""]
path.write_text("\n".join(lines).rstrip("\n") + "\n")
