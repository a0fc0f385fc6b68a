#!/usr/bin/env python3
"""Proves that an unmodified OpenID Connect client library (Authlib) drives Gatehouse's whole
authorization-code flow with PKCE (S256), with a real headless Chromium filling in Gatehouse's hosted
HTML pages. One Chromium session (its cookies are the Gatehouse browser session) goes through:

  discovery                the OpenID Provider metadata, validated by Authlib
  public-signin            public client: sign-in page, code (exact state, RFC 9207 iss), token
                           exchange, ID token (RS256, iss, aud, nonce, exp, at_hash, auth_time),
                           userinfo, one refresh (the rotated refresh token is kept for rp-logout)
  sso-confidential         confidential client (client_secret_basic): no sign-in page, required-fields
                           page (name), consent page; auth_time as in public-signin; userinfo name
  prompt-none              public client, prompt=none: a code without any page
  terms-bump               admin API raises the public client's terms_client_version; terms page
  max-age-reauth           public client, max_age=0: the sign-in page despite the session; a later
                           auth_time
  rp-logout                end_session_endpoint with id_token_hint; the app gets /logged-out?state=bye;
                           with --frontchannel, /fc?client=ID was loaded first in hidden frames, with
                           iss and the public client's sid; the public client's refresh token is dead
                           (invalid_grant)
  prompt-none-no-session   public client, prompt=none: error=login_required with the same state and iss
  signin-after-logout      a plain authorization request shows the sign-in page again

    hosted_flow.py --issuer URL --app-port PORT --shots DIR --email E --password P \
        --public-client ID --confidential-client ID --confidential-secret S \
        --admin-client ID --admin-secret S --terms-version NEW

A small HTTP server on 127.0.0.1:PORT stands in for the app: /cb (public client), /cb2 (confidential
client) and /logged-out (post-logout) answer a plain page and record the request.

Progress goes to stderr, one line a phase. The last line of stdout is one JSON object:
  {"ok": true, "phases": [...], "auth_time_1": N, "auth_time_5": N, ...}, exit 0; or
  {"ok": false, "phase": ..., "error": ..., "url": ..., "title": ...}, screenshot fail.png, exit 1.
Screenshots of every Gatehouse page shown (01-signin.png, 02-fields.png, 03-consent.png, 04-terms.png,
05-signin-max-age.png, 06-logout.png when the confirmation shows, 08-signin-after-logout.png) and of
the app's pages (app-*.png) go to DIR. No token, code, secret or password is ever printed.
"""
import argparse
import base64
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, urlencode, urlsplit, urlunsplit

import requests
from authlib.common.security import generate_token
from authlib.common.urls import add_params_to_uri
from authlib.integrations.requests_client import OAuth2Session, OAuthError
from authlib.oidc import rpinitiated
from authlib.oidc.core import CodeIDToken
from authlib.oidc.discovery import OpenIDProviderMetadata
from joserfc import jwt
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from reset_flow import png_variety

TIMEOUT = 20
SETTLED = 2.0  # seconds a page must stay put (loaded, same URL and title) to count as where the browser ended
LEEWAY = 120  # seconds of clock skew allowed on exp/iat, as Authlib's own parse_id_token allows

# The hosted pages, by the form each one carries (the element contract of the hosted UI).
PAGES = {
    "signin": "form#signin",
    "terms": "form#terms",
    "fields": "form#fields",
    "consent": "form#consent",
    "logout": "form#logout",
}
CALLBACK_PATHS = ("/cb", "/cb2", "/logged-out")
SENSITIVE_PARAMS = ("code", "id_token_hint", "id_token", "access_token", "refresh_token", "code_verifier", "client_secret")

APP_PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App</title>
<style>body{font-family:sans-serif;background:#e8f5e9;padding:2rem}h1{color:#1b5e20}</style></head>
<body><h1>back at the app</h1><p>The app received the redirect.</p></body></html>"""


class Failure(Exception):
    """A failed assertion: the message is printed (scrubbed) as the JSON's `error`."""


def check(condition, message: str):
    if not condition:
        raise Failure(message)


class Secrets:
    """Everything that must never reach stdout or stderr; `scrub` masks it in any text."""

    def __init__(self):
        self.values = set()

    def add(self, *values):
        for value in values:
            if isinstance(value, str) and len(value) >= 4:
                self.values.add(value)

    def scrub(self, text: str) -> str:
        for value in sorted(self.values, key=len, reverse=True):
            text = text.replace(value, "[redacted]")
        return text


SECRETS = Secrets()


def redact_url(url):
    """The URL with the values of code, tokens and the like replaced (and any known secret masked)."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        pairs = parse_qs(parts.query, keep_blank_values=True)
        if any(name in pairs for name in SENSITIVE_PARAMS):
            query = urlencode([(k, "[redacted]" if k in SENSITIVE_PARAMS else v) for k, vs in pairs.items() for v in vs])
            url = urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
    except ValueError:
        pass
    return SECRETS.scrub(url)


def progress(message: str):
    print(SECRETS.scrub(message), file=sys.stderr, flush=True)


# MARK: The app


class AppServer:
    """The app's redirect targets: answers every request with a plain page and records it."""

    def __init__(self, port: int):
        self.hits = []  # (path with query, form body or None)
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, fmt, *args):
                pass

            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace") if self.command == "POST" else None
                with owner.lock:
                    owner.hits.append((self.path, body))
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(APP_PAGE)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(APP_PAGE)

            do_GET = do_POST = answer

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def reset(self):
        with self.lock:
            self.hits.clear()

    def callback(self):
        """The first recorded request to one of the redirect targets (favicon and the like ignored)."""
        with self.lock:
            for path, body in self.hits:
                if urlsplit(path).path in CALLBACK_PATHS:
                    return path, body
        return None

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Hit:
    """What the app was sent: its path, the raw query and its parameters (each must come once)."""

    def __init__(self, origin: str, raw: str, body):
        parts = urlsplit(raw)
        self.url = origin + raw
        self.path = parts.path
        self.params = parse_qs(parts.query, keep_blank_values=True)
        if body:
            for name, values in parse_qs(body, keep_blank_values=True).items():
                self.params.setdefault(name, []).extend(values)
        SECRETS.add(*self.params.get("code", []))

    def one(self, name):
        values = self.params.get(name)
        if values is None:
            return None
        check(len(values) == 1, f"the app got `{name}` {len(values)} times")
        return values[0]

    def names(self):
        return sorted(self.params)


# MARK: The browser


def find(driver, by, value):
    try:
        return driver.find_element(by, value)
    except NoSuchElementException:
        return None


class Browser:
    def __init__(self, app: AppServer, app_origin: str, shots: str):
        self.app, self.app_origin, self.shots = app, app_origin, shots
        self.taken = []
        options = Options()
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=414,896"):
            options.add_argument(flag)
        options.binary_location = "/usr/bin/chromium"
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_page_load_timeout(TIMEOUT)

    def screenshot(self, name: str, page: bool = False):
        png = self.driver.get_screenshot_as_png()
        with open(os.path.join(self.shots, name), "wb") as f:
            f.write(png)
        self.taken.append(name)
        if page:
            check(png_variety(png) > 20, f"{name} looks blank")

    def where(self):
        """(url, title, loaded) of the current page; None while Chromium is between pages."""
        try:
            d = self.driver
            return d.current_url, d.title, d.execute_script("return document.readyState") == "complete"
        except WebDriverException:
            return None

    def open(self, url: str):
        try:
            self.driver.get(url)
        except WebDriverException as error:  # a page that never finishes loading: judge where it stands
            progress(f"  loading {redact_url(url)}: {error.msg}")

    def wait(self, leaving=None):
        """Waits until the app was sent a redirect (("app", Hit)), a hosted page has loaded ((name,
        its form)), or the browser has settled on some other page (("ended", None)). `leaving` is the
        element just clicked: until it is gone the old page is still showing."""
        deadline = time.monotonic() + TIMEOUT
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            hit = self.app.callback()
            if hit:
                return "app", Hit(self.app_origin, *hit)
            if leaving is not None:
                try:
                    leaving.is_enabled()  # raises once the page it belonged to is gone
                    time.sleep(0.1)
                    continue
                except WebDriverException:
                    leaving = None
            now = self.where()
            if now is not None and now[2] and not now[0].startswith(self.app_origin):
                for name, selector in PAGES.items():
                    try:
                        form = find(self.driver, By.CSS_SELECTOR, selector)
                    except WebDriverException:
                        form = None
                    if form is not None:
                        return name, form
            if now != last:
                last, since = now, time.monotonic()
            elif now is not None and now[2] and time.monotonic() - since >= SETTLED:
                return "ended", None
            time.sleep(0.1)
        hit = self.app.callback()
        return ("app", Hit(self.app_origin, *hit)) if hit else ("ended", None)

    def app_screenshot(self, name: str):
        """Lets the app's page render, then takes its screenshot."""
        for _ in range(50):
            now = self.where()
            if now and now[2] and now[0].startswith(self.app_origin):
                break
            time.sleep(0.1)
        self.screenshot(name)

    def page_error(self) -> str:
        for element_id in ("error", "error-detail"):  # a hosted page's error, the error page's detail
            element = find(self.driver, By.ID, element_id)
            if element is not None and element.text.strip():
                return f" (the page says: {element.text.strip()!r})"
        return ""

    def describe(self, kind) -> str:
        if kind == "ended":
            now = self.where() or ("?", "?", False)
            return f"the browser ended on {now[1]!r} at {redact_url(now[0])}{self.page_error()}"
        if kind == "app":
            return "the app was reached"
        return f"the {kind} page showed{self.page_error()}"

    def expect(self, outcome, wanted: str):
        """The outcome of wait() must be `wanted` (a page name or "app")."""
        kind, value = outcome
        check(kind == wanted, f"expected {'the app' if wanted == 'app' else f'the {wanted} page'}, but {self.describe(kind)}")
        return value

    def button(self, element_id: str):
        element = find(self.driver, By.ID, element_id)
        check(element is not None, f"no #{element_id} on {self.driver.title!r}")
        return element

    def fill(self, element_id: str, text: str):
        element = self.button(element_id)
        element.clear()
        element.send_keys(text)

    def sign_in(self, email: str, password: str):
        """Fills in and submits form#signin; returns what follows."""
        self.fill("email", email)
        self.fill("password", password)
        submit = self.button("submit-signin")
        submit.click()
        return self.wait(leaving=submit)


# MARK: The relying party


class Flow:
    def __init__(self, args, browser: Browser):
        self.args, self.browser = args, browser
        self.issuer = args.issuer.rstrip("/")
        self.app_origin = f"http://127.0.0.1:{args.app_port}"
        self.meta = {}
        self.jwks = None
        self.results = {}

    # Discovery and ID tokens

    def discover(self):
        response = requests.get(self.issuer + "/.well-known/openid-configuration", timeout=TIMEOUT)
        check(response.status_code == 200, f"discovery answered {response.status_code}")
        meta = OpenIDProviderMetadata(response.json())
        # Authlib's validators for OpenID Provider metadata, every one (Authlib's client never calls
        # validate() itself); OpenID Connect Discovery's includes RS256 among the ID token algorithms.
        try:
            for key in OpenIDProviderMetadata.REGISTRY_KEYS:
                getattr(meta, "validate_" + key)()
            rp_initiated = rpinitiated.OpenIDProviderMetadata(meta)
            for key in rpinitiated.OpenIDProviderMetadata.REGISTRY_KEYS:
                getattr(rp_initiated, "validate_" + key)()
        except ValueError as error:
            raise Failure(f"Authlib rejects the discovery document: {error}") from error
        check(meta.get("issuer") == self.issuer, f"discovery issuer {meta.get('issuer')!r} is not {self.issuer!r}")
        for key in ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "end_session_endpoint", "jwks_uri"):
            check(isinstance(meta.get(key), str) and meta[key], f"discovery has no {key}")
        check(meta.get("authorization_response_iss_parameter_supported") is True,
              "discovery does not announce authorization_response_iss_parameter_supported")
        check("S256" in (meta.get("code_challenge_methods_supported") or []), "discovery does not list S256")
        check("RS256" in (meta.get("id_token_signing_alg_values_supported") or []), "discovery does not list RS256 for ID tokens")
        check("code" in (meta.get("response_types_supported") or []), "discovery does not list response type code")
        self.meta = meta
        self.fetch_jwks()

    def fetch_jwks(self):
        response = requests.get(self.meta["jwks_uri"], timeout=TIMEOUT)
        check(response.status_code == 200, f"jwks_uri answered {response.status_code}")
        self.jwks = response.json()

    def id_token(self, token, client_id: str, nonce: str, **params):
        """Validates the ID token of a token response as Authlib's own OpenID client does
        (OpenIDMixin.parse_id_token): signature against the JWKS, then CodeIDToken with iss, aud,
        nonce, exp, iat, auth_time and at_hash (which must be there and match the access token)."""
        check("id_token" in token, "the token response has no id_token")
        check("access_token" in token, "the token response has no access_token")
        # RS256 only: the default of every client, and what an RP that knows nothing else accepts.
        registry = JWSRegistry(algorithms=["RS256"], strict_check_header=False)
        try:
            decoded = jwt.decode(token["id_token"], KeySet.import_key_set(self.jwks), registry=registry)
        except Exception:  # perhaps a key published since: fetch the set again, once (as Authlib does)
            self.fetch_jwks()
            decoded = jwt.decode(token["id_token"], KeySet.import_key_set(self.jwks), registry=registry)
        check(decoded.header.get("alg") == "RS256", f"the ID token is signed with {decoded.header.get('alg')!r}")
        options = {
            "iss": {"essential": True, "value": self.issuer},
            "sub": {"essential": True},
            "aud": {"essential": True, "value": client_id},
            "exp": {"essential": True},
            "iat": {"essential": True},
            "auth_time": {"essential": True},
            "nonce": {"essential": True, "value": nonce},
            "at_hash": {"essential": True},
        }
        claims = CodeIDToken(
            decoded.claims, decoded.header, options,
            dict(nonce=nonce, client_id=client_id, access_token=token["access_token"], **params))
        try:
            claims.validate(leeway=LEEWAY)
        except Exception as error:
            raise Failure(f"Authlib rejects the ID token: {type(error).__name__}: {error}") from error
        check(isinstance(claims["auth_time"], int), "auth_time is not an integer")
        return claims

    # Authorization requests

    def client(self, client_id: str, redirect_path: str, scope: str, secret=None) -> OAuth2Session:
        session = OAuth2Session(
            client_id, secret, redirect_uri=self.app_origin + redirect_path, scope=scope, code_challenge_method="S256",
            default_timeout=TIMEOUT)
        check(session.token_endpoint_auth_method == ("client_secret_basic" if secret else "none"),
              f"Authlib chose {session.token_endpoint_auth_method}")
        return session

    def authorize(self, session: OAuth2Session, **extra):
        """Builds an authorization request with Authlib (PKCE S256, nonce, an awkward state) and opens
        it in Chromium. Returns the request's values and what the browser did."""
        request = {
            "verifier": generate_token(48),
            "nonce": generate_token(20),
            # Characters that need escaping in a query, a space among them: they must come back as sent.
            "state": f"s+t/a=t e&%~{generate_token(10)}",
        }
        SECRETS.add(request["verifier"])
        url, state = session.create_authorization_url(
            self.meta["authorization_endpoint"], state=request["state"], code_verifier=request["verifier"],
            nonce=request["nonce"], **extra)
        check(state == request["state"], "Authlib changed the state")
        self.browser.app.reset()
        self.browser.open(url)
        return request, self.browser.wait()

    def check_redirect(self, hit: Hit, request, path: str):
        check(hit.path == path, f"the app was sent to {hit.path}, not {path}")
        error = hit.one("error")
        check(error is None, f"the app got error={error!r} ({hit.one('error_description')!r})")
        check(hit.one("code"), "the app got no code")
        check(hit.one("state") == request["state"], "the state did not come back exactly as sent")
        check(hit.one("iss") == self.issuer, f"the authorization response's iss is {hit.one('iss')!r}, not the issuer")

    def exchange(self, session: OAuth2Session, hit: Hit, request, client_id: str, **params):
        try:
            token = session.fetch_token(
                self.meta["token_endpoint"], authorization_response=hit.url, code_verifier=request["verifier"],
                state=request["state"])
        except OAuthError as error:
            raise Failure(f"the code exchange failed: {error.error}: {error.description}") from error
        SECRETS.add(token.get("access_token"), token.get("refresh_token"), token.get("id_token"))
        check(str(token.get("token_type", "")).lower() == "bearer", f"token_type {token.get('token_type')!r}")
        claims = self.id_token(token, client_id, request["nonce"], **params)
        return token, claims

    def userinfo(self, session: OAuth2Session, claims):
        response = session.get(self.meta["userinfo_endpoint"])
        check(response.status_code == 200, f"userinfo answered {response.status_code}")
        info = response.json()
        check(info.get("sub") == claims["sub"], "userinfo's sub is not the ID token's")
        return info

    # The phases

    def phase_discovery(self):
        self.discover()

    def phase_public_signin(self):
        a, b = self.args, self.browser
        session = self.client(a.public_client, "/cb", "openid profile email offline_access")
        request, outcome = self.authorize(session)
        b.expect(outcome, "signin")
        b.screenshot("01-signin.png", page=True)
        outcome = b.sign_in(a.email, a.password)
        hit = b.expect(outcome, "app")
        b.app_screenshot("app-1-public.png")
        self.check_redirect(hit, request, "/cb")
        token, claims = self.exchange(session, hit, request, a.public_client)
        info = self.userinfo(session, claims)
        check(info.get("email") == a.email, "userinfo's email is not the user's")
        check(token.get("refresh_token"), "no refresh token although the scope had offline_access")
        # A refresh before the logout works (and rotates): the successor is what must die with the session.
        first = token["refresh_token"]
        try:
            refreshed = OAuth2Session(a.public_client, default_timeout=TIMEOUT).refresh_token(
                self.meta["token_endpoint"], refresh_token=first)
        except OAuthError as error:
            raise Failure(f"refreshing before the logout failed: {error.error}: {error.description}") from error
        SECRETS.add(refreshed.get("access_token"), refreshed.get("refresh_token"), refreshed.get("id_token"))
        successor = refreshed.get("refresh_token")
        check(successor and successor != first, "the refresh answered no new refresh token")
        self.results.update(auth_time_1=claims["auth_time"], sub=claims["sub"], refresh_token=successor)
        self.results["public_id_token"] = token["id_token"]

    def phase_sso_confidential(self):
        a, b = self.args, self.browser
        session = self.client(a.confidential_client, "/cb2", "openid profile email", secret=a.confidential_secret)
        request, outcome = self.authorize(session)
        check(outcome[0] != "signin", "the sign-in page showed although the browser has a session")
        b.expect(outcome, "fields")
        b.screenshot("02-fields.png", page=True)
        b.fill("field-name", "Ada Lovelace")
        submit = b.button("submit-fields")
        submit.click()
        outcome = b.wait(leaving=submit)
        b.expect(outcome, "consent")
        b.screenshot("03-consent.png", page=True)
        check(find(b.driver, By.ID, "submit-deny") is not None, "the consent page has no #submit-deny")
        allow = b.button("submit-allow")
        allow.click()
        hit = b.expect(b.wait(leaving=allow), "app")
        b.app_screenshot("app-2-confidential.png")
        self.check_redirect(hit, request, "/cb2")
        token, claims = self.exchange(session, hit, request, a.confidential_client)
        check(claims["sub"] == self.results["sub"], "the confidential client got another sub")
        check(claims["auth_time"] == self.results["auth_time_1"],
              f"auth_time {claims['auth_time']} is not the session's {self.results['auth_time_1']}")
        info = self.userinfo(session, claims)
        check(info.get("name") == "Ada Lovelace", f"userinfo's name is {info.get('name')!r}")

    def phase_prompt_none(self):
        a, b = self.args, self.browser
        session = self.client(a.public_client, "/cb", "openid profile email")
        request, outcome = self.authorize(session, prompt="none")
        hit = b.expect(outcome, "app")
        b.app_screenshot("app-3-prompt-none.png")
        self.check_redirect(hit, request, "/cb")
        _, claims = self.exchange(session, hit, request, a.public_client)
        check(claims["auth_time"] == self.results["auth_time_1"], "prompt=none changed auth_time")

    def phase_terms_bump(self):
        a, b = self.args, self.browser
        admin = OAuth2Session(a.admin_client, a.admin_secret, default_timeout=TIMEOUT)
        try:
            admin_token = admin.fetch_token(self.meta["token_endpoint"], grant_type="client_credentials", scope="admin:clients")
        except OAuthError as error:
            raise Failure(f"the admin token request failed: {error.error}: {error.description}") from error
        SECRETS.add(admin_token.get("access_token"))
        settings = {"terms_client_version": a.terms_version, "terms_client_url": "https://example.com/terms"}
        response = requests.patch(
            f"{self.issuer}/admin/v1/clients/{quote(a.public_client, safe='')}",
            json={"settings": settings},
            headers={"Authorization": f"Bearer {admin_token['access_token']}", "Accept": "application/json"},
            timeout=TIMEOUT)
        check(response.status_code == 200, f"PATCH /admin/v1/clients/… answered {response.status_code}: {response.text[:300]}")
        changed = response.json().get("settings") or {}
        check(str(changed.get("terms_client_version")) == a.terms_version,
              f"the client's terms_client_version is {changed.get('terms_client_version')!r} after the PATCH")

        session = self.client(a.public_client, "/cb", "openid profile email")
        request, outcome = self.authorize(session)
        check(outcome[0] != "signin", "the sign-in page showed although the browser has a session")
        b.expect(outcome, "terms")
        b.screenshot("04-terms.png", page=True)
        accept = b.button("accept")
        if not accept.is_selected():
            accept.click()
        check(accept.is_selected(), "#accept could not be ticked")
        submit = b.button("submit-terms")
        submit.click()
        hit = b.expect(b.wait(leaving=submit), "app")
        b.app_screenshot("app-4-terms.png")
        self.check_redirect(hit, request, "/cb")
        _, claims = self.exchange(session, hit, request, a.public_client)
        check(claims["auth_time"] == self.results["auth_time_1"], "accepting the terms changed auth_time")

    def phase_max_age_reauth(self):
        a, b = self.args, self.browser
        time.sleep(1.1)  # auth_time has whole seconds: a new sign-in now is strictly later
        session = self.client(a.public_client, "/cb", "openid profile email")
        request, outcome = self.authorize(session, max_age="0")
        check(outcome[0] != "app", "max_age=0 gave a code without asking to sign in again")
        b.expect(outcome, "signin")
        b.screenshot("05-signin-max-age.png", page=True)
        hit = b.expect(b.sign_in(a.email, a.password), "app")
        b.app_screenshot("app-5-max-age.png")
        self.check_redirect(hit, request, "/cb")
        token, claims = self.exchange(session, hit, request, a.public_client, max_age=0)
        check(claims["sub"] == self.results["sub"], "signing in again gave another sub")
        first = self.results["auth_time_1"]
        check(claims["auth_time"] >= first, f"auth_time went back: {claims['auth_time']} < {first}")
        check(claims["auth_time"] > first, f"auth_time {claims['auth_time']} did not move on from {first} after signing in again")
        self.results["auth_time_5"] = claims["auth_time"]
        self.results["public_id_token"] = token["id_token"]

    def phase_rp_logout(self):
        a, b = self.args, self.browser
        url = add_params_to_uri(self.meta["end_session_endpoint"], [
            ("id_token_hint", self.results["public_id_token"]),
            ("post_logout_redirect_uri", self.app_origin + "/logged-out"),
            ("state", "bye"),
            ("client_id", a.public_client),
        ])
        b.app.reset()
        b.open(url)
        outcome = b.wait()
        if outcome[0] == "logout":
            b.screenshot("06-logout.png", page=True)
            self.results["logout_confirmation"] = True
            submit = b.button("submit-logout")
            submit.click()
            outcome = b.wait(leaving=submit)
        else:
            self.results["logout_confirmation"] = False
        hit = b.expect(outcome, "app")
        b.app_screenshot("app-6-logged-out.png")
        check(hit.path == "/logged-out", f"the logout went to {hit.path}, not /logged-out")
        check(hit.one("state") == "bye", f"the logout's state is {hit.one('state')!r}, not 'bye'")
        if getattr(a, "frontchannel", False):
            self.check_frontchannel()
        try:
            OAuth2Session(a.public_client, default_timeout=TIMEOUT).refresh_token(
                self.meta["token_endpoint"], refresh_token=self.results["refresh_token"])
        except OAuthError as error:
            check(error.error == "invalid_grant", f"the refresh after the logout failed with {error.error}, not invalid_grant")
        else:
            raise Failure("the public client's refresh token still works after the logout")

    def check_frontchannel(self):
        """Front-channel logout: before the app got /logged-out, Chromium loaded the logout page's
        hidden frames, one per client the browser session signed in that registered
        /fc?client=ID, each with the issuer and the sid of that client's session."""
        with self.browser.app.lock:
            frames = [Hit(self.app_origin, path, body) for path, body in self.browser.app.hits if urlsplit(path).path == "/fc"]
        check(frames, "the logout page loaded no front-channel frame")
        for frame in frames:
            check(frame.one("iss") == self.issuer, f"a front-channel frame's iss is {frame.one('iss')!r}")
            check(frame.one("sid"), "a front-channel frame has no sid")
        payload = self.results["public_id_token"].split(".")[1]
        public_sid = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["sid"]
        # One frame per app session: the public client has one for each code it exchanged.
        pairs = {(frame.one("client"), frame.one("sid")) for frame in frames}
        check(len(pairs) == len(frames), "a session was framed twice")
        check((self.args.public_client, public_sid) in pairs,
              f"no frame for the public client's session {public_sid}: {sorted(pairs)}")
        self.results["frontchannel_frames"] = sorted({client for client, _ in pairs})

    def phase_prompt_none_no_session(self):
        a, b = self.args, self.browser
        session = self.client(a.public_client, "/cb", "openid profile email")
        request, outcome = self.authorize(session, prompt="none")
        hit = b.expect(outcome, "app")
        b.app_screenshot("app-7-login-required.png")
        check(hit.path == "/cb", f"the app was sent to {hit.path}, not /cb")
        check(hit.one("error") == "login_required", f"the app got error={hit.one('error')!r}, not login_required")
        check(hit.one("code") is None, "the app got a code without a session")
        check(hit.one("state") == request["state"], "the state did not come back exactly as sent")
        check(hit.one("iss") == self.issuer, f"the error response's iss is {hit.one('iss')!r}, not the issuer")

    def phase_signin_after_logout(self):
        a, b = self.args, self.browser
        session = self.client(a.public_client, "/cb", "openid profile email")
        _, outcome = self.authorize(session)
        check(outcome[0] != "app", "the app got an answer without signing in: the logout left the session")
        b.expect(outcome, "signin")
        b.screenshot("08-signin-after-logout.png", page=True)

    PHASES = (
        "discovery", "public-signin", "sso-confidential", "prompt-none", "terms-bump", "max-age-reauth", "rp-logout",
        "prompt-none-no-session", "signin-after-logout",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--app-port", required=True, type=int)
    parser.add_argument("--shots", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--public-client", required=True)
    parser.add_argument("--confidential-client", required=True)
    parser.add_argument("--confidential-secret", required=True)
    parser.add_argument("--admin-client", required=True)
    parser.add_argument("--admin-secret", required=True)
    parser.add_argument("--terms-version", required=True)
    parser.add_argument("--frontchannel", action="store_true",
                        help="the clients registered APP/fc?client=ID as frontchannel_logout_uri: check its frames")
    args = parser.parse_args()
    SECRETS.add(args.password, args.confidential_secret, args.admin_secret)
    os.makedirs(args.shots, exist_ok=True)

    return run_phases(Flow, args, lambda flow, browser: {
        "auth_time_1": flow.results["auth_time_1"], "auth_time_5": flow.results["auth_time_5"],
        "logout_confirmation": flow.results["logout_confirmation"], "screenshots": browser.taken,
        "frontchannel_frames": flow.results.get("frontchannel_frames", []),
    })


def run_phases(flow_class, args, summary) -> int:
    """Runs `flow_class.PHASES` in one Chromium session against the app server on `args.app_port`;
    prints the JSON line (with `summary(flow, browser)` on success) and returns the exit status."""
    app = AppServer(args.app_port)
    browser = None
    passed, phase = [], "start"
    try:
        browser = Browser(app, f"http://127.0.0.1:{args.app_port}", args.shots)
        flow = flow_class(args, browser)
        for phase in flow_class.PHASES:
            progress(f"phase {phase} …")
            getattr(flow, "phase_" + phase.replace("-", "_"))()
            passed.append(phase)
            progress(f"phase {phase} passed")
        print(json.dumps({"ok": True, "phases": passed, **summary(flow, browser)}), flush=True)
        return 0
    except Exception as error:  # the first failed assertion (or anything that broke the run)
        message = str(error) if isinstance(error, Failure) else f"{type(error).__name__}: {error}"
        url = title = None
        if browser is not None:
            now = browser.where()
            if now is not None:
                url, title = now[0], now[1]
            try:
                browser.screenshot("fail.png")
            except Exception:
                pass
        progress(f"phase {phase} FAILED: {message}")
        print(json.dumps({
            "ok": False, "phase": phase, "passed": passed, "error": SECRETS.scrub(message),
            "url": redact_url(url), "title": SECRETS.scrub(title) if title else title,
        }), flush=True)
        return 1
    finally:
        if browser is not None:
            browser.driver.quit()
        app.stop()


if __name__ == "__main__":
    sys.exit(main())
