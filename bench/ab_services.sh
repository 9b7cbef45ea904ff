#!/usr/bin/env bash
# Two pushctl builds side by side, per service: client CPU per notification and wall time of `pushctl broadcast` for
# BASE and NEW, for an APNs app (N_APNS tokens), a Web Push app (N_WEB subscriptions minted by the simulator's push
# service) and an FCM app (N_FCM registration tokens), each on one `pushctl simulator` (NEW's) that checks every
# request as its service does. For a change to the senders: REPEAT (default 5) interleaved pairs per service (BASE,
# NEW, BASE, NEW, …; a fresh --id each run), the ratio NEW ÷ BASE the median of the pairwise ratios, every run
# listed. The configuration is in the flat form both builds read (each app keeps APNs keys: builds before the `apps.ID.apns`
# section could not load an app without them).
#   bash bench/ab_services.sh BASE_PUSHCTL NEW_PUSHCTL
# Prints a Markdown table; writes nothing into bench/RESULTS.md (copy what a decision rests on there).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: bench/ab_services.sh BASE_PUSHCTL NEW_PUSHCTL" >&2; exit 2; }
BASE=$(realpath "$1") NEW=$(realpath "$2")
for b in "$BASE" "$NEW"; do [ -x "$b" ] || { echo "ab_services.sh: $b is not executable" >&2; exit 2; }; done
N_APNS=${N_APNS:-50000} N_WEB=${N_WEB:-4000} N_FCM=${N_FCM:-50000} REPEAT=${REPEAT:-5}
WORK=$(mktemp -d /tmp/pushprovider-ab-services.XXXXXX)
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill -TERM "$SIM_PID" 2>/dev/null && wait "$SIM_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cd "$WORK"
"$NEW" cert make-dev --out certs --topic com.example.app > /dev/null
"$NEW" webpush key new --out vapid.pem > vapid.pub
"$NEW" fcm account new --out fcm.json > /dev/null
apns='"topic": "com.example.app", "endpoint": "simulator", "auth": {"p12": "certs/client.p12", "passwordFile": "certs/client.p12.password"}'
cat > c.json <<JSON
{"database": "registry.sqlite", "simulator": {"host": "127.0.0.1", "port": $PORT, "certificates": "certs"},
 "apps": {"apns": {$apns},
          "web": {$apns, "webpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com", "allowedHosts": ["127.0.0.1:$PORT"], "caFile": "certs/ca.pem"}},
          "android": {$apns, "fcm": {"serviceAccount": "fcm.json", "endpoint": "simulator"}}}}
JSON
"$NEW" simulator --config c.json --client-auth either --fcm-service-account fcm.json > sim.log 2>&1 &
SIM_PID=$!
for _ in $(seq 100); do grep -q "listening on" sim.log && break; sleep 0.1; done
python3 -c "import random; [print('%064x' % random.getrandbits(256)) for _ in range($N_APNS)]" | "$NEW" tokens import --config c.json --app apns - > /dev/null
python3 -c "
import random, string
a = string.ascii_letters + string.digits + '-_'
for _ in range($N_FCM): print(''.join(random.choices(a, k=22)) + ':APA91b' + ''.join(random.choices(a, k=134)))" \
  | "$NEW" tokens import --config c.json --app android --service fcm - > /dev/null
python3 "$OLDPWD/Tests/webpush/mint_subscriptions.py" 127.0.0.1 "$PORT" certs/ca.pem "$(cat vapid.pub)" "$N_WEB" 0 \
  | python3 -c 'import json, sys; [print(json.dumps({"subscription": json.loads(l)["subscription"]})) for l in sys.stdin]' \
  | "$NEW" tokens import --config c.json --app web --service webpush - > /dev/null

run() {  # run BIN APP → "cpu_s wall_s"
  local id="ab-$(date +%s%N)"
  /usr/bin/time -f "%U %S %e" -o t.txt "$1" broadcast --config c.json --app "$2" --id "$id" --alert "A/B" > out.txt 2>&1 \
    || { cat out.txt >&2; exit 1; }
  grep -q "completed" out.txt || { cat out.txt >&2; exit 1; }
  awk '{printf "%.3f %.3f", $1 + $2, $3}' t.txt
}
echo "| service | devices | BASE CPU µs/notification (median) | NEW CPU µs/notification (median) | NEW ÷ BASE (median of $REPEAT pairs) | pairs |"
echo "|---|---|---|---|---|---|"
for pair in apns:$N_APNS web:$N_WEB android:$N_FCM; do
  app=${pair%%:*} n=${pair#*:}
  run "$BASE" "$app" > /dev/null; run "$NEW" "$app" > /dev/null  # warm-up: page cache, the first grants
  ratios=() bases=() news=()
  for _ in $(seq "$REPEAT"); do
    read -r bc _ <<< "$(run "$BASE" "$app")"
    read -r nc _ <<< "$(run "$NEW" "$app")"
    bases+=("$bc") news+=("$nc")
    ratios+=("$(python3 -c "print('%.3f' % ($nc / $bc))")")
  done
  median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
  mb=$(median "${bases[@]}") mn=$(median "${news[@]}") mr=$(median "${ratios[@]}")
  echo "| $app | $n | $(python3 -c "print('%.1f' % ($mb * 1e6 / $n))") | $(python3 -c "print('%.1f' % ($mn * 1e6 / $n))") | $mr | ${ratios[*]} |"
done
