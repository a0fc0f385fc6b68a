#!/usr/bin/env python3
"""The benchmarks' identity provider on a loopback port, standard library only. For the `social`
scenario it serves the JWKS of the key gatehouse-bench made (provider `bench`); for `social-access`
it answers like GitHub's API does when Gatehouse proves and reads an access token (provider
`bench-gh`: the app's token check, /user, /user/emails), for any token `bench-gh-N`. HTTP/1.1
keep-alive, so the server's connection pool is used as with a real provider.

    bench_idp.py PORT JWKS_FILE      (scripts/bench-smoke; scripts/bench imports it)
"""
import http.server
import json
import sys
import threading


def handler_for(jwks):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: without this, Nagle and delayed ACKs add 40 ms a call.
        disable_nagle_algorithm = True

        def answer(self, status, body):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def subject(self):
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return token.removeprefix("bench-gh-") if token.startswith("bench-gh-") else None

        def do_GET(self):
            if self.path == "/jwks":
                return self.answer(200, jwks)
            n = self.subject()
            if n is None:
                return self.answer(401, b'{"message": "Bad credentials"}')
            if self.path == "/github/user":
                return self.answer(200, json.dumps({"id": 7000000 + int(n), "login": f"bench-gh-{n}", "name": f"Bench {n}",
                                                    "email": None}).encode())
            if self.path == "/github/user/emails":
                return self.answer(200, json.dumps([{"email": f"bench-gh-{n}@idp.example", "primary": True,
                                                     "verified": True}]).encode())
            self.answer(404, b"{}")

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            if self.path == "/github/applications/bench-gh/token" and str(body.get("access_token", "")).startswith("bench-gh-"):
                return self.answer(200, json.dumps({"token": body["access_token"], "app": {"client_id": "bench-gh"}}).encode())
            self.answer(404, b'{"message": "Not Found"}')

        def log_message(self, *args):
            pass

    return Handler


def serve(jwks, port):
    """Starts the provider in a thread; returns the server (its port in server_address)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler_for(jwks))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def providers(base, access=True):
    """The providers file's entries for a server that reaches this provider at `base`."""
    entries = [{"id": "bench", "type": "oidc", "issuer": "https://bench-idp.example", "jwks_uri": base + "/jwks",
                "client_ids": ["bench-app"]}]
    if access:
        entries.append({"id": "bench-gh", "type": "github", "client_ids": ["bench-gh"], "client_secret": "bench-secret",
                        "api_base": base + "/github"})
    return entries


if __name__ == "__main__":
    port, jwks_file = int(sys.argv[1]), sys.argv[2]
    with open(jwks_file, "rb") as f:
        server = serve(f.read().strip(), port)
    threading.Event().wait()
