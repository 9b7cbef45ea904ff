#!/usr/bin/env bash
# The container image as an operator meets it (make test runs it, as root, beside the release smoke test): builds it
# from the release pushctl (packaging/image.sh, as `make image` does; no compile here), loads both archives into
# podman (one image id), and runs it under podman with a read-only root file system:
#   serve    on SQLite in the image's volume, the configuration and secrets mounted read-only, its built-in
#            simulator: /healthz through a published port, `pushctl doctor` inside, a device registered and a send
#            job accepted by the simulator over HTTP, the HEALTHCHECK healthy, JSON logs, SIGTERM within 30 s
#   worker   on PostgreSQL in another container (an image built here the same way from Debian's postgresql-15), named
#            by the environment (an env file, as deploy/kubernetes's envFrom) and not the file,
#            sending to `pushctl simulator` in a third container on the same podman network: a broadcast started
#            with `broadcast --detach` (as the CronJob does) is completed by the worker alone, SIGTERM within 30 s;
#            SIGTERM in the middle of a second one drains (exit 0, shards given back) and a new worker finishes it
# and checks it runs as pushprovider (10001), not root, with a read-only root (podman inspect, and a write that fails),
# `--version` naming the commit, and prints the image's size and package list.
# Everything podman keeps (images, containers, volumes, the network) lives in a private storage directory of this
# run, removed at the end with every container it started, also when a step fails (trap).
# Usage: Tests/image/image.sh [path/to/release/pushctl]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PUSHCTL=${1:-$ROOT/.build/release/pushctl}
case "$PUSHCTL" in /*) ;; *) PUSHCTL="$PWD/$PUSHCTL" ;; esac
START=$(date +%s.%N)
say() { echo "image: $*"; }
fail() { say "FAIL: $*" >&2; exit 1; }
elapsed() { python3 -c "import sys,time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }
[ -x "$PUSHCTL" ] || fail "no pushctl at $PUSHCTL (make release first)"

# ---- podman and runc: installed from Debian when missing (as root), else the command to run
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing podman and runc from Debian"
    { [ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -60 2>/dev/null | head -1)" ] || apt-get update -qq; } \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc >/dev/null \
      || fail "apt-get install podman runc failed"
  else
    fail "podman and runc are missing: sudo apt-get install -y podman runc"
  fi
fi
[ "$(id -u)" = 0 ] || fail "run as root: rootful podman (the test's network, its published ports)"
for tool in curl python3 runuser; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/postgres" ] || fail "PostgreSQL is not installed (make deps installs it)"

WORK=$(mktemp -d /tmp/pushprovider-image.XXXXXX)
chmod 755 "$WORK"
ID=$$
N=pp$ID                           # every container, volume and the network are named after this run
# podman here: runc (crun fails in this sandbox), no default ulimits (setrlimit is not permitted), and every
# piece of state in $WORK (docs/operating.md, "Containers and Kubernetes", says why these settings).
cat > "$WORK/containers.conf" <<EOF
[containers]
default_ulimits = []
[engine]
runtime = "runc"
events_logger = "none"
tmp_dir = "$WORK/podman-tmp"
[network]
network_config_dir = "$WORK/networks"
EOF
cat > "$WORK/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$WORK/storage"
runroot = "$WORK/runroot"
EOF
export CONTAINERS_CONF="$WORK/containers.conf" CONTAINERS_STORAGE_CONF="$WORK/storage.conf"
# podman's own noise on stderr in this sandbox (no systemd for health-check timers, no syslog for conmon) is kept
# in $WORK/podman.err and shown when a step fails.
pm() { podman "$@" 2>>"$WORK/podman.err"; }
cleanup() {
  local status=$?
  set +e
  if [ "$status" != 0 ]; then
    for c in serve sim worker worker2 worker3 pg; do
      if podman container exists "$N-$c" 2>/dev/null; then echo "--- logs of $N-$c"; podman logs --tail 30 "$N-$c" 2>&1; fi
    done
    echo "--- podman's stderr"; tail -20 "$WORK/podman.err" 2>/dev/null
  fi
  [ -n "${PG_BUILD:-}" ] && kill "$PG_BUILD" 2>/dev/null && wait "$PG_BUILD" 2>/dev/null
  podman rm -a -f -t 0 >/dev/null 2>&1
  podman volume prune -f >/dev/null 2>&1
  podman network rm -f "$N" >/dev/null 2>&1
  podman rmi -a -f >/dev/null 2>&1
  # overlay mounts of the private storage, if podman left any
  grep -o " $WORK/[^ ]*" /proc/mounts 2>/dev/null | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  rm -rf "$WORK"
  exit $status
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: expected '$3', got '$2'"; }
json() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))" "$@"; }

# ---- PostgreSQL's image, built beside pushprovider's: postgres and its libraries from this machine's postgresql-15
# package (no shell, no initdb: the data directory is made here with the machine's initdb and mounted)
PGVER=$(basename "$(dirname "$PGBIN")")
PG_UID=$(id -u postgres); PG_GID=$(id -g postgres)
python3 - "$WORK/pg-spec.json" "$PGBIN" "$PGVER" "$PG_UID" "$PG_GID" <<'PY'
import json, sys
path, pgbin, ver, uid, gid = sys.argv[1:]
json.dump({
    "name": "localhost/pushprovider-test-postgres", "tag": ver,
    "system": [f"{pgbin}/postgres", f"/usr/lib/postgresql/{ver}/lib/plpgsql.so"],
    "trees": [{"path": f"/usr/share/postgresql/{ver}", "exclude": ["man", "extension", "contrib"]},
              {"path": "/usr/share/zoneinfo", "exclude": ["right"]}],
    "text": [{"path": "/etc/passwd", "content": f"root:x:0:0:root:/root:/usr/sbin/nologin\npostgres:x:{uid}:{gid}::/var/lib/postgresql:/usr/sbin/nologin\n"},
             {"path": "/etc/group", "content": f"root:x:0:\npostgres:x:{gid}:\n"}],
    "config": {"User": f"{uid}:{gid}", "Entrypoint": [f"{pgbin}/postgres"], "StopSignal": "SIGINT",
               "Env": ["PATH=/usr/bin", "TZ=UTC"]},
}, open(path, "w"))
PY
python3 "$ROOT/packaging/image.py" "$WORK/pg-spec.json" "$WORK/pg-image" > "$WORK/pg-image.json" &
PG_BUILD=$!

# ---- pushprovider's image, as `make image` builds it
T0=$(date +%s.%N)
bash "$ROOT/packaging/image.sh" "$PUSHCTL" "$WORK/image" > "$WORK/image.json" 2> "$WORK/image.err" || { cat "$WORK/image.err"; fail "packaging/image.sh"; }
BUILD_SECONDS=$(elapsed "$T0")
IMAGE_JSON=$(cat "$WORK/image.json")
VERSION=$("$PUSHCTL" --version | sed -n '1s/^pushctl //p')
COMMIT=$("$PUSHCTL" --version | sed -n 's/^commit //p')
IMAGE=localhost/pushprovider:$VERSION
expect_eq "image name" "$(json "$IMAGE_JSON" 'd["ref"]')" "$IMAGE"
T0=$(date +%s.%N)
pm load -q -i "$(json "$IMAGE_JSON" 'd["oci"]')" > /dev/null || fail "podman load of the OCI archive"
OCI_ID=$(pm image inspect --format '{{.Id}}' "$IMAGE")
pm rmi -f "$IMAGE" > /dev/null
pm load -q -i "$(json "$IMAGE_JSON" 'd["docker"]')" > /dev/null || fail "podman load of the docker-archive"
expect_eq "image id of the docker-archive" "$(pm image inspect --format '{{.Id}}' "$IMAGE")" "$OCI_ID"
expect_eq "image id" "sha256:$OCI_ID" "$(json "$IMAGE_JSON" 'd["id"]')"
LOAD_SECONDS=$(elapsed "$T0")
SIZE_BYTES=$(pm image inspect --format '{{.Size}}' "$IMAGE")
say "built $IMAGE in ${BUILD_SECONDS}s (loaded both archives in ${LOAD_SECONDS}s, one id ${OCI_ID:0:12}): $(python3 -c "print(f'{$SIZE_BYTES/1e6:.1f}')") MB unpacked, OCI archive $(du -k "$(json "$IMAGE_JSON" 'd["oci"]')" | cut -f1) KB, docker-archive $(du -k "$(json "$IMAGE_JSON" 'd["docker"]')" | cut -f1) KB"
say "packages in the image:"
sed 's/^/image:   /' "$(json "$IMAGE_JSON" 'd["packages"]')"

# The image's configuration
INSPECT=$(pm image inspect "$IMAGE")
check_config() { python3 - "$INSPECT" <<'PY' || fail "the image's configuration"
import json, sys
d = json.loads(sys.argv[1])[0]
c = d["Config"]
want = {"User": "10001:10001", "Entrypoint": ["/usr/bin/pushctl"], "Cmd": ["serve"], "WorkingDir": "/var/lib/pushprovider",
        "StopSignal": "SIGTERM"}
bad = [f"{k}={c.get(k)!r} (want {v!r})" for k, v in want.items() if c.get(k) != v]
if "/var/lib/pushprovider" not in (c.get("Volumes") or {}): bad.append(f"Volumes={c.get('Volumes')}")
env = c.get("Env") or []
for e in ("PUSHCTL_CONFIG=/etc/pushprovider/pushctl.json", "PUSHCTL_LOG_FORMAT=json"):
    if e not in env: bad.append(f"Env lacks {e}")
hc = d.get("Healthcheck") or {}
if "http://127.0.0.1:8080/healthz" not in (hc.get("Test") or []): bad.append(f"Healthcheck={hc}")
if bad: print("image:", "; ".join(bad), file=sys.stderr); sys.exit(1)
PY
}
check_config
VERSION_OUT=$(pm run --rm --read-only "$IMAGE" --version)
expect_eq "--version in the image" "$(sed -n 1p <<<"$VERSION_OUT")" "pushctl $VERSION"
expect_eq "--version's commit in the image" "$(sed -n 's/^commit //p' <<<"$VERSION_OUT")" "$COMMIT"
[[ "$COMMIT" =~ ^[0-9a-f]{40}(-dirty)?$ ]] || fail "the binary names no commit ('$COMMIT'): build it with make"
grep -q '^libcurl 7\|^libcurl 8' <<<"$VERSION_OUT" || fail "--version in the image names no libcurl: $VERSION_OUT"
say "--version in the image: $(tr '\n' ' ' <<<"$VERSION_OUT")"

# ---- serve: the configuration and secrets as a Kubernetes Secret mounts them (root:pushprovider, 0640), read-only
ETC=$WORK/etc-serve
mkdir -p "$ETC"
"$PUSHCTL" cert make-dev --out "$ETC/simulator" --topic com.example.app > /dev/null
"$PUSHCTL" apikey new --app example --kind registration > "$WORK/registration.key" 2> /dev/null
"$PUSHCTL" apikey new --app example --kind send > "$WORK/send.key" 2> /dev/null
# The keys go to curl in header files (-H @FILE), never in argv.
( umask 077
  printf 'Authorization: Bearer %s\n' "$(sed -n 's/^key: //p' "$WORK/registration.key")" > "$WORK/registration.header"
  printf 'Authorization: Bearer %s\n' "$(sed -n 's/^key: //p' "$WORK/send.key")" > "$WORK/send.header" )
python3 - "$ETC/pushctl.json" "$(sed -n 2p "$WORK/registration.key")" "$(sed -n 2p "$WORK/send.key")" <<'PY'
import json, sys
path, registration, send = sys.argv[1:]
json.dump({
    "database": "/var/lib/pushprovider/pushctl.sqlite",
    "server": {"host": "0.0.0.0", "port": 8080, "admin": {"host": "0.0.0.0", "port": 8081}},
    "simulator": {"host": "127.0.0.1", "port": 2197, "certificates": "/etc/pushprovider/simulator"},
    "apps": {"example": {
        "apns": {"topic": "com.example.app", "endpoint": "simulator",
                 "auth": {"p12": "/etc/pushprovider/simulator/client.p12",
                          "passwordFile": "/etc/pushprovider/simulator/client.p12.password"}},
        "registrationKeys": [registration], "sendKeys": [send]}},
}, open(path, "w"), indent=2)
PY
secrets_as_kubernetes() { # DIR: root:10001, directories 0750, files 0640 (fsGroup 10001, defaultMode 0440 + group)
  chown -R 0:10001 "$1"; find "$1" -type d -exec chmod 0750 {} +; find "$1" -type f -exec chmod 0640 {} +
}
secrets_as_kubernetes "$ETC"
PORT=$(free_port)
pm network create --subnet "10.78.$((ID % 200)).0/24" "$N" > /dev/null || fail "podman network create"
RO=(--read-only --read-only-tmpfs=false)   # no tmpfs either: nothing in the image is writable but the volume
T0=$(date +%s.%N)
pm run -d --name "$N-serve" --network "$N" "${RO[@]}" -p "127.0.0.1:$PORT:8080" \
  -v "$ETC:/etc/pushprovider:ro" -v "$N-data:/var/lib/pushprovider" "$IMAGE" serve > /dev/null || fail "podman run serve"
for _ in $(seq 1 150); do
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  [ "$(pm inspect --format '{{.State.Running}}' "$N-serve")" = true ] || fail "pushctl serve exited: $(pm logs "$N-serve" 2>&1 | tail -5)"
  sleep 0.2
done
expect_eq "/healthz through the published port" "$(curl -s "http://127.0.0.1:$PORT/healthz")" '{"status":"ok"}'
# The Kubernetes probes (deploy/kubernetes/base/serve.yaml) on the same port.
expect_eq "/livez through the published port" "$(curl -s "http://127.0.0.1:$PORT/livez")" '{"status":"alive"}'
expect_eq "/readyz through the published port" "$(curl -s "http://127.0.0.1:$PORT/readyz")" '{"status":"ready"}'
say "serve answered /healthz through 127.0.0.1:$PORT after $(elapsed "$T0")s"
expect_eq "public /metrics" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")" "404"

# Non-root, read-only root: as podman says, as the kernel says, and as a write finds
expect_eq "ReadonlyRootfs" "$(pm inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$N-serve")" "true"
expect_eq "the container's user" "$(pm inspect --format '{{.Config.User}}' "$N-serve")" "10001:10001"
SERVE_PID=$(pm inspect --format '{{.State.Pid}}' "$N-serve")
expect_eq "pushctl serve's uid and gid (/proc)" "$(awk '/^Uid:/ { u = $2 } /^Gid:/ { g = $2 } END { print u ":" g }' "/proc/$SERVE_PID/status")" "10001:10001"
expect_eq "pushctl serve's executable" "$(readlink "/proc/$SERVE_PID/exe")" "/usr/bin/pushctl"
for path in /usr/bin/written.pem /etc/pushprovider/written.pem /tmp/written.pem; do
  if podman exec "$N-serve" /usr/bin/pushctl webpush key new --out "$path" > "$WORK/write.out" 2>&1; then
    fail "a write to $path inside the container succeeded"
  fi
  grep -q "$path: Read-only file system" "$WORK/write.out" || fail "a write to $path failed otherwise: $(cat "$WORK/write.out")"
done
podman exec "$N-serve" /usr/bin/pushctl webpush key new --out /var/lib/pushprovider/written.pem > "$WORK/write.out" 2>&1 \
  || fail "the volume /var/lib/pushprovider is not writable: $(cat "$WORK/write.out")"
say "runs as 10001:10001 with a read-only root: writes to /usr/bin, /etc/pushprovider and /tmp fail, the volume takes them"

# pushctl doctor inside: the configuration, the mounted secrets' modes, the simulator's endpoint and trust, SQLite
pm exec "$N-serve" /usr/bin/pushctl doctor > "$WORK/doctor.txt" 2>&1 || { cat "$WORK/doctor.txt"; fail "pushctl doctor inside the container"; }
sed 's/^/image: doctor: /' "$WORK/doctor.txt"

# A device registers as the classic iOS client does, a backend sends to it, the built-in simulator accepts it
TOKEN=740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad
expect_eq "registration" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/v1/apps/example/devices" \
  -H @"$WORK/registration.header" --data 'oldToken=(null)&newToken=<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>')" "201"
expect_eq "send job" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/v1/apps/example/notifications" \
  -H @"$WORK/send.header" -H 'Content-Type: application/json' \
  --data "{\"id\":\"image-test\",\"tokens\":[\"$TOKEN\"],\"alert\":\"Hello from the image\"}")" "202"
STATE=
for _ in $(seq 1 150); do
  STATE=$(curl -s "http://127.0.0.1:$PORT/v1/apps/example/notifications/image-test" -H @"$WORK/send.header")
  python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1]).get("state") != "completed")' "$STATE" 2>/dev/null && break
  sleep 0.2
done
python3 -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(not (j["state"] == "completed" and j["accepted"] == 1 and j["total"] == 1))' "$STATE" \
  || fail "the job did not complete with one accepted notification: $STATE"
METRICS=$(pm exec "$N-serve" /usr/bin/curl -sS http://127.0.0.1:8081/metrics) || fail "the admin listener's /metrics"
grep -qF 'pushprovider_deliveries_total{app="example",service="apns",status="200",reason=""} 1' <<<"$METRICS" || fail "/metrics does not count the delivery"
say "serve: a device registered over HTTP, a send job accepted by the built-in simulator, counted on the admin listener"
# podman cannot start the check's systemd timer here; `podman healthcheck run` runs it once (exit 0: healthy).
pm healthcheck run "$N-serve" > "$WORK/health.txt" || fail "the image's HEALTHCHECK: $(cat "$WORK/health.txt")"
expect_eq "HEALTHCHECK" "$(pm inspect --format '{{.State.Health.Status}}' "$N-serve")" "healthy"

# SIGTERM: podman stop sends the image's StopSignal; serve drains and exits 0 within its 30 s
T0=$(date +%s.%N)
pm stop -t 60 "$N-serve" > /dev/null
STOP_SECONDS=$(elapsed "$T0")
expect_eq "serve's exit status after SIGTERM" "$(pm inspect --format '{{.State.ExitCode}}' "$N-serve")" "0"
python3 -c "import sys; sys.exit(not $STOP_SECONDS < 30)" || fail "serve took ${STOP_SECONDS}s to stop (more than its 30 s)"
podman logs "$N-serve" > "$WORK/serve.out" 2> "$WORK/serve.err"
# Logs: every line pushctl logs (its stderr) is a JSON object; its stdout holds only the startup banner for people
# (the listeners' addresses), and the test says how many lines that was.
python3 - "$WORK/serve.err" "$WORK/serve.out" <<'PY' || fail "serve's logs are not JSON lines"
import json, sys
err = [l for l in open(sys.argv[1]).read().splitlines() if l.strip()]
out = [l for l in open(sys.argv[2]).read().splitlines() if l.strip()]
bad = []
for line in err:
    try:
        o = json.loads(line)
        if not (isinstance(o, dict) and {"timestamp", "level", "label", "message"} <= set(o)):
            bad.append(line)
    except ValueError:
        bad.append(line)
if bad or len(err) < 5:
    print(f"image: {len(err)} log lines, not JSON: {bad[:5]}", file=sys.stderr); sys.exit(1)
messages = [json.loads(l)["message"] for l in err]
if not any("completed: 1/1 accepted" in m for m in messages):
    print("image: the log has no line for the completed send job", file=sys.stderr); sys.exit(1)
print(f"image: serve logged {len(err)} lines, each a JSON object (stderr); its banner on stdout: {len(out)} lines")
PY
say "serve stopped on SIGTERM in ${STOP_SECONDS}s, exit 0"

# ---- worker on PostgreSQL in another container, sending to `pushctl simulator` in a third
wait "$PG_BUILD" || { PG_BUILD=; fail "building the PostgreSQL image"; }
PG_BUILD=
PG_JSON=$(cat "$WORK/pg-image.json")
pm load -q -i "$(json "$PG_JSON" 'd["oci"]')" > /dev/null || fail "podman load of the PostgreSQL image"
PGIMAGE=$(json "$PG_JSON" 'd["ref"]')
mkdir -p "$WORK/pg"
chown postgres:postgres "$WORK/pg"
DBPASS=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
( umask 077; printf '%s\n' "$DBPASS" > "$WORK/pg/pwfile" ); chown postgres "$WORK/pg/pwfile"
runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres --pwfile="$WORK/pg/pwfile" -A scram-sha-256 \
  -E UTF8 --locale=C > "$WORK/pg/initdb.log" 2>&1 || { cat "$WORK/pg/initdb.log"; fail "initdb"; }
echo "host all all 10.78.0.0/16 scram-sha-256" >> "$WORK/pg/data/pg_hba.conf"
# The application's role and database, in single-user mode (the password on stdin, not in argv)
# (-j: a statement ends at a semicolon and an empty line; single-user mode exits 0 after an error, so its log is read)
printf "CREATE ROLE pushprovider LOGIN PASSWORD '%s';\n\nCREATE DATABASE pushprovider OWNER pushprovider;\n\n" "$DBPASS" \
  | runuser -u postgres -- "$PGBIN/postgres" --single -D "$WORK/pg/data" -j postgres > "$WORK/pg/single.log" 2>&1 \
  && ! grep -q 'ERROR' "$WORK/pg/single.log" || { sed "s/$DBPASS/…/g" "$WORK/pg/single.log"; fail "creating the role and database"; }
rm -f "$WORK/pg/pwfile"
pm run -d --name "$N-pg" --network "$N" -v "$WORK/pg/data:/var/lib/postgresql/data" "$PGIMAGE" \
  -D /var/lib/postgresql/data -c listen_addresses='*' -c unix_socket_directories=/tmp -c fsync=off -c jit=off > /dev/null \
  || fail "podman run postgres"

ETCW=$WORK/etc-worker
mkdir -p "$ETCW"
"$PUSHCTL" cert make-dev --out "$ETCW/simulator" --topic com.example.app --server-name "$N-sim" > /dev/null
( umask 077; printf '%s\n' "$DBPASS" > "$ETCW/db.password" )
python3 -c 'for i in range(2000): print("ab%062x" % i)' > "$ETCW/devices.txt"
python3 - "$ETCW/pushctl.json" "$N" <<'PY'
import json, sys
path, n = sys.argv[1:]
json.dump({
    "shardSize": 500,
    "simulator": {"certificates": "/etc/pushprovider/simulator"},
    "apps": {"example": {
        "apns": {"topic": "com.example.app", "endpoint": f"https://{n}-sim:2197", "caFile": "/etc/pushprovider/simulator/ca.pem",
                 "auth": {"p12": "/etc/pushprovider/simulator/client.p12",
                          "passwordFile": "/etc/pushprovider/simulator/client.p12.password"}},
        "registrationKeys": [], "sendKeys": []}},
}, open(path, "w"), indent=2)
PY
secrets_as_kubernetes "$ETCW"
# Where the database is comes from the environment, as deploy/kubernetes's pushprovider-env ConfigMap gives it
# (envFrom): every worker-side container reads this file, and the JSON above names no database.
printf '%s\n' "PUSHCTL_DATABASE=postgres://pushprovider@$N-pg:5432/pushprovider" \
  "PUSHCTL_DATABASE_PASSWORD_FILE=/etc/pushprovider/db.password" > "$WORK/worker.env"
WENV=(--env-file "$WORK/worker.env")
# A one-off command in a container of its own, as cron or a Kubernetes Job runs one (its stdout and stderr kept).
run_once() { podman run --rm --network "$N" "${RO[@]}" "${WENV[@]}" --no-healthcheck -v "$ETCW:/etc/pushprovider:ro" "$IMAGE" "$@"; }
# Stops the worker container NAME with SIGTERM (podman stop sends the image's StopSignal) and checks what a worker
# promises whatever it was doing: exit 0 within 30 s. WHAT names it in the messages (default: the worker). The
# seconds it took are left in STOP_WORKER_SECONDS for the caller's report.
stop_worker() { # NAME [WHAT]
  local name=$1 what=${2:-the worker} t0
  t0=$(date +%s.%N)
  pm stop -t 60 "$name" > /dev/null
  STOP_WORKER_SECONDS=$(elapsed "$t0")
  expect_eq "$what's exit status after SIGTERM" "$(pm inspect --format '{{.State.ExitCode}}' "$name")" "0"
  python3 -c "import sys; sys.exit(not $STOP_WORKER_SECONDS < 30)" \
    || fail "$what took ${STOP_WORKER_SECONDS}s to stop (more than its 30 s)"
}
pm run -d --name "$N-sim" --network "$N" "${RO[@]}" "${WENV[@]}" --no-healthcheck -v "$ETCW:/etc/pushprovider:ro" "$IMAGE" \
  simulator --host 0.0.0.0 --port 2197 > /dev/null || fail "podman run simulator"
# The database accepts connections once it has started (the one-off import is the first client).
T0=$(date +%s.%N)
for i in $(seq 1 50); do
  run_once tokens import --app example /etc/pushprovider/devices.txt > "$WORK/import.txt" 2>&1 && break
  [ "$i" -lt 50 ] || { cat "$WORK/import.txt"; fail "pushctl tokens import against PostgreSQL in $N-pg"; }
  sleep 0.3
done
grep -q 'imported 2000 tokens' "$WORK/import.txt" || fail "tokens import: $(cat "$WORK/import.txt")"
pm run -d --name "$N-worker" --network "$N" "${RO[@]}" "${WENV[@]}" --no-healthcheck -v "$ETCW:/etc/pushprovider:ro" "$IMAGE" \
  worker --concurrency 2 > /dev/null || fail "podman run worker"
run_once broadcast --app example --id image-weekly --alert "Weekly" --detach > "$WORK/detach.txt" 2>&1 \
  || { cat "$WORK/detach.txt"; fail "broadcast --detach"; }
grep -q '2000 devices in 4 shards' "$WORK/detach.txt" || fail "broadcast --detach: $(cat "$WORK/detach.txt")"
JOB=
for _ in $(seq 1 60); do
  JOB=$(run_once jobs list --app example --json 2>/dev/null | grep '"image-weekly"' || true)
  python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1]).get("state") != "completed")' "$JOB" 2>/dev/null && break
  sleep 0.5
done
python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1]).get("state") != "completed")' "$JOB" 2>/dev/null \
  || fail "the broadcast did not complete: $JOB; worker: $(pm logs --tail 5 "$N-worker" 2>&1)"
run_once jobs show --app example image-weekly > "$WORK/show.txt" 2>&1 || true
say "worker completed the broadcast on PostgreSQL in $(elapsed "$T0")s: $(tr '\n' ' ' < "$WORK/show.txt" | cut -c1-300)"
stop_worker "$N-worker"
WSTOP_SECONDS=$STOP_WORKER_SECONDS
podman logs "$N-worker" > "$WORK/worker.log" 2>&1
# Its last log line (JSON) and its summary on stdout: every shard finished here, none given back.
python3 - "$WORK/worker.log" <<'PY' || { tail -5 "$WORK/worker.log"; fail "the worker did not finish the broadcast's 4 shards itself"; }
import json, sys
lines = open(sys.argv[1]).read().splitlines()
stopped = [json.loads(l) for l in lines if l.startswith("{") and json.loads(l)["message"].endswith(" stopped")]
summary = "worker stopped: 4 shards finished, 0 given back, 2000 notifications sent"
ok = stopped and (stopped[-1].get("finished"), stopped[-1].get("released"), stopped[-1].get("sent")) == ("4", "0", "2000")
sys.exit(0 if ok and summary in lines else 1)
PY
say "worker: the broadcast's 4 shards finished by the worker alone; stopped on SIGTERM in ${WSTOP_SECONDS}s, exit 0"

# SIGTERM in the middle of a broadcast drains: the worker finishes what is on the wire, gives its shards back and
# exits 0 within 30 s; another worker (a new container, as after a rolling update) finishes the broadcast, and every
# device is accepted once.
job_state() { # ID -> the job's line of `jobs list --json` (empty until it exists)
  run_once jobs list --app example --json 2>/dev/null | grep "\"$1\"" || true
}
start_worker() { pm run -d --name "$1" --network "$N" "${RO[@]}" "${WENV[@]}" --no-healthcheck -v "$ETCW:/etc/pushprovider:ro" "$IMAGE" \
  worker --concurrency 2 > /dev/null || fail "podman run worker $1"; }
start_worker "$N-worker2"
run_once broadcast --app example --id image-drain --alert "Drained" --rate 250 --detach > "$WORK/detach.txt" 2>&1 \
  || { cat "$WORK/detach.txt"; fail "broadcast --detach (image-drain)"; }
# At 250 notifications/s the broadcast takes 8 s; the worker has its shards at once (LISTEN/NOTIFY): stop it 2 s in.
sleep 2
stop_worker "$N-worker2" "the draining worker"
DRAIN_SECONDS=$STOP_WORKER_SECONDS
podman logs "$N-worker2" > "$WORK/worker2.log" 2>&1
DRAINED=$(python3 - "$WORK/worker2.log" <<'PY'
import json, sys
stopped = [json.loads(l) for l in open(sys.argv[1]).read().splitlines() if l.startswith("{") and json.loads(l)["message"].endswith(" stopped")]
s = stopped[-1] if stopped else {}
released, sent = int(s.get("released", 0)), int(s.get("sent", 0))
print(f"{released} shards given back after {sent} notifications")
sys.exit(0 if released >= 1 and 0 < sent < 2000 else 1)
PY
) || { tail -5 "$WORK/worker2.log"; fail "SIGTERM mid-broadcast: the worker gave no shard back ($DRAINED)"; }
start_worker "$N-worker3"
JOB=
for _ in $(seq 1 80); do
  JOB=$(job_state image-drain)
  python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1]).get("state") != "completed")' "$JOB" 2>/dev/null && break
  sleep 0.5
done
run_once jobs show --app example image-drain > "$WORK/show.txt" 2>&1 || true
python3 -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(not (j["state"] == "completed" and j["accepted"] == 2000 and j["done"] == 2000))' "$(cat "$WORK/show.txt")" \
  || fail "the drained broadcast was not finished with every device accepted: $JOB; $(cat "$WORK/show.txt")"
stop_worker "$N-worker3" "the second worker"
say "SIGTERM mid-broadcast: the worker drained in ${DRAIN_SECONDS}s, exit 0 ($DRAINED); a new worker finished it, 2000 of 2000 accepted"
pm stop -t 10 "$N-sim" "$N-pg" > /dev/null
say "PASS in $(elapsed "$START")s (image built in ${BUILD_SECONDS}s, $(python3 -c "print(f'{$SIZE_BYTES/1e6:.1f}')") MB)"
