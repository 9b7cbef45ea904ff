#!/usr/bin/env python3
"""Google's own OAuth client (google-auth, pinned by `make referees`) against the simulator's token endpoint.

Usage: sim_google_auth.py ACCOUNT.json FORGED.json CA.pem

ACCOUNT.json is a service account the simulator issued and trusts; FORGED.json is the same account with another
private key. The simulator's CA is trusted through a requests session (verification stays on). Prints one JSON line
per case, {"name", "granted": bool, "token" | "error"}:
  valid          - Credentials.from_service_account_file(ACCOUNT, scopes=[firebase.messaging]).refresh()
  other-key      - the same with FORGED.json (signed by another key)
  other-audience - ACCOUNT.json with additional_claims {"aud": "https://example.com/token"}
"""
import json
import sys

try:
    import google.auth.exceptions
    import google.auth.transport.requests
    import requests
    from google.oauth2 import service_account
except ImportError as error:
    sys.stderr.write(f"google-auth is not installed ({error}): run `make referees`\n")
    sys.exit(3)

SCOPE = "https://www.googleapis.com/auth/firebase.messaging"


def attempt(name, path, ca, **extra):
    credentials = service_account.Credentials.from_service_account_file(path, scopes=[SCOPE], **extra)
    session = requests.Session()
    session.verify = ca
    try:
        credentials.refresh(google.auth.transport.requests.Request(session=session))
    except google.auth.exceptions.RefreshError as error:
        return {"name": name, "granted": False, "error": str(error)}
    return {"name": name, "granted": True, "token": credentials.token, "valid": credentials.valid,
            "expiry": credentials.expiry.isoformat() if credentials.expiry else None}


def main():
    account, forged, ca = sys.argv[1:4]
    for case in (
        attempt("valid", account, ca),
        attempt("other-key", forged, ca),
        attempt("other-audience", account, ca, additional_claims={"aud": "https://example.com/token"}),
    ):
        print(json.dumps(case), flush=True)


if __name__ == "__main__":
    main()
