#!/usr/bin/env bash
# The reference implementations the Web Push referee tests run against, pinned: http_ece (RFC 8188/8291), py_vapid
# and PyJWT (RFC 8292) referee our sender (Tests/PushSenderTests/WebPushRefereeTests.swift); pywebpush sends to the
# simulator (Tests/PushSimulatorTests/SimulatorWebPushRefereeTests.swift); PyJWT verifies our FCM service-account
# assertion with the account's public key (Tests/fcm, FCMServiceAccountTests); google-auth (Google's own OAuth client,
# over requests) gets FCM access tokens from the simulator's token endpoint (Tests/fcm/sim_google_auth.py,
# SimulatorFCMRefereeTests); h2 (Python's HTTP/2 stack) is the strict server Tests/referees/h2_strict_apns.py plays for
# Tests/referees/h2_referee.sh (issue 57: a stream over its limit closes the connection); python-huawei-push-admin
# (Huawei's Push Kit server SDK, over requests) sends to the simulator's Huawei side (Tests/referees/hms_referee.py,
# HMSRefereeTests). Installed from PyPI by `make test`
# before the Swift tests; fails (never skips) when PyPI is unreachable.
set -euo pipefail
PACKAGES=("h2==4.4.1" "http_ece==1.2.1" "py-vapid==1.9.6" "pyjwt==2.15.1" "pywebpush==2.5.0" "cryptography==48.0.0" "google-auth==2.63.0" "requests==2.34.2" "python-huawei-push-admin==1.0.0")
if python3 - "${PACKAGES[@]}" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
for spec in sys.argv[1:]:
    name, wanted = spec.split("==")
    if version(name) != wanted:
        sys.exit(1)
PY
  exit 0
fi
echo "referees: installing ${PACKAGES[*]} from PyPI"
python3 -m pip install -q "${PACKAGES[@]}" >/dev/null 2>&1 || {
  echo "referees: cannot install ${PACKAGES[*]} with pip (PyPI unreachable?); the referee tests cannot run" >&2
  exit 1
}
