#!/usr/bin/env python3
"""Registers UnifiedPush endpoints on a running `pushctl simulator` (its UnifiedPush distributor), as an Android app's
connector library gets them from its distributor (AND_3.0.0: the endpoint and the RFC 8291 keys, restricted to the
app's VAPID key when it gives one), and unregisters every Nth one (DELETE on the endpoint: its pushes then answer 404,
as SERV_1.2.0 says). Standard library only: one HTTP/1.1 keep-alive connection, TLS verified against the simulator's CA.

Usage: mint_endpoints.py HOST PORT CA.pem APPLICATION_SERVER_KEY COUNT GONE_EVERY
APPLICATION_SERVER_KEY: the VAPID public key (base64url, uncompressed P-256) the endpoints are restricted to, or "-"
for none. Prints one JSON line per endpoint: {"endpoint": URL, "keys": {"p256dh", "auth"}, "gone": bool}.
GONE_EVERY 0 unregisters none; 20 unregisters the 1st, 21st, 41st, ... (5%).
"""
import http.client
import json
import ssl
import sys
import urllib.parse


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__.split("\n\n")[1])
    host, port, ca, key, count, every = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
    context = ssl.create_default_context(cafile=ca)
    connection = http.client.HTTPSConnection(host, port, context=context, timeout=30)
    body = None if key == "-" else json.dumps({"vapid": key})
    headers = {} if body is None else {"Content-Type": "application/json"}
    out = []
    for i in range(count):
        connection.request("POST", "/up/register", body=body, headers=headers)
        answer = connection.getresponse()
        text = answer.read()
        if answer.status != 201:
            sys.exit(f"POST /up/register answered {answer.status}: {text[:200]!r}")
        minted = json.loads(text)
        gone = every > 0 and i % every == 0
        if gone:
            path = urllib.parse.urlsplit(minted["endpoint"]).path
            connection.request("DELETE", path)
            deleted = connection.getresponse()
            deleted.read()
            if deleted.status != 204:
                sys.exit(f"DELETE {path} answered {deleted.status}")
        out.append(json.dumps({"endpoint": minted["endpoint"], "keys": minted["keys"], "gone": gone}))
    print("\n".join(out))


if __name__ == "__main__":
    main()
