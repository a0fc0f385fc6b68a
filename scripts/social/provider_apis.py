#!/usr/bin/env python3
"""A local stand-in for Facebook's Graph API, GitHub's API, X's API v2 and a generic OAuth 2.0 server,
so tests can point a provider's endpoints at 127.0.0.1 and check what Gatehouse asks and how it takes
the answers. Everything lives in memory; tests set it up through the /_ endpoints.

    provider_apis.py --port PORT        (0 picks a free port; prints "listening on PORT" once bound)

Test control (never called by the server under test):
    PUT  /_users/{provider}/{user}      {"id": "1001", "name": ..., "first_name": ..., "last_name": ...,
                                         "email": ..., "email_verified": true}
    PUT  /_apps/{provider}/{client_id}  {"secret": "...", "redirect_uris": [...] (optional),
                                         "token_lifetime": seconds (optional, the web flow's access tokens)}
    POST /_tokens                       {"provider": ..., "client_id": ..., "user": ...} -> {"access_token": ...}
    DELETE /_tokens/{token}             revokes a token (an access or a refresh token)
    DELETE /_refresh_tokens             revokes every refresh token (people withdrew the apps' access)
    GET  /_requests                     every request to the provider paths: method, path, query, headers, body
    DELETE /_requests                   forgets them
provider is one of facebook, github, x, oauth.

Provider paths:
    /facebook[/vNN.N]/debug_token, /me, /dialog/oauth, /oauth/access_token
    /github/applications/{client_id}/token, /user, /user/emails, /login/oauth/authorize, /login/oauth/access_token
    /x/2/users/me, /x/i/oauth2/authorize, /x/2/oauth2/token
    /oauth/authorize, /oauth/token, /oauth/introspect, /oauth/userinfo

The generic server and X issue refresh tokens with their web flow's access tokens (X when the scope
has offline.access) and take grant_type=refresh_token, rotating the refresh token each time: a
refresh token used once is refused after (invalid_grant).
"""
import argparse
import base64
import hashlib
import hmac
import html
import json
import re
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

PROVIDERS = ("facebook", "github", "x", "oauth")
TOKEN_PREFIX = {"facebook": "EAAtest", "github": "gho_", "x": "x_at_", "oauth": "oa_at_"}
CODE_PREFIX = {"facebook": "fb_ac_", "github": "gh_ac_", "x": "x_ac_", "oauth": "oa_ac_"}
CODE_LIFETIME = 60

FB_INVALID_TOKEN = {"error": {"message": "Invalid OAuth access token.", "type": "OAuthException", "code": 190}}
FB_BAD_PROOF = {"error": {"message": "Invalid appsecret_proof provided in the API argument", "type": "GraphMethodException", "code": 100}}
GH_BAD_CREDENTIALS = {"message": "Bad credentials"}
GH_NO_USER_AGENT = {"message": "Request forbidden by administrative rules. Please make sure your request has a User-Agent header"}
X_UNAUTHORIZED = {"title": "Unauthorized", "type": "about:blank", "status": 401, "detail": "Unauthorized"}


class State:
    """Users, apps, codes and tokens of all four providers, and the request log; one lock for all."""

    def __init__(self):
        self.lock = threading.Lock()
        self.users = {p: {} for p in PROVIDERS}  # provider -> user name -> profile dict
        self.apps = {p: {} for p in PROVIDERS}  # provider -> client_id -> {"secret": ..., "redirect_uris": [...] | None}
        self.tokens = {}  # token -> {"provider", "client_id", "user", "scope", "issued", "expires"}
        self.codes = {}  # code -> {"provider", "client_id", "redirect_uri", "user", "challenge", "scope", "expires", "used"}
        self.refresh_tokens = {}  # refresh token -> {"provider", "client_id", "user", "scope"}
        self.requests = []

    def mint_token(self, provider, client_id, user, scope=None, lifetime=3600):
        token = TOKEN_PREFIX[provider] + secrets.token_urlsafe(24)
        now = int(time.time())
        self.tokens[token] = {"provider": provider, "client_id": client_id, "user": user, "scope": scope,
                              "issued": now, "expires": now + lifetime}
        return token

    def token(self, provider, token):
        """The token's record and its user's profile, or (None, None) when unknown, revoked or expired."""
        record = self.tokens.get(token or "")
        if not record or record["provider"] != provider or record["expires"] < time.time():
            return None, None
        profile = self.users[provider].get(record["user"])
        if profile is None:
            return None, None
        return record, profile


STATE = State()


def github_id(profile, user):
    """GitHub ids are numbers: the id given at PUT as an int (a non-numeric one becomes a stable number)."""
    raw = profile.get("id", user)
    try:
        return int(raw)
    except (TypeError, ValueError):
        return int.from_bytes(hashlib.sha256(str(raw).encode()).digest()[:4], "big")


def pkce_s256(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def with_query(url, params):
    """url with params appended to whatever query it already has (the fragment dropped)."""
    parts = urlsplit(url)
    extra = urlencode(params, quote_via=quote)
    query = parts.query + "&" + extra if parts.query else extra
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def page(title, body):
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
 body {{ font-family: sans-serif; background: #eef2f7; margin: 0; padding: 2rem 1rem; color: #1d2733; }}
 main {{ max-width: 26rem; margin: auto; background: #fff; border-radius: 8px; padding: 1.5rem; box-shadow: 0 2px 8px #0002; }}
 h1 {{ font-size: 1.3rem; margin-top: 0; }} code {{ background: #f1f3f5; padding: 0 .25rem; }}
 label {{ display: block; font-weight: bold; margin: 1rem 0 .3rem; }}
 input {{ width: 100%; box-sizing: border-box; padding: .5rem; font-size: 1rem; }}
 button {{ margin-top: 1rem; padding: .55rem 1.1rem; font-size: 1rem; border-radius: 4px; border: 1px solid #2457a6; }}
 #authorize {{ background: #2f6fd0; color: #fff; }} #deny {{ background: #fff; color: #2457a6; }}
 .error {{ color: #b00020; }}
</style></head><body><main>{body}</main></body></html>"""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this, Nagle and delayed ACKs add 40 ms a call.
    disable_nagle_algorithm = True
    server_version = "ProviderAPIs/1"
    verbose = False

    # ---------------------------------------------------------------- plumbing

    def log_message(self, fmt, *args):
        if self.verbose:
            sys.stderr.write("provider_apis: " + (fmt % args) + "\n")

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send(self, status, payload, content_type="application/json", headers=()):
        if content_type == "application/json":
            data = json.dumps(payload).encode()
        else:
            data = payload.encode() if isinstance(payload, str) else payload
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8" if content_type == "text/html" else content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def json_answer(self, status, payload, headers=()):
        self.send(status, payload, "application/json", headers)

    def html_answer(self, status, title, body):
        self.send(status, page(title, body), "text/html")

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()

    def json_body(self):
        try:
            value = json.loads(self.body_text or "null")
        except ValueError:
            return None
        return value

    def form(self):
        """Query parameters overlaid with a form body's fields (single values: the first of each)."""
        values = dict(self.query)
        if "application/x-www-form-urlencoded" in self.headers.get("Content-Type", ""):
            for name, items in parse_qs(self.body_text, keep_blank_values=True).items():
                values[name] = items[0]
        return values

    def bearer(self):
        value = self.headers.get("Authorization", "")
        scheme, _, token = value.partition(" ")
        if scheme.lower() in ("bearer", "token") and token.strip():
            return token.strip()
        return None

    def basic(self, form_encoded):
        """(id, secret) from an Authorization: Basic header, or None. RFC 6749 §2.3.1 token endpoints
        form-encode both before joining them; GitHub's REST API takes them as they are (RFC 7617)."""
        value = self.headers.get("Authorization", "")
        scheme, _, encoded = value.partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            return None
        user, sep, password = decoded.partition(":")
        if not sep:
            return None
        if form_encoded:
            user, password = unquote_plus(user), unquote_plus(password)
        return user, password

    def dispatch(self):
        parts = urlsplit(self.path)
        self.route = unquote(parts.path)
        self.query = {name: items[0] for name, items in parse_qs(parts.query, keep_blank_values=True).items()}
        self.body_text = self.read_body().decode("utf-8", "replace")
        if not self.route.startswith("/_"):
            with STATE.lock:
                STATE.requests.append({
                    "method": self.command, "path": self.route, "query": self.query,
                    "headers": {name.lower(): value for name, value in self.headers.items()}, "body": self.body_text,
                })
        try:
            self.handle_route()
        except Exception as error:  # an answer, never a dropped connection
            sys.stderr.write(f"provider_apis: {self.command} {self.path}: {error!r}\n")
            self.json_answer(500, {"error": "server_error", "error_description": repr(error)})

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = dispatch

    def handle_route(self):
        path, method = self.route, self.command
        if path.startswith("/_"):
            return self.control(path, method)
        provider, _, rest = path.lstrip("/").partition("/")
        rest = "/" + rest
        if provider == "facebook":
            rest = re.sub(r"^/v\d+(\.\d+)?(?=/)", "", rest)  # /facebook/v19.0/me like graph.facebook.com/v19.0/me
        routes = {
            ("facebook", "/debug_token"): ({"GET"}, self.facebook_debug_token),
            ("facebook", "/me"): ({"GET"}, self.facebook_me),
            ("facebook", "/dialog/oauth"): ({"GET", "POST"}, self.authorize),
            ("facebook", "/oauth/access_token"): ({"GET", "POST"}, self.token_endpoint),
            ("github", "/user"): ({"GET"}, self.github_user),
            ("github", "/user/emails"): ({"GET"}, self.github_emails),
            ("github", "/login/oauth/authorize"): ({"GET", "POST"}, self.authorize),
            ("github", "/login/oauth/access_token"): ({"POST"}, self.token_endpoint),
            ("x", "/2/users/me"): ({"GET"}, self.x_me),
            ("x", "/i/oauth2/authorize"): ({"GET", "POST"}, self.authorize),
            ("x", "/2/oauth2/token"): ({"POST"}, self.token_endpoint),
            ("oauth", "/authorize"): ({"GET", "POST"}, self.authorize),
            ("oauth", "/token"): ({"POST"}, self.token_endpoint),
            ("oauth", "/introspect"): ({"POST"}, self.oauth_introspect),
            ("oauth", "/userinfo"): ({"GET", "POST"}, self.oauth_userinfo),
        }
        match = re.fullmatch(r"/applications/([^/]+)/token", rest)
        if provider == "github" and match:
            methods, handler, args = {"POST"}, self.github_check_token, (match.group(1),)
        elif (provider, rest) in routes:
            (methods, handler), args = routes[(provider, rest)], ()
        else:
            return self.json_answer(404, {"error": "not_found", "path": path})
        if method == "HEAD" and "GET" in methods:
            method = "GET"
        if method not in methods:
            return self.json_answer(405, {"error": "method_not_allowed"}, [("Allow", ", ".join(sorted(methods)))])
        self.provider = provider
        return handler(*args)

    # ---------------------------------------------------------------- test control

    def control(self, path, method):
        segments = path.strip("/").split("/")
        if segments[0] == "_users" and len(segments) == 3 and method == "PUT":
            provider, user = segments[1], segments[2]
            profile = self.json_body()
            if provider not in PROVIDERS or not isinstance(profile, dict):
                return self.json_answer(400, {"error": "provider must be one of facebook, github, x, oauth; body a JSON object"})
            profile.setdefault("id", user)
            with STATE.lock:
                STATE.users[provider][user] = profile
            return self.json_answer(200, {})
        if segments[0] == "_apps" and len(segments) == 3 and method == "PUT":
            provider, client_id = segments[1], segments[2]
            body = self.json_body()
            if provider not in PROVIDERS or not isinstance(body, dict) or not isinstance(body.get("secret"), str):
                return self.json_answer(400, {"error": 'provider must be one of facebook, github, x, oauth; body {"secret": "..."}'})
            with STATE.lock:
                STATE.apps[provider][client_id] = {"secret": body["secret"], "redirect_uris": body.get("redirect_uris"),
                                                   "token_lifetime": body.get("token_lifetime")}
            return self.json_answer(200, {})
        if segments == ["_tokens"] and method == "POST":
            body = self.json_body()
            if not isinstance(body, dict) or body.get("provider") not in PROVIDERS or not body.get("client_id") or not body.get("user"):
                return self.json_answer(400, {"error": 'body {"provider": ..., "client_id": ..., "user": ...}'})
            with STATE.lock:
                if body["user"] not in STATE.users[body["provider"]]:
                    return self.json_answer(400, {"error": f"no user {body['user']!r} at {body['provider']}"})
                token = STATE.mint_token(body["provider"], body["client_id"], body["user"], body.get("scope"))
            return self.json_answer(200, {"access_token": token})
        if segments[0] == "_tokens" and len(segments) == 2 and method == "DELETE":
            with STATE.lock:
                found = STATE.tokens.pop(segments[1], None) or STATE.refresh_tokens.pop(segments[1], None)
            return self.json_answer(200 if found else 404, {})
        if segments == ["_refresh_tokens"] and method == "DELETE":
            with STATE.lock:
                STATE.refresh_tokens.clear()
            return self.json_answer(200, {})
        if segments == ["_requests"] and method == "GET":
            with STATE.lock:
                return self.json_answer(200, list(STATE.requests))
        if segments == ["_requests"] and method == "DELETE":
            with STATE.lock:
                STATE.requests.clear()
            return self.json_answer(200, {})
        return self.json_answer(404, {"error": "unknown control endpoint"})

    # ---------------------------------------------------------------- Facebook

    def facebook_debug_token(self):
        app_id, sep, app_secret = self.query.get("access_token", "").partition("|")
        with STATE.lock:
            app = STATE.apps["facebook"].get(app_id)
            if not sep or app is None or not hmac.compare_digest(app["secret"], app_secret):
                return self.json_answer(400, FB_INVALID_TOKEN)
            record, profile = STATE.token("facebook", self.query.get("input_token"))
        if record is None:
            return self.json_answer(200, {"data": {"is_valid": False, "error": {"code": 190, "message": "Invalid OAuth access token."}}})
        return self.json_answer(200, {"data": {
            "app_id": record["client_id"], "type": "USER", "application": "test", "is_valid": True,
            "user_id": str(profile["id"]), "expires_at": int(time.time()) + 3600, "scopes": ["email", "public_profile"],
        }})

    def facebook_me(self):
        token = self.query.get("access_token") or self.bearer()
        with STATE.lock:
            record, profile = STATE.token("facebook", token)
            app = STATE.apps["facebook"].get(record["client_id"]) if record else None
        if record is None:
            return self.json_answer(400, FB_INVALID_TOKEN)
        if "appsecret_proof" in self.query:
            expected = hmac.new(app["secret"].encode(), token.encode(), hashlib.sha256).hexdigest() if app else ""
            if not expected or not hmac.compare_digest(expected, self.query["appsecret_proof"].lower()):
                return self.json_answer(400, FB_BAD_PROOF)
        fields = [f.strip() for f in self.query.get("fields", "id,name").split(",") if f.strip()]
        answer = {"id": str(profile["id"])}
        for field in fields:
            if field != "id" and profile.get(field) is not None:
                answer[field] = profile[field]
        return self.json_answer(200, answer)

    # ---------------------------------------------------------------- GitHub

    def github_user_agent_missing(self):
        if not self.headers.get("User-Agent"):
            self.json_answer(403, GH_NO_USER_AGENT)
            return True
        return False

    def github_check_token(self, client_id):
        if self.github_user_agent_missing():
            return
        credentials = self.basic(form_encoded=False)
        body = self.json_body()
        with STATE.lock:
            app = STATE.apps["github"].get(client_id)
            if (credentials is None or app is None or credentials[0] != client_id
                    or not hmac.compare_digest(app["secret"], credentials[1])):
                return self.json_answer(401, GH_BAD_CREDENTIALS)
            token = body.get("access_token") if isinstance(body, dict) else None
            record, profile = STATE.token("github", token)
            user = record["user"] if record else None
        if record is None or record["client_id"] != client_id:
            return self.json_answer(404, {"message": "Not Found"})
        return self.json_answer(200, {
            "id": 1, "token": token, "app": {"client_id": client_id, "name": "test"},
            "user": {"id": github_id(profile, user), "login": user}, "scopes": ["read:user", "user:email"],
        })

    def github_authenticated(self):
        if self.github_user_agent_missing():
            return None, None
        with STATE.lock:
            record, profile = STATE.token("github", self.bearer())
        if record is None:
            self.json_answer(401, GH_BAD_CREDENTIALS)
            return None, None
        return record, profile

    def github_user(self):
        record, profile = self.github_authenticated()
        if record is None:
            return
        return self.json_answer(200, {
            "id": github_id(profile, record["user"]), "login": record["user"], "type": "User",
            "name": profile.get("name"), "email": profile.get("email"),
        })

    def github_emails(self):
        record, profile = self.github_authenticated()
        if record is None:
            return
        if not profile.get("email"):
            return self.json_answer(200, [])
        return self.json_answer(200, [{"email": profile["email"], "primary": True,
                                       "verified": bool(profile.get("email_verified")), "visibility": "public"}])

    # ---------------------------------------------------------------- X

    def x_me(self):
        with STATE.lock:
            record, profile = STATE.token("x", self.bearer())
        if record is None:
            return self.json_answer(401, X_UNAUTHORIZED)
        data = {"id": str(profile["id"]), "name": profile.get("name") or record["user"], "username": record["user"]}
        if profile.get("email"):
            data["confirmed_email"] = profile["email"]
        return self.json_answer(200, {"data": data})

    # ---------------------------------------------------------------- generic OAuth 2.0

    def oauth_client(self, form):
        """The authenticated client id (Basic or form client_id + client_secret), or None."""
        credentials = self.basic(form_encoded=True)
        if credentials is None and form.get("client_secret") is not None:
            credentials = (form.get("client_id", ""), form["client_secret"])
        if credentials is None:
            return None
        if form.get("client_id") not in (None, credentials[0]):
            return None
        with STATE.lock:
            app = STATE.apps[self.provider].get(credentials[0])
        if app is None or not hmac.compare_digest(app["secret"], credentials[1]):
            return None
        return credentials[0]

    def oauth_introspect(self):
        form = self.form()
        if self.oauth_client(form) is None:
            return self.json_answer(401, {"error": "invalid_client"}, [("WWW-Authenticate", 'Basic realm="oauth"')])
        if not form.get("token"):
            return self.json_answer(400, {"error": "invalid_request", "error_description": "token is required"})
        with STATE.lock:
            record, profile = STATE.token("oauth", form["token"])
        if record is None:
            return self.json_answer(200, {"active": False})
        return self.json_answer(200, {
            "active": True, "client_id": record["client_id"], "sub": str(profile["id"]), "username": record["user"],
            "scope": record["scope"] or "profile email", "token_type": "Bearer", "exp": record["expires"], "iat": record["issued"],
        })

    def oauth_userinfo(self):
        with STATE.lock:
            record, profile = STATE.token("oauth", self.bearer())
        if record is None:
            return self.json_answer(401, {"error": "invalid_token"}, [("WWW-Authenticate", 'Bearer error="invalid_token"')])
        answer = {"sub": str(profile["id"]), "preferred_username": record["user"]}
        for claim, field in (("name", "name"), ("given_name", "first_name"), ("family_name", "last_name"),
                             ("email", "email"), ("email_verified", "email_verified")):
            if profile.get(field) is not None:
                answer[claim] = profile[field]
        if "email" in answer:
            answer.setdefault("email_verified", False)
        return self.json_answer(200, answer)

    # ---------------------------------------------------------------- web flow: authorize

    def authorize(self):
        provider = self.provider
        params = self.form() if self.command == "POST" else dict(self.query)
        title = f"Authorize {provider}"
        client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
        with STATE.lock:
            app = STATE.apps[provider].get(client_id)
        if app is None:
            return self.html_answer(400, "Authorization error", f'<h1 class="error">unknown client</h1>'
                                    f"<p>No {html.escape(provider)} app <code>{html.escape(client_id)}</code>.</p>")
        if not redirect_uri or urlsplit(redirect_uri).scheme not in ("http", "https"):
            return self.html_answer(400, "Authorization error", '<h1 class="error">missing or invalid redirect_uri</h1>')
        if app["redirect_uris"] is not None and redirect_uri not in app["redirect_uris"]:
            return self.html_answer(400, "Authorization error", '<h1 class="error">redirect_uri mismatch</h1>'
                                    f"<p><code>{html.escape(redirect_uri)}</code> is not registered.</p>")
        state = {"state": params["state"]} if "state" in params else {}

        def error(code, description=None):
            extra = {"error_description": description} if description else {}
            return self.redirect(with_query(redirect_uri, {"error": code, **extra, **state}))

        if params.get("response_type", "code") != "code":
            return error("unsupported_response_type")
        challenge = params.get("code_challenge")
        if challenge is not None and params.get("code_challenge_method") != "S256":
            return error("invalid_request", "code_challenge_method must be S256")
        if challenge is not None and not re.fullmatch(r"[A-Za-z0-9_-]{43}", challenge):
            return error("invalid_request", "code_challenge is not an S256 challenge")
        if provider == "x" and challenge is None:
            return error("invalid_request", "code_challenge is required")

        if self.command == "GET":
            hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                             for k, v in params.items() if k not in ("user", "deny"))
            scope = html.escape(params.get("scope", ""))
            body = (f"<h1>{html.escape(title)}</h1>"
                    f"<p>The app <code>{html.escape(client_id)}</code> asks to sign you in"
                    f"{f' (scope <code>{scope}</code>)' if scope else ''}.</p>"
                    f'<form method="POST" action="{html.escape(self.route)}">{hidden}'
                    f'<label for="user">Account</label><input id="user" name="user" autocomplete="off">'
                    f'<button id="authorize" type="submit">Authorize</button> '
                    f'<button id="deny" name="deny" value="1">Cancel</button></form>')
            return self.html_answer(200, title, body)

        if params.get("deny"):
            return self.redirect(with_query(redirect_uri, {"error": "access_denied", **state}))
        user = params.get("user", "").strip()
        with STATE.lock:
            known = user in STATE.users[provider]
            if known:
                code = CODE_PREFIX[provider] + secrets.token_urlsafe(24)
                STATE.codes[code] = {"provider": provider, "client_id": client_id, "redirect_uri": redirect_uri, "user": user,
                                     "challenge": challenge, "scope": params.get("scope"),
                                     "expires": time.time() + CODE_LIFETIME, "used": False}
        if not known:
            return self.html_answer(400, "Authorization error", f'<h1 class="error">unknown user</h1>'
                                    f"<p>No {html.escape(provider)} account <code>{html.escape(user)}</code>.</p>")
        return self.redirect(with_query(redirect_uri, {"code": code, **state}))

    # ---------------------------------------------------------------- web flow: token endpoint

    def token_endpoint(self):
        provider = self.provider
        form = self.form()
        github = provider == "github"

        def fail(status, code, description):
            if github:  # GitHub answers its token endpoint's errors with 200
                return self.token_answer({"error": code, "error_description": description})
            headers = [("WWW-Authenticate", 'Basic realm="oauth"')] if status == 401 else []
            return self.json_answer(status, {"error": code, "error_description": description}, headers)

        grant_type = form.get("grant_type")
        refreshing = grant_type == "refresh_token" and provider in ("x", "oauth")
        if not refreshing and ((grant_type is None and provider in ("x", "oauth")) or grant_type not in (None, "authorization_code")):
            return fail(400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")

        # Client authentication: X takes only Basic; the generic server Basic or the form; Facebook and
        # GitHub the form (GitHub also Basic).
        if provider == "x":
            credentials = self.basic(form_encoded=True)
            if credentials and form.get("client_id") not in (None, credentials[0]):
                credentials = None
        elif provider == "facebook":
            credentials = (form.get("client_id", ""), form["client_secret"]) if "client_secret" in form else None
        else:
            credentials = self.basic(form_encoded=True)
            if credentials is None and "client_secret" in form:
                credentials = (form.get("client_id", ""), form["client_secret"])
            if credentials and form.get("client_id") not in (None, credentials[0]):
                credentials = None
        with STATE.lock:
            app = STATE.apps[provider].get(credentials[0]) if credentials else None
        if app is None or not hmac.compare_digest(app["secret"], credentials[1]):
            if github:
                return fail(200, "incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
            return fail(401, "invalid_client", "client authentication failed")
        client_id = credentials[0]
        if refreshing:
            return self.refresh_grant(form, client_id, app, fail)

        bad_code = "bad_verification_code" if github else "invalid_grant"
        with STATE.lock:
            grant = STATE.codes.get(form.get("code") or "")
            if (grant is None or grant["provider"] != provider or grant["used"] or grant["expires"] < time.time()
                    or grant["client_id"] != client_id):
                return fail(400, bad_code, "The code passed is incorrect or expired.")
            if form.get("redirect_uri") != grant["redirect_uri"]:
                if github:
                    return fail(200, "redirect_uri_mismatch", "The redirect_uri MUST match the one of the authorization request.")
                return fail(400, "invalid_grant", "redirect_uri differs from the authorization request's")
            if grant["challenge"] is not None:
                verifier = form.get("code_verifier") or ""
                if not hmac.compare_digest(pkce_s256(verifier), grant["challenge"]):
                    return fail(400, bad_code, "code_verifier does not match the code_challenge")
            grant["used"] = True
            lifetime = app.get("token_lifetime") or {"facebook": 5183944, "x": 7200}.get(provider, 3600)
            token = STATE.mint_token(provider, client_id, grant["user"], grant["scope"], lifetime)
            refresh = self.mint_refresh(client_id, grant["user"], grant["scope"])
        if provider == "facebook":
            return self.json_answer(200, {"access_token": token, "token_type": "bearer", "expires_in": lifetime})
        if github:
            return self.token_answer({"access_token": token, "token_type": "bearer", "scope": "read:user,user:email"})
        answer = {"access_token": token, "token_type": "bearer" if provider == "x" else "Bearer",
                  "expires_in": lifetime, "scope": grant["scope"] or ""}
        if refresh:
            answer["refresh_token"] = refresh
        return self.json_answer(200, answer)

    def mint_refresh(self, client_id, user, scope):
        """A refresh token beside the code's access token (call with the lock held), or None: X gives
        one only for offline.access, the generic server always."""
        if self.provider == "oauth" or (self.provider == "x" and "offline.access" in (scope or "").split()):
            token = {"oauth": "oa_rt_", "x": "x_rt_"}[self.provider] + secrets.token_urlsafe(24)
            STATE.refresh_tokens[token] = {"provider": self.provider, "client_id": client_id, "user": user, "scope": scope}
            return token
        return None

    def refresh_grant(self, form, client_id, app, fail):
        """RFC 6749 §6, rotating: the refresh token is spent and a new one comes with the access token."""
        with STATE.lock:
            record = STATE.refresh_tokens.get(form.get("refresh_token") or "")
            if record is None or record["provider"] != self.provider or record["client_id"] != client_id:
                return fail(400, "invalid_grant", "The refresh token is invalid, revoked or used.")
            if record["user"] not in STATE.users[self.provider]:
                return fail(400, "invalid_grant", "The account is gone.")
            del STATE.refresh_tokens[form["refresh_token"]]
            lifetime = app.get("token_lifetime") or {"x": 7200}.get(self.provider, 3600)
            token = STATE.mint_token(self.provider, client_id, record["user"], record["scope"], lifetime)
            refresh = self.mint_refresh(client_id, record["user"], record["scope"])
        return self.json_answer(200, {"access_token": token, "token_type": "bearer" if self.provider == "x" else "Bearer",
                                      "expires_in": lifetime, "scope": record["scope"] or "", "refresh_token": refresh})

    def token_answer(self, payload):
        """GitHub's token endpoint: JSON when asked for it, else a form-encoded body like github.com."""
        if "application/json" in self.headers.get("Accept", ""):
            return self.json_answer(200, payload)
        return self.send(200, urlencode(payload), "application/x-www-form-urlencoded; charset=utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description="Local stand-in for Facebook's, GitHub's and X's APIs and an OAuth 2.0 server.")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 picks a free one)")
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")
    args = parser.parse_args()
    Handler.verbose = args.verbose
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
