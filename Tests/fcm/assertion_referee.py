#!/usr/bin/env python3
"""Referee for FCM's OAuth 2.0 service-account assertion: PyJWT (PyPI, pinned in Tests/referees/install.sh)
verifies a JWT our FCMServiceAccount signed, with the service account's public key, as Google's token endpoint
would: RS256 only, signature, iss = client_email, aud = token_uri, scope = firebase.messaging, iat and exp present,
exp - iat <= 3600, header typ JWT and kid = private_key_id.

Usage: assertion_referee.py SERVICE_ACCOUNT_JSON PUBLIC_KEY_PEM < assertion
Prints "ok" and exits 0 when every check passes; exits 1 naming the first failure, and 1 (never a skip) when
PyJWT or cryptography is not installed.
"""
import json
import sys

try:
    import jwt  # PyJWT
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
except ImportError as error:
    print(f"assertion_referee: {error}: run `make referees` (Tests/referees/install.sh)", file=sys.stderr)
    sys.exit(1)

SCOPE = "https://www.googleapis.com/auth/firebase.messaging"


def fail(why):
    print(f"assertion_referee: {why}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 3:
        fail("usage: assertion_referee.py SERVICE_ACCOUNT_JSON PUBLIC_KEY_PEM < assertion")
    with open(sys.argv[1]) as f:
        account = json.load(f)
    with open(sys.argv[2], "rb") as f:
        public_key = load_pem_public_key(f.read())
    assertion = sys.stdin.read().strip()

    header = jwt.get_unverified_header(assertion)
    if header.get("alg") != "RS256":
        fail(f"header alg {header.get('alg')!r}, not RS256")
    if header.get("typ") != "JWT":
        fail(f"header typ {header.get('typ')!r}, not JWT")
    if header.get("kid") != account["private_key_id"]:
        fail(f"header kid {header.get('kid')!r}, not the private_key_id {account['private_key_id']!r}")
    try:
        claims = jwt.decode(
            assertion, public_key, algorithms=["RS256"],
            audience=account["token_uri"], issuer=account["client_email"],
            options={"require": ["iss", "aud", "iat", "exp", "scope"]},
        )
    except jwt.PyJWTError as error:
        fail(f"PyJWT refuses the assertion: {type(error).__name__}: {error}")
    if claims["scope"] != SCOPE:
        fail(f"scope {claims['scope']!r}, not {SCOPE!r}")
    lifetime = claims["exp"] - claims["iat"]
    if not 0 < lifetime <= 3600:
        fail(f"exp - iat = {lifetime} s, not in (0, 3600]")
    print("ok")


main()
