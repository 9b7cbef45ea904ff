#!/usr/bin/env python3
"""Huawei's own Push Kit server SDK for Python (PyPI's python-huawei-push-admin 1.0.0, module push_admin, pinned by
Tests/referees/install.sh) against the simulator's Huawei side: its OAuth endpoint and `messages:send`.

Usage: hms_referee.py --url https://HOST:PORT --client-id ID --secret-file FILE --ca CA.pem TOKEN [TOKEN…]

--url is the simulator's origin: the SDK takes it as `push_open_url` (it appends /v1/{client id}/messages:send) and
URL/oauth2/v3/token as `token_server`. --ca is the simulator's CA; the SDK hands it to requests as `verify=`, so TLS is
verified (its default is verify=False: we never use the default). The tokens must be valid for the app. Prints one
JSON line per case, {"name", "ok": bool, "code", "msg", "requestId"} or {"name", "ok": false, "error"}:
  notification   - an Android notification message (title, body, click_action type 3) to every TOKEN
  validate-only  - the same to the first TOKEN with validate_only=True (answered, not delivered)
  partial        - a data message to the first TOKEN and "not a token!" (Huawei's 80100000 partial success)
  wrong-secret   - a second App with the same client id and another secret (the token request is refused)
Exit status 0 when every case ran (whatever the answers: the Swift test judges them), 3 when the SDK is missing.

The package installs `push_admin` but imports itself as `src.push_admin` (`from src.push_admin import _http`), a
packaging bug that makes `import push_admin` fail with "No module named 'src'": a module `src` whose path is the
directory holding push_admin makes those imports resolve to the installed files, unchanged.
"""
import argparse
import importlib.util
import json
import os
import sys
import types
import warnings

warnings.simplefilter("ignore")  # the SDK compares ints with `is not` (a SyntaxWarning on Python 3.8+)

spec = importlib.util.find_spec("push_admin")
if spec is None or not spec.submodule_search_locations:
    sys.stderr.write("python-huawei-push-admin is not installed: run Tests/referees/install.sh (make referees)\n")
    sys.exit(3)
shim = types.ModuleType("src")
shim.__path__ = [os.path.dirname(list(spec.submodule_search_locations)[0])]
sys.modules["src"] = shim

import src.push_admin as push_admin  # noqa: E402
from src.push_admin import _app, messaging  # noqa: E402


def notification_message(tokens):
    return messaging.Message(
        android=messaging.AndroidConfig(
            urgency=messaging.AndroidConfig.HIGH_PRIORITY, ttl="86400s",
            notification=messaging.AndroidNotification(
                title="Referee", body="from push_admin", click_action=messaging.AndroidClickAction(action_type=3))),
        token=tokens)


def attempt(name, send):
    try:
        response = send()
    except Exception as error:  # the SDK wraps every failure in ApiCallError (or ValueError) with a text
        return {"name": name, "ok": False, "error": str(error)}
    return {"name": name, "ok": True, "code": response.code, "msg": response.reason, "requestId": response.requestId}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--secret-file", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("tokens", nargs="+")
    args = parser.parse_args()
    with open(args.secret_file, encoding="utf-8") as handle:
        secret = handle.read().strip()
    token_server = args.url.rstrip("/") + "/oauth2/v3/token"
    push_admin.initialize_app(args.client_id, secret, args.client_id, token_server=token_server, push_open_url=args.url)
    first = args.tokens[0]
    cases = [
        ("notification", lambda: messaging.send_message(notification_message(args.tokens), verify_peer=args.ca)),
        ("validate-only", lambda: messaging.send_message(
            notification_message([first]), validate_only=True, verify_peer=args.ca)),
        ("partial", lambda: messaging.send_message(
            messaging.Message(data='{"k":"v"}', token=[first, "not a token!"]), verify_peer=args.ca)),
        ("wrong-secret", lambda: messaging.SendResponse(
            _app.App(args.client_id, secret + "x", args.client_id, token_server=token_server, push_open_url=args.url)
            .send(notification_message([first]), False, verify_peer=args.ca))),
    ]
    for name, send in cases:
        print(json.dumps(attempt(name, send)), flush=True)


if __name__ == "__main__":
    main()
