#!/usr/bin/env python3
"""Referee for our RFC 8291 encryption: decrypts a Web Push body with the reference implementation, PyPI's
http_ece (aes128gcm, RFC 8188), given the subscription's private key and auth secret.

stdin: {"body": b64url, "privateKey": b64url of the 32-byte scalar, "auth": b64url}
stdout: {"plaintext": b64url, "recordSize": int, "keyId": b64url, "length": int}; exit 1 with one line on failure.
A missing module is an error (exit 3), never a skip: `make test` installs the pinned versions (Tests/referees/install.sh).
"""
import base64
import json
import sys

try:
    import http_ece
    from cryptography.hazmat.primitives.asymmetric import ec
except ImportError as error:  # the Swift test fails on this, naming the module
    print(f"decrypt.py: {error}; run Tests/referees/install.sh", file=sys.stderr)
    sys.exit(3)


def b64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64e(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    request = json.load(sys.stdin)
    body = b64(request["body"])
    key = ec.derive_private_key(int.from_bytes(b64(request["privateKey"]), "big"), ec.SECP256R1())
    try:
        plaintext = http_ece.decrypt(body, private_key=key, auth_secret=b64(request["auth"]), version="aes128gcm")
    except Exception as error:  # http_ece raises ECEException and cryptography's InvalidTag
        print(f"decrypt.py: http_ece refused the body: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    idlen = body[20]
    print(json.dumps({
        "plaintext": b64e(plaintext),
        "recordSize": int.from_bytes(body[16:20], "big"),
        "keyId": b64e(body[21:21 + idlen]),
        "length": len(body),
    }))


main()
