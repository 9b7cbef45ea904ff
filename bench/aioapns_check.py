#!/usr/bin/env python3
"""Cross-check the simulator with a third-party APNs client (aioapns, PyPI).

Sends N notifications (default 10,000) through a running `pushctl simulator` in certificate mode and prints
the outcome counts. Exit status 0 only when every notification was accepted.

    pushctl simulator --certificates DIR &          # prints "listening on https://127.0.0.1:PORT"
    python3 bench/aioapns_check.py --port PORT --certificates DIR [--count 10000] [--topic com.example.app]

DIR holds ca.pem, client.pem and client.key (as `pushctl cert make-dev` writes them). aioapns wants the client
certificate and key in one PEM file, so the script concatenates them into a temporary file.
"""
import argparse
import asyncio
import collections
import os
import ssl
import sys
import tempfile
import time
import uuid

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsDevelopmentClientProtocol


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--certificates", required=True, help="directory with ca.pem, client.pem, client.key")
    parser.add_argument("--topic", default="com.example.app")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--connections", type=int, default=2)
    args = parser.parse_args()

    # aioapns has no endpoint option: point its sandbox protocol at the simulator.
    APNsDevelopmentClientProtocol.APNS_SERVER = args.host
    APNsDevelopmentClientProtocol.APNS_PORT = args.port
    context = ssl.create_default_context(cafile=os.path.join(args.certificates, "ca.pem"))

    with tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False) as bundle:
        for name in ("client.pem", "client.key"):
            with open(os.path.join(args.certificates, name)) as part:
                bundle.write(part.read().rstrip("\n") + "\n")
    try:
        apns = APNs(client_cert=bundle.name, topic=args.topic, use_sandbox=True, ssl_context=context,
                    max_connections=args.connections)
        outcomes = collections.Counter()
        limit = asyncio.Semaphore(args.concurrency)

        async def send(i: int) -> None:
            token = (b"%032x" % i).decode() + "a" * 32
            request = NotificationRequest(
                device_token=token,
                message={"aps": {"alert": f"aioapns check {i}", "badge": 1}},
                notification_id=str(uuid.uuid4()),
                push_type=PushType.ALERT,
            )
            async with limit:
                try:
                    result = await apns.send_notification(request)
                    outcomes[(result.status, result.description or "")] += 1
                except Exception as error:  # a transport failure is an outcome too
                    outcomes[("error", type(error).__name__)] += 1

        start = time.monotonic()
        await asyncio.gather(*(send(i) for i in range(args.count)))
        elapsed = time.monotonic() - start
    finally:
        os.unlink(bundle.name)

    accepted = outcomes.get(("200", ""), 0)
    print(f"aioapns: {args.count} notifications in {elapsed:.2f} s ({args.count / elapsed:,.0f}/s)")
    for (status, description), n in sorted(outcomes.items(), key=lambda kv: str(kv[0])):
        print(f"  {status} {description}".rstrip() + f": {n}")
    print(f"accepted {accepted}, errors {args.count - accepted}")
    return 0 if accepted == args.count else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
