#!/usr/bin/env python3
"""Mints Web Push subscriptions on a running `pushctl simulator` (its Web Push service), as browsers would ask their
push service for them (RFC 8030 §4, restricted to a VAPID key as RFC 8292 §4.1 says), and expires every Nth one
(DELETE on its subscription resource: its pushes then answer 410). Standard library only: one HTTP/1.1 keep-alive
connection, TLS verified against the simulator's CA. Used by the Web Push broadcast tests (Tests/pushctlTests).

Usage: mint_subscriptions.py HOST PORT CA.pem APPLICATION_SERVER_KEY COUNT EXPIRE_EVERY
Prints one JSON line per subscription: {"subscription": PushSubscription.toJSON(), "expired": bool}.
EXPIRE_EVERY 0 expires none; 20 expires the 1st, 21st, 41st, ... (5%).
"""
import http.client
import json
import ssl
import sys
import urllib.parse


def main():
    host, port, ca, key, count, every = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
    context = ssl.create_default_context(cafile=ca)
    connection = http.client.HTTPSConnection(host, port, context=context, timeout=30)
    out = []
    for i in range(count):
        connection.request("POST", "/subscribe", body=json.dumps({"vapid": key}),
                           headers={"Content-Type": "application/webpush-options+json"})
        answer = connection.getresponse()
        body = answer.read()
        if answer.status != 201:
            sys.exit(f"POST /subscribe answered {answer.status}: {body[:200]!r}")
        location = urllib.parse.urlsplit(answer.getheader("Location")).path
        expired = every > 0 and i % every == 0
        if expired:
            connection.request("DELETE", location)
            gone = connection.getresponse()
            gone.read()
            if gone.status >= 300:
                sys.exit(f"DELETE {location} answered {gone.status}")
        out.append(json.dumps({"subscription": json.loads(body), "expired": expired}))
    print("\n".join(out))


if __name__ == "__main__":
    main()
