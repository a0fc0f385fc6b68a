#!/usr/bin/env python3
"""The benchmarks' identity provider on a loopback port, standard library only. For the `social`
scenario it serves the JWKS of the key gatehouse-bench made (provider `bench`); for `social-access`
it answers like GitHub's API does when Gatehouse proves and reads an access token (provider
`bench-gh`: the app's token check, /user, /user/emails), for any token `bench-gh-N`; for
`provider-token`, an OAuth 2.0 provider whose web flow Gatehouse keeps the tokens of (provider
`bench-kept`: /kept/authorize approves at once as a new person each time, /kept/token, /kept/userinfo).
HTTP/1.1 keep-alive, so the server's connection pool is used as with a real provider.

    bench_idp.py PORT JWKS_FILE      (scripts/bench-smoke; scripts/bench imports it)
"""
import http.server
import itertools
import json
import sys
import threading
from urllib.parse import parse_qs, urlencode, urlsplit

# The `bench-kept` people: each authorization a new one, so every virtual user has its own identity.
PEOPLE = itertools.count()


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
            if self.path.startswith("/kept/authorize?"):
                query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                code = f"kept-code-{next(PEOPLE)}"
                self.send_response(302)
                self.send_header("Location", query["redirect_uri"] + "?" + urlencode({"code": code, "state": query.get("state", "")}))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.path == "/kept/userinfo":
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if not token.startswith("kept-at-"):
                    return self.answer(401, b'{"error": "invalid_token"}')
                n = token.removeprefix("kept-at-")
                return self.answer(200, json.dumps({"sub": f"kept-{n}", "email": f"kept-{n}@idp.example", "email_verified": True,
                                                    "name": f"Kept {n}"}).encode())
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
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path == "/kept/token":
                form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                n = form.get("code", "").removeprefix("kept-code-")
                # An hour's access token: the scenario reads a kept token, it does not refresh one.
                return self.answer(200, json.dumps({"access_token": f"kept-at-{n}", "refresh_token": f"kept-rt-{n}",
                                                    "token_type": "Bearer", "expires_in": 3600}).encode())
            body = json.loads(raw or b"{}")
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


def providers(base, access=True, kept=False):
    """The providers file's entries for a server that reaches this provider at `base` (`kept` for a
    build that knows `keep_tokens`)."""
    entries = [{"id": "bench", "type": "oidc", "issuer": "https://bench-idp.example", "jwks_uri": base + "/jwks",
                "client_ids": ["bench-app"]}]
    if access:
        entries.append({"id": "bench-gh", "type": "github", "client_ids": ["bench-gh"], "client_secret": "bench-secret",
                        "api_base": base + "/github"})
    if kept:
        entries.append({"id": "bench-kept", "type": "oauth2", "client_ids": ["bench-kept"], "client_secret": "bench-secret",
                        "authorization_endpoint": base + "/kept/authorize", "token_endpoint": base + "/kept/token",
                        "userinfo_endpoint": base + "/kept/userinfo", "keep_tokens": True, "keep_profile": True})
    return entries


if __name__ == "__main__":
    port, jwks_file = int(sys.argv[1]), sys.argv[2]
    with open(jwks_file, "rb") as f:
        server = serve(f.read().strip(), port)
    threading.Event().wait()
