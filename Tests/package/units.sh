#!/usr/bin/env bash
# The shipped systemd units (Config/pushprovider*): each .service scores 3.0 or less on
# `systemd-analyze security --offline=true` (today's exposure scale: 0 safe … 10 exposed; the unit this replaced
# scored 8.5), every unit passes `systemd-analyze verify` apart from the binary not being installed here, and the
# services share one hardening block, so a setting added to one is added to all. make test runs it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIMIT=3.0
command -v systemd-analyze >/dev/null || { echo "units: FAILED: systemd-analyze missing (make deps installs systemd)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/pushprovider-units.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
status=0
services=$(cd "$ROOT/Config" && ls pushprovider*.service)
[ -n "$services" ] || { echo "units: FAILED: no Config/pushprovider*.service" >&2; exit 1; }
for unit in $services; do
  # A template is scored as an instance.
  name=${unit/@.service/@example.service}
  cp "$ROOT/Config/$unit" "$WORK/$name"
  systemd-analyze security --offline=true --no-pager "$WORK/$name" > "$WORK/$name.security" 2>&1 || true
  score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$WORK/$name.security")
  [ -n "$score" ] || { cat "$WORK/$name.security"; echo "units: FAILED: no score for $unit" >&2; exit 1; }
  if awk -v s="$score" -v l="$LIMIT" 'BEGIN { exit !(s <= l) }'; then
    echo "units: $unit: exposure $score (limit $LIMIT)"
  else
    grep '✗' "$WORK/$name.security" || true
    echo "units: FAILED: $unit scores $score, above $LIMIT" >&2
    status=1
  fi
  # The hardening block, from its heading to the end of [Service].
  sed -n '/^# Hardening/,/^\[Install\]/p' "$ROOT/Config/$unit" | grep -v '^\[Install\]' > "$WORK/$unit.hardening"
  [ -s "$WORK/$unit.hardening" ] || { echo "units: FAILED: $unit has no '# Hardening' block" >&2; status=1; }
done
# The long-running services reload their configuration on SIGHUP (`systemctl reload`).
for unit in pushprovider.service pushprovider-worker@.service; do
  grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$ROOT/Config/$unit" || { echo "units: FAILED: $unit has no ExecReload=/bin/kill -HUP \$MAINPID" >&2; status=1; }
done
first=$(echo "$services" | head -1)
for unit in $services; do
  cmp -s "$WORK/$first.hardening" "$WORK/$unit.hardening" || { echo "units: FAILED: $unit's hardening differs from $first's" >&2; diff "$WORK/$first.hardening" "$WORK/$unit.hardening" >&2; status=1; }
done
# systemd's own checks of every unit (the timer with its service beside it); the only complaint allowed is the
# binary's absence (Tests/package/deb.sh verifies the installed units with the binary in place).
cp "$ROOT"/Config/pushprovider*.timer "$ROOT"/Config/pushprovider-maintenance.service "$WORK/"
for path in "$WORK"/pushprovider.service "$WORK"/pushprovider-worker@example.service "$WORK"/pushprovider-maintenance.timer; do
  systemd-analyze verify --man=no "$path" 2>&1 | grep -v 'Command /usr/bin/pushctl is not executable' > "$WORK/verify.txt" || true
  [ ! -s "$WORK/verify.txt" ] || { cat "$WORK/verify.txt" >&2; echo "units: FAILED: systemd-analyze verify $(basename "$path")" >&2; status=1; }
done
[ "$status" = 0 ] && echo "units: PASS"
exit $status
