#!/usr/bin/env python3
"""A plain-HTTP stand-in for UnifiedPush distributors' discovery answers, for the registration tests
(Tests/PushServerTests/UnifiedPushRegistrationTests.swift): one listening socket on 127.0.0.1, an ephemeral port
printed on stdout as its first line, then one answer per path:

  GET /up/ok        200 {"unifiedpush":{"version":1}}   (a distributor)
  GET /up/redirect  301 to /up/ok                        (must not be followed)
  GET /up/other     200 {"status":"ok"}                  (another service's JSON)
  GET /up/missing   404                                  (no such push resource)
  GET /up/silent    no answer for 30 s                   (a timeout: discovery unavailable)

Standard library only. Runs until killed.
"""
import http.server
import json
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/up/ok":
            self.answer(200, {"unifiedpush": {"version": 1}})
        elif path == "/up/redirect":
            self.send_response(301)
            self.send_header("Location", "/up/ok")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/up/other":
            self.answer(200, {"status": "ok"})
        elif path == "/up/silent":
            time.sleep(30)
        else:
            self.answer(404, {"error": "no such endpoint"})

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
