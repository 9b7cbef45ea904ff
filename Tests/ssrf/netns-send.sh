#!/bin/bash
# Runs inside `unshare --mount --net --kill-child` (AddressCheckNamespaceTests): a loopback of its own, a private
# /etc/hosts mapping HOST to 127.0.0.1, a listener on 127.0.0.1:443 that logs every connection, then one
# `pushctl send` per line of DIR/cases ("CONFIG [VAR=value ...]", the proxy variables of that case and nothing
# else inherited), writing DIR/caseN.{out,err,status} and DIR/caseN.connections (the listener's count after it).
# Usage: netns-send.sh DIR PUSHCTL TOKEN HOST
set -euo pipefail
dir=$1 pushctl=$2 token=$3 host=$4
ip link set lo up
printf '127.0.0.1 localhost\n127.0.0.1 %s\n' "$host" >"$dir/hosts"
mount --bind "$dir/hosts" /etc/hosts
python3 - "$dir/listener.log" "$dir/listener.ready" <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 443))
s.listen(16)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept()
    c.settimeout(2)
    try:
        data = c.recv(4096)
    except OSError:
        data = b""
    with open(sys.argv[1], "a") as f:
        f.write("connection, %d bytes\n" % len(data))
    c.close()
PY
listener=$!
trap 'kill $listener 2>/dev/null || true' EXIT
for _ in $(seq 200); do [ -e "$dir/listener.ready" ] && break; sleep 0.05; done
[ -e "$dir/listener.ready" ] || { echo "the listener on 127.0.0.1:443 did not start" >&2; exit 99; }
touch "$dir/listener.log"
n=0
while read -r config vars; do
    n=$((n + 1))
    # shellcheck disable=SC2086 # each case's VAR=value words are meant to split
    env -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy -u NO_PROXY -u no_proxy -u http_proxy -u PUSHCTL_CONFIG $vars \
        "$pushctl" send --config "$config" --app example --token "$token" --alert probe --outage-limit 1 \
        >"$dir/case$n.out" 2>"$dir/case$n.err" && status=0 || status=$?
    echo "$status" >"$dir/case$n.status"
    wc -l <"$dir/listener.log" | tr -d ' ' >"$dir/case$n.connections"
done <"$dir/cases"
