#!/usr/bin/env bash
# PushProvider's container image from an already built release pushctl (no build, no network, no container tool):
#   packaging/image.sh BINARY OUTDIR   (make image: .build/release/pushctl, .build/image)
# writes OUTDIR/pushprovider-<version>.oci.tar (an OCI archive: `podman load -i`, `skopeo copy oci-archive:…`,
# `docker load -i` on Docker 25 or later) and OUTDIR/pushprovider-<version>.docker.tar (docker save's format:
# `docker load -i` on any Docker, `podman load -i`), the same image in both (one config, one layer, one image id),
# named localhost/pushprovider:<version>, and OUTDIR/pushprovider-<version>.packages.txt, its package list. Prints
# the builder's summary (JSON: paths, image id, sizes).
#
# What is in it (packaging/image.py builds the layer from this machine's files; docs/operating.md, "Containers and
# Kubernetes", has the list and the size):
#   /usr/bin/pushctl          the release binary stripped as the .deb strips it (packaging/build.sh), the Swift
#                             runtime inside it
#   its shared libraries      libc, libstdc++, libcurl and what libcurl loads, OpenSSL, SQLite: the ldd closure,
#                             each file checked against the Debian package that installed it
#   OpenSSL's legacy module   ossl-modules/legacy.so, which pushctl loads for Keychain-style (RC2/3DES) .p12 files
#   /usr/bin/curl             the HEALTHCHECK's client (it shares pushctl's libcurl: 0.3 MB more); no shell
#   /usr/share/zoneinfo       tzdata without right/ (leap-second zones nothing reads): time zones of registrations
#   ca-certificates.crt       the system trust store APNs, FCM and push services are verified with
#   /etc/passwd, group        root and pushprovider (10001:10001), the user it runs as; nsswitch.conf (files, dns)
#   /var/lib/pushprovider     the state directory, a volume, owned by pushprovider (the SQLite registry lives here
#                             unless the configuration names PostgreSQL)
#   /etc/pushprovider         empty: the configuration and the secrets are mounted here, read-only
# Entrypoint pushctl, command `serve`; `worker`, `broadcast`, `doctor`, … as the command instead. PUSHCTL_CONFIG is
# /etc/pushprovider/pushctl.json and PUSHCTL_LOG_FORMAT json (one object per line on stderr, which the container's
# log collects with stdout). SIGTERM stops it as the systemd units do (serve drains within 30 s, workers give their
# shards back).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:?usage: packaging/image.sh BINARY OUTDIR}
OUT=${2:?usage: packaging/image.sh BINARY OUTDIR}
[ -x "$BIN" ] || { echo "image: no pushctl at $BIN (make release first)" >&2; exit 1; }
VERSION=$("$BIN" --version | sed -n '1s/^pushctl //p')
COMMIT=$("$BIN" --version | sed -n 's/^commit //p')
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "image: '$BIN --version' gave no semantic version" >&2; exit 1; }
for file in /usr/bin/curl /etc/ssl/certs/ca-certificates.crt /usr/share/zoneinfo/tzdata.zi; do
  [ -e "$file" ] || { echo "image: $file is missing (make deps installs curl, ca-certificates and tzdata)" >&2; exit 1; }
done
LEGACY=$(ls /usr/lib/*-linux-gnu/ossl-modules/legacy.so 2>/dev/null | head -1)
[ -n "$LEGACY" ] || { echo "image: OpenSSL's legacy module (libssl3's ossl-modules/legacy.so) is missing" >&2; exit 1; }
mkdir -p "$OUT"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/pushprovider-image.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
# Reproducible: the commit's time when built from git, else now (as packaging/build.sh).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}
# Stripped as packaging/build.sh strips the .deb's (dh_strip's flags; the Swift runtime needs no symbol table).
strip --remove-section=.comment --remove-section=.note --strip-unneeded -o "$STAGE/pushctl" "$BIN"
chmod 0755 "$STAGE/pushctl"

python3 - "$STAGE/spec.json" "$STAGE/pushctl" "$VERSION" "$COMMIT" "$LEGACY" "$SOURCE_DATE_EPOCH" <<'PY'
import datetime, json, sys
path, binary, version, commit, legacy, epoch = sys.argv[1:]
uid = gid = 10001
created = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
seconds = 1_000_000_000  # the health check's durations are nanoseconds
spec = {
    "name": "localhost/pushprovider",
    "tag": version,
    "files": [{"src": binary, "dst": "/usr/bin/pushctl", "mode": 0o755}],
    "own": [f"pushctl {version} (commit {commit})"],
    "system": ["/usr/bin/curl", legacy],
    "trees": [{"path": "/usr/share/zoneinfo", "exclude": ["right"]}],
    "generated": [{"path": "/etc/ssl/certs/ca-certificates.crt", "package": "ca-certificates"}],
    "dirs": [
        {"path": "/var/lib/pushprovider", "uid": uid, "gid": gid, "mode": 0o750},
        {"path": "/etc/pushprovider", "mode": 0o755},
    ],
    "text": [
        {"path": "/etc/passwd", "content": "root:x:0:0:root:/root:/usr/sbin/nologin\n"
            f"pushprovider:x:{uid}:{gid}:PushProvider:/var/lib/pushprovider:/usr/sbin/nologin\n"},
        {"path": "/etc/group", "content": f"root:x:0:\npushprovider:x:{gid}:\n"},
        {"path": "/etc/nsswitch.conf", "content": "passwd: files\ngroup: files\nhosts: files dns\n"},
    ],
    "config": {
        "User": f"{uid}:{gid}",
        "Entrypoint": ["/usr/bin/pushctl"],
        "Cmd": ["serve"],
        "Env": ["PATH=/usr/bin", "PUSHCTL_CONFIG=/etc/pushprovider/pushctl.json", "PUSHCTL_LOG_FORMAT=json"],
        "WorkingDir": "/var/lib/pushprovider",
        "Volumes": {"/var/lib/pushprovider": {}},
        "ExposedPorts": {"8080/tcp": {}, "8081/tcp": {}},
        "StopSignal": "SIGTERM",
        # The public listener's /healthz, where the container's configuration must put it (0.0.0.0:8080). A worker
        # has no listener: run it with --no-healthcheck (Kubernetes ignores HEALTHCHECK and uses the probes).
        "Healthcheck": {
            "Test": ["CMD", "/usr/bin/curl", "-fsS", "-o", "/dev/null", "--max-time", "4", "http://127.0.0.1:8080/healthz"],
            "Interval": 30 * seconds, "Timeout": 5 * seconds, "StartPeriod": 10 * seconds, "Retries": 3,
        },
    },
    "labels": {
        "org.opencontainers.image.title": "PushProvider",
        "org.opencontainers.image.description": "Self-hosted push provider for APNs, Web Push and FCM (pushctl)",
        "org.opencontainers.image.version": version,
        "org.opencontainers.image.revision": commit,
        "org.opencontainers.image.created": created,
    },
}
json.dump(spec, open(path, "w"), indent=1)
PY
python3 "$ROOT/packaging/image.py" "$STAGE/spec.json" "$OUT"
