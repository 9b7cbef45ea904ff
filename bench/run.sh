#!/usr/bin/env bash
# Runs every benchmark script in bench/ (release build). Each script appends its own section's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
for script in bench/bench_*.sh; do
  [ -e "$script" ] || continue
  echo "== $script"
  bash "$script"
done
