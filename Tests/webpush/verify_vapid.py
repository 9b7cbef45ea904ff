#!/usr/bin/env python3
"""Referee for our VAPID header (RFC 8292): checks `Authorization: vapid t=<JWT>, k=<key>` with two reference
implementations, against the key `k` carries: py_vapid verifies the ES256 signature, PyJWT decodes and validates
the token (signature, exp in the future, aud the push service's origin) — then checks exp is at most 24 h ahead
and sub is the expected mailto:/https: contact.

stdin: {"authorization": str, "audience": str, "subject": str}
stdout: {"claims": {...}, "header": {...}, "k": str}; exit 1 with one line on failure; 3 when a module is missing.
"""
import base64
import json
import re
import sys
import time

try:
    import jwt
    import py_vapid
    from cryptography.hazmat.primitives import serialization
except ImportError as error:  # the Swift test fails on this, naming the module
    print(f"verify_vapid.py: {error}; run Tests/referees/install.sh", file=sys.stderr)
    sys.exit(3)


def fail(message):
    print(f"verify_vapid.py: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    request = json.load(sys.stdin)
    header = request["authorization"]
    # RFC 7235 credentials: scheme, then comma-separated auth-params with optional whitespace.
    match = re.fullmatch(r"vapid ([^\s].*)", header)
    if not match:
        fail(f"not a vapid credential: {header[:40]!r}")
    params = {}
    for part in match.group(1).split(","):
        name, sep, value = part.strip().partition("=")
        if not sep or name in params:
            fail(f"bad auth-param {part!r}")
        params[name] = value
    if set(params) != {"t", "k"}:
        fail(f"auth-params must be t and k, not {sorted(params)}")
    token, k = params["t"], params["k"]

    # py_vapid: the public key from k, the signature over the signing input.
    verifier = py_vapid.Vapid02.from_raw_public(k.encode())
    signing_input, signature = token.rsplit(".", 1)
    if not verifier.verify_token(validation_token=signing_input.encode(), verification_token=signature):
        fail("py_vapid: the signature does not verify with k")

    # PyJWT: the same key, ES256 only, exp and aud validated, sub required.
    public_pem = verifier.public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    try:
        claims = jwt.decode(token, public_pem, algorithms=["ES256"], audience=request["audience"],
                            options={"require": ["aud", "exp", "sub"]})
    except jwt.PyJWTError as error:
        fail(f"PyJWT: {type(error).__name__}: {error}")
    jose = jwt.get_unverified_header(token)
    if jose.get("alg") != "ES256" or jose.get("typ", "JWT") != "JWT":
        fail(f"JOSE header {jose}")
    if claims["exp"] > time.time() + 24 * 3600:
        fail(f"exp {claims['exp']} is more than 24 h ahead (RFC 8292 §2)")
    if not (claims["sub"].startswith("mailto:") or claims["sub"].startswith("https:")):
        fail(f"sub {claims['sub']!r} is neither mailto: nor https:")
    if claims["sub"] != request["subject"]:
        fail(f"sub {claims['sub']!r} is not {request['subject']!r}")
    print(json.dumps({"claims": claims, "header": jose, "k": k}))


main()
