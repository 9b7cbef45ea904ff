#!/usr/bin/env python3
"""The built-in simulator's Web Push service refereed by PyPI's pywebpush (RFC 8291 encryption with http_ece, RFC 8292
VAPID with py_vapid.Vapid02), over HTTP/1.1 (`requests`). Run by Tests/PushSimulatorTests/SimulatorWebPushRefereeTests.swift.

Usage: REQUESTS_CA_BUNDLE=ca.pem sim_pywebpush.py CASES.json
CASES.json: {"vapidKeyPEM": PEM of the application server's P-256 key,
             "cases": [{"name", "mode", "subscription": PushSubscription.toJSON(), "data": text}, ...]}
Prints one JSON line per case: {"name", "status", "body", "headers", "elapsed"} (elapsed: the case's seconds).

Modes (each a way a real sender gets it right or wrong):
  valid        pywebpush.webpush() as documented, Vapid02, sub mailto:
  no-vapid     pywebpush.webpush() without a VAPID key: no Authorization (UnifiedPush endpoints need none)
  wrong-sub    sub "ops@example.com" (no mailto:), signed with py_vapid's no-strict mode
  wrong-aud    aud https://push.example.com instead of the endpoint's origin
  bad-signature  the JWT signed by vapidKeyPEM's key but k naming another key
  other-key    a fresh VAPID key (the subscription was made for vapidKeyPEM's)
  draft-vapid  Vapid01: the pre-RFC `WebPush <jwt>` + Crypto-Key scheme
  exp-25h      exp 25 hours ahead (RFC 8292: at most 24)
  exp-past     exp a minute ago
  no-ttl       the request without its TTL header
  bad-urgency  Urgency: urgent
  long-topic   a 33-character Topic
  aesgcm       the old `aesgcm` content coding
  tampered     one ciphertext byte flipped
  too-large    a 4000-byte message (a body of more than 4096 bytes)
  urgent-topic Urgency: high, Topic: abc_DEF-123, TTL 60 (all valid)
  valid-h2     what pywebpush prepares, sent over HTTP/2 by the curl command line (headers: http-version)
  two-on-one   two pushes through one requests.Session (HTTP/1.1 keep-alive); body: each answer's status and
               Connection header as JSON
  subscribe-flow  on the subscription's origin: POST /subscribe {"vapid": key} (RFC 8030/8292), push to the new
               subscription, DELETE its subscription resource, push again (body: the four statuses as JSON)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import requests
    from py_vapid import Vapid01, Vapid02
    from pywebpush import WebPusher, webpush, WebPushException
except ImportError as error:  # the test fails on this: `make test` installs them (make referees)
    print(f"sim_pywebpush: {error}: run `make referees` (Tests/referees/install.sh)", file=sys.stderr)
    sys.exit(3)


def origin(endpoint):
    scheme, rest = endpoint.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def answer(name, response):
    headers = {k.lower(): v for k, v in response.headers.items()
               if k.lower() in ("location", "ttl", "retry-after", "www-authenticate", "content-type")}
    return {"name": name, "status": response.status_code, "body": response.text, "headers": headers}


def prepared(subscription, data, headers, encoding):
    """The request pywebpush would send (encrypted body, headers), for modes that change it before it goes."""
    params = WebPusher(subscription)._prepare_send_data(data=data, headers=dict(headers), ttl=0, content_encoding=encoding)
    return params["data"], dict(params["headers"])


def run(case, key_pem):
    name, mode, subscription, data = case["name"], case["mode"], case["subscription"], case.get("data", "")
    vapid = Vapid02.from_pem(key_pem.encode())
    claims = {"sub": "mailto:ops@example.com"}
    extra = {}
    if mode == "wrong-sub":
        vapid.conf["no-strict"] = True
        claims["sub"] = "ops@example.com"
    elif mode == "wrong-aud":
        claims["aud"] = "https://push.example.com"
    elif mode == "other-key":
        vapid = Vapid02()
        vapid.generate_keys()
    elif mode == "draft-vapid":
        vapid = Vapid01.from_pem(key_pem.encode())
    elif mode == "exp-25h":
        claims["exp"] = int(time.time()) + 25 * 3600
    elif mode == "bad-urgency":
        extra["Urgency"] = "urgent"
    elif mode == "long-topic":
        extra["Topic"] = "a" * 33
    elif mode == "urgent-topic":
        extra.update({"Urgency": "high", "Topic": "abc_DEF-123"})

    if mode in ("valid", "wrong-sub", "wrong-aud", "other-key", "draft-vapid", "exp-25h", "bad-urgency", "long-topic",
                "urgent-topic", "too-large"):
        try:
            response = webpush(subscription, data=data, vapid_private_key=vapid, vapid_claims=claims, headers=extra,
                               ttl=60 if mode == "urgent-topic" else 0, timeout=20)
        except WebPushException as error:
            if error.response is None:
                raise
            response = error.response
        return answer(name, response)

    if mode == "no-vapid":
        try:
            response = webpush(subscription, data=data, ttl=0, timeout=20)
        except WebPushException as error:
            if error.response is None:
                raise
            response = error.response
        return answer(name, response)
    if mode == "subscribe-flow":
        return subscribe_flow(name, subscription, vapid, claims, data)
    if mode == "two-on-one":
        session = requests.Session()
        answers = []
        for _ in range(2):
            response = webpush(subscription, data=data, vapid_private_key=vapid, vapid_claims=dict(claims),
                               requests_session=session, timeout=20)
            answers.append({"status": response.status_code, "connection": response.headers.get("Connection")})
        return {"name": name, "status": answers[-1]["status"], "body": json.dumps(answers), "headers": {}}

    # Modes that change what pywebpush prepared: sign the VAPID header for the endpoint's origin, then alter.
    claims["aud"] = origin(subscription["endpoint"])
    claims["exp"] = int(time.time()) + (-60 if mode == "exp-past" else 12 * 3600)
    headers = dict(vapid.sign(claims))
    body, headers = prepared(subscription, data, headers, "aesgcm" if mode == "aesgcm" else "aes128gcm")
    if mode == "no-ttl":
        headers = {k: v for k, v in headers.items() if k.lower() != "ttl"}
    if mode == "tampered":
        body = body[:-1] + bytes([body[-1] ^ 0x01])
    if mode == "bad-signature":
        other = Vapid02()
        other.generate_keys()
        other_k = other.sign(dict(claims))["Authorization"].split("k=", 1)[1]
        name_of = next(k for k in headers if k.lower() == "authorization")
        headers[name_of] = headers[name_of].split("k=", 1)[0] + "k=" + other_k
    if mode == "valid-h2":
        return curl_h2(name, subscription["endpoint"], body, headers)
    response = requests.post(subscription["endpoint"], data=body, headers=headers, timeout=20)
    return answer(name, response)


def curl_h2(name, endpoint, body, headers):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(body)
    try:
        command = ["curl", "--http2", "-sS", "--cacert", os.environ["REQUESTS_CA_BUNDLE"], "-o", "-",
                   "-w", "\n%{http_code} %{http_version}", "--data-binary", "@" + f.name]
        for key, value in headers.items():
            command += ["-H", f"{key}: {value}"]
        out = subprocess.run(command + [endpoint], capture_output=True, text=True, timeout=20, check=True).stdout
    finally:
        os.unlink(f.name)
    text, status_line = out.rsplit("\n", 1)
    status, version = status_line.split()
    return {"name": name, "status": int(status), "body": text, "headers": {"http-version": version}}


def subscribe_flow(name, subscription, vapid, claims, data):
    from cryptography.hazmat.primitives import serialization
    from py_vapid.utils import b64urlencode
    key = b64urlencode(vapid.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))
    base = origin(subscription["endpoint"])
    made = requests.post(base + "/subscribe", data=json.dumps({"vapid": key}),
                         headers={"Content-Type": "application/webpush-options+json"}, timeout=20)
    minted = made.json()
    pushed = webpush(minted, data=data, vapid_private_key=vapid, vapid_claims=dict(claims), timeout=20)
    deleted = requests.delete(made.headers["Location"], timeout=20)
    try:
        again = webpush(minted, data=data, vapid_private_key=vapid, vapid_claims=dict(claims), timeout=20)
    except WebPushException as error:
        again = error.response
    statuses = {"subscribe": made.status_code, "push": pushed.status_code, "delete": deleted.status_code,
                "pushAfterDelete": again.status_code, "subscription": minted}
    return {"name": name, "status": made.status_code, "body": json.dumps(statuses), "headers": {}}


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    for case in spec["cases"]:
        start = time.monotonic()
        result = run(case, spec["vapidKeyPEM"])
        result["elapsed"] = time.monotonic() - start
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
