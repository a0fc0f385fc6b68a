#!/usr/bin/env python3
"""The OpenID Foundation's OP certification plans, ported: Basic OP, Form Post OP and Config OP
(conformance-suite plans oidcc-basic-certification-test-plan, oidcc-formpost-basic-certification-test-plan
and oidcc-config-certification-test-plan, static client, client_secret_basic).

Each module below is named after the suite's module id and asserts that module's FAILURE conditions
(read from the suite's Java sources: the facts carry over, the code does not); its WARNING conditions
are reported, not failed. The suite drives the provider with an HTTP client and a browser; so does this
script: `requests` for the back channel and a cookie-keeping session that reads and submits the hosted
pages' forms for the front channel. ID tokens are verified as a relying party that knows RS256 and
nothing else would (PyJWT with algorithms=["RS256"] and the provider's JWKS); `--rp-algorithms
RS256,ES256` relaxes that to what the suite itself accepts.

Modules the suite leaves to a reviewer's screenshot (a second login page, an error page) are decided
here by what the screenshot would show: the sign-in form was (or was not) served, the error page was
shown and nothing was redirected.

    conformance.py --gatehouse .build/debug/gatehouse [--plans basic,formpost,config] [--modules a,b]
                   [--allow-http] [--reuse-wait 30]

Sets up its own server: a fresh SQLite database, three confidential clients and one user made with the
CLI, then `gatehouse serve` on a free port. Prints one JSON object per module and plan:
{"plan", "module", "result": PASSED|WARNING|FAILED|SKIPPED, "failures", "warnings"}; exits 1 if any failed.
"""

import argparse
import base64
import hashlib
import html.parser
import json
import os
import secrets
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import jwt
import requests

TIMEOUT = 10
PASSWORD = "a conformance passphrase"
PROFILE = {
    "name": "Buffy Anne Summers", "given_name": "Buffy", "family_name": "Summers", "middle_name": "Anne",
    "nickname": "Buffy", "preferred_username": "buffy", "profile": "https://example.com/buffy",
    "picture": "https://example.com/buffy.png", "website": "https://example.com", "gender": "female",
    "birthdate": "1981-01-19", "zoneinfo": "America/Los_Angeles", "locale": "en-US",
    "address": {"formatted": "1630 Revello Drive\nSunnydale, CA 95037\nUSA", "street_address": "1630 Revello Drive",
                "locality": "Sunnydale", "region": "CA", "postal_code": "95037", "country": "USA"},
}
SCOPE_CLAIMS = {
    "profile": ["name", "given_name", "family_name", "middle_name", "nickname", "profile", "picture", "website", "gender",
                "birthdate", "zoneinfo", "locale", "updated_at", "preferred_username"],
    "email": ["email", "email_verified"],
    "address": ["address"],
    "phone": ["phone_number", "phone_number_verified"],
}
ID_TOKEN_CLAIMS = {"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "at_hash", "c_hash", "nbf",
                   "jti", "sid", "s_hash", "openbanking_intent_id", "txn"}
# Metadata the registries define as booleans (OpenID Connect Discovery, RFC 8414, RFC 9207, RFC 9126,
# Back- and Front-Channel Logout); every other `*_supported` is an array of strings.
BOOLEAN_METADATA = {"request_parameter_supported", "request_uri_parameter_supported", "require_request_uri_registration",
                    "claims_parameter_supported", "authorization_response_iss_parameter_supported",
                    "require_pushed_authorization_requests", "backchannel_logout_supported", "backchannel_logout_session_supported",
                    "frontchannel_logout_supported", "frontchannel_logout_session_supported", "tls_client_certificate_bound_access_tokens"}
ERROR_DESCRIPTION_CHARS = set(chr(c) for c in [0x09, 0x0A, 0x0D, 0x20, 0x21] + list(range(0x23, 0x5C)) + list(range(0x5D, 0x7F)))


class Failure(Exception):
    """A FAILURE condition of the module: it stops the module."""


class Skipped(Exception):
    """A SKIPPED outcome the suite allows (a feature honestly declared unsupported)."""


def check(condition, message):
    if not condition:
        raise Failure(message)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def random_text(length=10, alphabet=string.ascii_letters + string.digits):
    return "".join(secrets.choice(alphabet) for _ in range(length))


def entropy_bits(value: str) -> float:
    """Shannon entropy per character times the length, as EnsureMinimumAuthorizationCodeEntropy has it."""
    import math
    counts = {c: value.count(c) for c in set(value)}
    per_char = -sum((n / len(value)) * math.log2(n / len(value)) for n in counts.values())
    return per_char * len(value)


# The front channel: a browser that keeps cookies and fills in the hosted pages.

class Forms(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"id": attrs.get("id"), "method": (attrs.get("method") or "get").lower(),
                               "action": attrs.get("action"), "enctype": attrs.get("enctype"), "inputs": []})
        elif tag in ("input", "button") and self.forms and attrs.get("name"):
            self.forms[-1]["inputs"].append((attrs["name"], attrs.get("value") or "", attrs.get("type")))


def forms_of(page: str):
    parser = Forms()
    parser.feed(page)
    return parser.forms


class Callback:
    """What reached the client's redirect URI: how, and with which parameters."""

    def __init__(self, mode, url, params, query):
        self.mode = mode  # "query" or "form_post"
        self.url = url
        self.params = params
        self.query = query  # the URL's own query (must stay clean under form_post)


class ErrorPage:
    def __init__(self, status, text):
        self.status = status
        self.text = text


class Browser:
    def __init__(self, ctx):
        self.ctx = ctx
        self.session = requests.Session()
        self.login_pages = 0

    def authorize(self, params, method="GET", login=True):
        """Sends an authorization request and walks the pages until the answer leaves the server:
        a Callback, or an ErrorPage. Signs in when the sign-in page comes and `login` allows it."""
        endpoint = self.ctx.meta["authorization_endpoint"]
        if method == "POST":
            response = self.session.post(endpoint, data=params, allow_redirects=False, timeout=TIMEOUT)
        else:
            response = self.session.get(endpoint + "?" + urllib.parse.urlencode(params), allow_redirects=False, timeout=TIMEOUT)
        for _ in range(20):
            if response.status_code in (301, 302, 303, 307):
                location = urllib.parse.urljoin(response.url, response.headers["Location"])
                if not location.startswith(self.ctx.issuer + "/"):
                    parsed = urllib.parse.urlsplit(location)
                    query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
                    return Callback("query", location, query, query)
                response = self.session.get(location, allow_redirects=False, timeout=TIMEOUT)
                continue
            if response.status_code >= 400:
                return ErrorPage(response.status_code, response.text)
            forms = forms_of(response.text)
            signin = next((f for f in forms if f["id"] == "signin"), None)
            consent = next((f for f in forms if f["id"] == "consent"), None)
            if signin is not None:
                self.login_pages += 1
                check(login, "the sign-in page was shown where the provider had to answer without the user")
                fields = {name: value for name, value, _ in signin["inputs"] if name == "csrf"}
                fields.update({"email": self.ctx.email, "password": PASSWORD})
                response = self.session.post(urllib.parse.urljoin(response.url, signin["action"]), data=fields,
                                             allow_redirects=False, timeout=TIMEOUT)
                continue
            if consent is not None:
                fields = {name: value for name, value, _ in consent["inputs"] if name == "csrf"}
                fields["decision"] = "allow"
                response = self.session.post(urllib.parse.urljoin(response.url, consent["action"]), data=fields,
                                             allow_redirects=False, timeout=TIMEOUT)
                continue
            if len(forms) == 1 and forms[0]["action"] and not forms[0]["action"].startswith("/"):
                form = forms[0]
                # The form_post answer (OAuth 2.0 Form Post Response Mode): the browser posts it as
                # application/x-www-form-urlencoded, which is what a form without enctype sends.
                check(form["method"] == "post", f"the form_post page's form uses {form['method']}")
                check(form["enctype"] in (None, "application/x-www-form-urlencoded"), f"the form_post form's enctype is {form['enctype']}")
                params = {name: value for name, value, kind in form["inputs"] if kind == "hidden"}
                query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(form["action"]).query))
                return Callback("form_post", form["action"], params, query)
            raise Failure(f"an unexpected page (HTTP {response.status_code}) at {response.url}")
        raise Failure("too many redirects")


# The relying party: requests, checks and token calls as the suite makes them.

class Context:
    def __init__(self, args, issuer, clients, email, redirect_uri, mode):
        self.args = args
        self.issuer = issuer
        self.clients = clients
        self.email = email
        self.redirect_uri = redirect_uri
        self.mode = mode
        self.meta = requests.get(issuer + "/.well-known/openid-configuration", timeout=TIMEOUT).json()
        self.jwks = requests.get(self.meta["jwks_uri"], timeout=TIMEOUT).json()


class Module:
    def __init__(self, ctx: Context, module_id: str):
        self.ctx = ctx
        self.id = module_id
        self.warnings = []
        self.browser = Browser(ctx)  # the suite tells the tester to clear the provider's cookies first

    def warn(self, message):
        self.warnings.append(message)

    def client(self, name="client"):
        return self.ctx.clients[name]

    # configure(): the server's keys, before any browser interaction.
    def check_server_keys(self):
        keys = self.ctx.jwks.get("keys")
        check(isinstance(keys, list) and keys, "the JWKS has no keys array")
        kids = []
        for key in keys:
            check(isinstance(key, dict) and "kty" in key, "a JWKS key has no kty")
            check(key["kty"] != "oct", "the JWKS publishes a symmetric key")
            private = [m for m in ("d", "p", "q", "dp", "dq", "qi", "oth", "k") if m in key]
            check(not private, f"a JWKS key has private members {private}")
            members = {"RSA": ("n", "e"), "EC": ("x", "y"), "OKP": ("x", "crv")}.get(key["kty"], ())
            for member in members:
                value = key.get(member)
                check(isinstance(value, str) and value and "=" not in value and set(value) <= set(string.ascii_letters + string.digits + "-_"),
                      f"the {key['kty']} key's {member} is not unpadded base64url")
            check(isinstance(key.get("kid"), str) and key["kid"].strip(), "a JWKS key has no kid (OIDCC-10.1)")
            kids.append(key["kid"])
        check(len(kids) == len(set(kids)), "two JWKS keys share a kid")
        check(isinstance(self.ctx.meta.get("userinfo_endpoint"), str), "discovery has no userinfo_endpoint")

    def request(self, **extra):
        params = {"client_id": self.client()["client_id"], "nonce": random_text(), "redirect_uri": self.ctx.redirect_uri,
                  "response_type": "code", "scope": "openid", "state": random_text()}
        if self.ctx.mode == "form_post":
            params["response_mode"] = "form_post"
        params.update(extra)
        return {k: v for k, v in params.items() if v is not None}

    def callback_checks(self, callback, sent):
        check(isinstance(callback, Callback), "the provider showed a page instead of answering the client")
        if self.ctx.mode == "form_post" or sent.get("response_mode") == "form_post":
            check(callback.mode == "form_post", "the answer came by redirect, not by form_post")
            check("code" not in callback.query, "the code is in the URL query under form_post")
            check("error" not in callback.query, "an error is in the URL query under form_post")
        else:
            check(callback.mode == "query", "the answer came by form_post, not in the query")
        check(callback.url.split("?")[0] == sent.get("redirect_uri", self.ctx.redirect_uri).split("?")[0],
              f"the answer went to {callback.url.split('?')[0]}")
        if "iss" in callback.params:
            check(callback.params["iss"] == self.ctx.issuer, f"iss in the answer is {callback.params['iss']!r}")

    def happy_callback(self, callback, sent):
        self.callback_checks(callback, sent)
        check("error" not in callback.params, f"the authorization endpoint answered {callback.params.get('error')}: "
                                              f"{callback.params.get('error_description')}")
        check(callback.params.get("state") == sent.get("state"), "state did not come back exactly")
        code = callback.params.get("code")
        check(code, "no code in the answer")
        return code

    def error_callback(self, callback, sent):
        """performGenericAuthorizationEndpointErrorResponseValidation."""
        self.callback_checks(callback, sent)
        params = callback.params
        check(params.get("state") == sent.get("state"), "state did not come back exactly with the error")
        check("error" in params, "no error in the answer")
        check("code" not in params, "a code came with the error")
        extra = set(params) - {"error", "error_description", "error_uri", "state", "session_state", "iss"}
        if extra:
            self.warn(f"unexpected parameters in the error answer: {sorted(extra)}")
        description = params.get("error_description", "")
        check(set(description) <= ERROR_DESCRIPTION_CHARS, f"error_description has characters RFC 6749 forbids: {description!r}")
        if any(c in description for c in "\r\n\t"):
            self.warn("error_description contains CR, LF or TAB")
        return params["error"]

    def token(self, code, client="client", auth="basic", verifier=None, redirect_uri=None):
        creds = self.client(client)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri or self.ctx.redirect_uri}
        if verifier:
            form["code_verifier"] = verifier
        return self.token_call(form, creds, auth)

    def token_call(self, form, creds, auth="basic"):
        if auth == "basic":
            basic = (urllib.parse.quote(creds["client_id"], safe=""), urllib.parse.quote(creds["client_secret"], safe=""))
            return requests.post(self.ctx.meta["token_endpoint"], data=form, auth=basic, timeout=TIMEOUT)
        form = dict(form, client_id=creds["client_id"], client_secret=creds["client_secret"])
        return requests.post(self.ctx.meta["token_endpoint"], data=form, timeout=TIMEOUT)

    def token_ok(self, response):
        check(response.status_code == 200, f"the token endpoint answered {response.status_code}: {response.text[:200]}")
        body = response.json()
        check("error" not in body, f"the token endpoint answered {body.get('error')}")
        check(body.get("access_token") and body.get("token_type"), "no access_token or token_type")
        if "expires_in" in body:
            check(isinstance(body["expires_in"], int) and 0 < body["expires_in"] <= 31536000, "expires_in is out of range")
        else:
            self.warn("no expires_in in the token response")
        check(isinstance(body.get("id_token"), str), "no id_token in the token response")
        return body

    def id_token(self, body, nonce, client="client"):
        """PerformStandardIdTokenChecks, with the signature checked as an RS256-only RP does."""
        token = body["id_token"]
        header = jwt.get_unverified_header(token)
        algorithms = self.ctx.args.rp_algorithms.split(",")
        alg = header.get("alg")
        check(alg in algorithms, f"the ID token is signed {alg}, which this relying party does not accept ({algorithms})")
        kid = header.get("kid")
        kty = {"RS256": "RSA", "ES256": "EC"}.get(alg)
        candidates = [k for k in self.ctx.jwks["keys"] if (kid is None or k.get("kid") == kid) and k.get("kty") == kty
                      and k.get("alg", alg) == alg and k.get("use", "sig") == "sig"]
        check(len(candidates) == 1, f"{len(candidates)} JWKS keys match the ID token's kid, kty, alg and use")
        key = jwt.PyJWK(candidates[0]).key
        try:
            claims = jwt.decode(token, key, algorithms=[alg], audience=self.client(client)["client_id"], issuer=self.ctx.issuer,
                                options={"require": ["iss", "sub", "aud", "exp", "iat"]}, leeway=300)
        except jwt.PyJWTError as error:
            raise Failure(f"PyJWT ({alg}) rejects the ID token: {error}")
        now = time.time()
        check(claims["exp"] < now + 50 * 365 * 86400, "exp is more than 50 years ahead")
        check(now - 300 <= claims["iat"] <= now + 300, "iat is more than 5 minutes away from now")
        if "auth_time" in claims:
            check(now - 366 * 86400 <= claims["auth_time"] <= now + 300, "auth_time is out of range")
        if "acr" in claims:
            check(isinstance(claims["acr"], str) and claims["acr"] != "", "acr is empty or not a string")
        if nonce is None:
            check("nonce" not in claims, "a nonce came back where none was sent")
        else:
            check(claims.get("nonce") == nonce, "the nonce did not come back")
        sub = claims.get("sub")
        check(isinstance(sub, str) and 0 < len(sub) <= 255 and all(0x20 <= ord(c) <= 0x7E for c in sub), "sub is not printable ASCII of at most 255")
        self.standard_claims(claims, "ID token")
        if "at_hash" in claims:
            digest = hashlib.sha256(body["access_token"].encode()).digest()
            check(claims["at_hash"] == b64url(digest[:16]), "at_hash does not match the access token")
        return claims

    def standard_claims(self, claims, where):
        for name in ("name", "given_name", "family_name", "middle_name", "nickname", "preferred_username", "profile", "picture",
                     "website", "email", "gender", "zoneinfo", "locale", "phone_number"):
            if name in claims:
                value = claims[name]
                check(isinstance(value, str) and value.strip() and value != "null", f"{where}: {name} is not a non-blank string")
        for name in ("email_verified", "phone_number_verified"):
            if name in claims:
                check(isinstance(claims[name], bool), f"{where}: {name} is not a boolean")
        if "updated_at" in claims:
            check(isinstance(claims["updated_at"], (int, float)) and 631152000 <= claims["updated_at"] <= time.time() + 300,
                  f"{where}: updated_at is not a time since 1990")
        if "address" in claims:
            address = claims["address"]
            check(isinstance(address, dict), f"{where}: address is not an object")
            for member, value in address.items():
                check(isinstance(value, str) and value.strip(), f"{where}: address.{member} is not a non-blank string")
        if "birthdate" in claims:
            value = claims["birthdate"]
            year = value[:4]
            check(isinstance(value, str) and len(value) in (4, 10) and year.isdigit() and (year == "0000" or 1850 <= int(year) <= time.gmtime().tm_year),
                  f"{where}: birthdate {value!r} is not YYYY-MM-DD")

    def userinfo(self, access_token, how="get", sub=None):
        endpoint = self.ctx.meta["userinfo_endpoint"]
        if how == "get":
            response = requests.get(endpoint, headers={"Authorization": f"Bearer {access_token}"}, timeout=TIMEOUT)
        elif how == "post-header":
            response = requests.post(endpoint, headers={"Authorization": f"Bearer {access_token}"}, timeout=TIMEOUT)
        else:
            response = requests.post(endpoint, data={"access_token": access_token}, timeout=TIMEOUT)
        check(response.status_code == 200, f"userinfo ({how}) answered {response.status_code}")
        check(response.headers.get("Content-Type", "").split(";")[0].strip() == "application/json", "userinfo is not application/json")
        try:
            claims = response.json()
        except ValueError:
            raise Failure("userinfo is not JSON")
        check(isinstance(claims, dict), "userinfo is not a JSON object")
        check("sub" in claims, "userinfo has no sub")
        self.standard_claims(claims, "userinfo")
        names, sources = claims.get("_claim_names"), claims.get("_claim_sources")
        check((names is None) == (sources is None), "_claim_names and _claim_sources must come together")
        if sub is not None:
            check(claims["sub"] == sub, "userinfo's sub differs from the ID token's")
        return claims

    def flow(self, login=True, method="GET", client="client", **extra):
        """A whole code flow: authorization, token (client_secret_basic), ID token, userinfo."""
        verifier = extra.pop("_verifier", None)
        sent = self.request(client_id=self.client(client)["client_id"], **extra)
        callback = self.browser.authorize(sent, method=method, login=login)
        code = self.happy_callback(callback, sent)
        body = self.token_ok(self.token(code, client=client, verifier=verifier))
        claims = self.id_token(body, sent.get("nonce"), client=client)
        info = self.userinfo(body["access_token"], sub=claims["sub"])
        return sent, code, body, claims, info


# The modules. Each raises Failure on a FAILURE condition, Skipped where the suite skips.

def oidcc_server(m: Module):
    sent, code, body, claims, _ = m.flow()
    check(len(code.encode()) >= 16, "the authorization code is shorter than 128 bits")
    check(entropy_bits(code) > 96, f"the authorization code has {entropy_bits(code):.0f} bits of entropy, not more than 96")
    if "name" in claims:
        m.warn("name is in the ID token of scope openid")
    extra = set(claims) - ID_TOKEN_CLAIMS
    if extra:
        m.warn(f"ID token claims that were not requested: {sorted(extra)}")


def oidcc_server_client_secret_post(m: Module):
    check("client_secret_post" in m.ctx.meta.get("token_endpoint_auth_methods_supported", []),
          "discovery does not list client_secret_post")
    sent = m.request(client_id=m.client("post")["client_id"])
    code = m.happy_callback(m.browser.authorize(sent), sent)
    body = m.token_ok(m.token(code, client="post", auth="post"))
    m.id_token(body, sent["nonce"], client="post")


def oidcc_response_type_missing(m: Module):
    sent = m.request()
    del sent["response_type"]
    answer = m.browser.authorize(sent)
    if isinstance(answer, ErrorPage):
        check(400 <= answer.status < 500, f"the error page answered {answer.status}")
        return
    error = m.error_callback(answer, sent)
    check(error in ("unsupported_response_type", "invalid_request"), f"the error is {error}")


def userinfo_module(how):
    def module(m: Module):
        sent = m.request()
        code = m.happy_callback(m.browser.authorize(sent), sent)
        body = m.token_ok(m.token(code))
        claims = m.id_token(body, sent["nonce"])
        if how == "post-body":
            response = requests.post(m.ctx.meta["userinfo_endpoint"], data={"access_token": body["access_token"]}, timeout=TIMEOUT)
            if not 200 <= response.status_code < 300:
                m.warn("userinfo does not take the access token in a form body")
                return
        m.userinfo(body["access_token"], how=how, sub=claims["sub"])
    return module


def oidcc_ensure_request_without_nonce_succeeds_for_code_flow(m: Module):
    sent = m.request(nonce=None)
    m.happy_callback(m.browser.authorize(sent), sent)


def scope_module(scopes, email_warnings=False, reverse=False):
    def module(m: Module):
        supported = m.ctx.meta.get("scopes_supported")
        if supported is None or any(s not in supported for s in scopes):
            raise Skipped(f"scopes_supported lacks one of {scopes}")
        scope = " ".join(scopes[::-1] + ["openid"]) if reverse else " ".join(["openid"] + scopes)
        sent = m.request(scope=scope)
        if reverse:
            sent = dict(sorted(sent.items(), reverse=True))
        code = m.happy_callback(m.browser.authorize(sent), sent)
        body = m.token_ok(m.token(code))
        claims = m.id_token(body, sent["nonce"])
        info = m.userinfo(body["access_token"], sub=claims["sub"])
        for scope_name in scopes:
            missing = [c for c in SCOPE_CLAIMS[scope_name] if c not in info]
            if missing:
                m.warn(f"userinfo lacks the {scope_name} claims {missing}")
        if email_warnings:
            for name in ("name", "email"):
                if name in claims:
                    m.warn(f"{name} is in the ID token (userinfo should carry it when an access token is issued)")
            if "name" in info:
                m.warn("name is in userinfo without the profile scope")
    return module


def plain_flow(**extra):
    def module(m: Module):
        m.flow(**extra)
    return module


def oidcc_prompt_login(m: Module):
    _, _, _, first, _ = m.flow()
    time.sleep(1)
    before = m.browser.login_pages
    _, _, _, second, _ = m.flow(prompt="login")
    check(m.browser.login_pages == before + 1, "prompt=login did not show the sign-in page again")
    if "auth_time" in first and "auth_time" in second:
        check(second["auth_time"] > first["auth_time"], "the second auth_time is not later than the first")


def oidcc_prompt_none_not_logged_in(m: Module):
    sent = m.request(prompt="none", state=random_text(128, string.ascii_letters + string.digits + "-._~"))
    answer = m.browser.authorize(sent, login=False)
    check(isinstance(answer, Callback), "prompt=none without a session did not answer the client")
    error = m.error_callback(answer, sent)
    check(error in ("login_required", "interaction_required", "account_selection_required", "consent_required"),
          f"the error is {error}, not one that needs the user")


def same_auth_twice(second_extra, first_extra=None, require_auth_time=False, hint=False):
    def module(m: Module):
        _, _, body, first, _ = m.flow(**(first_extra or {}))
        extra = dict(second_extra)
        if hint:
            extra["id_token_hint"] = body["id_token"]
        _, _, _, second, _ = m.flow(login=False, **extra)
        if require_auth_time:
            check("auth_time" in first, "the first ID token has no auth_time though max_age was sent")
            check("auth_time" in second, "the second ID token has no auth_time though max_age was sent")
        if "auth_time" in first and "auth_time" in second:
            check(first["auth_time"] == second["auth_time"], "auth_time changed though the user did not sign in again")
        check(first["sub"] == second["sub"], "sub changed")
    return module


def oidcc_max_age_1(m: Module):
    _, _, _, first, _ = m.flow()
    time.sleep(2)
    before = m.browser.login_pages
    _, _, _, second, _ = m.flow(max_age="1")
    check(m.browser.login_pages == before + 1, "max_age=1 did not show the sign-in page again")
    check("auth_time" in second, "no auth_time in the ID token though max_age was sent")
    if "auth_time" in first:
        check(second["auth_time"] > first["auth_time"], "the second auth_time is not later than the first")
    check(second["auth_time"] >= time.time() - 301, "auth_time is older than five minutes")


def oidcc_ensure_request_with_acr_values_succeeds(m: Module):
    values = m.ctx.meta.get("acr_values_supported") or ["1", "2"]
    _, _, _, claims, _ = m.flow(acr_values=" ".join(values))
    if not isinstance(claims.get("acr"), str) or claims["acr"] not in values:
        m.warn(f"acr {claims.get('acr')!r} is not one of the requested values")


def code_reuse(wait):
    def module(m: Module):
        sent = m.request()
        code = m.happy_callback(m.browser.authorize(sent), sent)
        body = m.token_ok(m.token(code))
        claims = m.id_token(body, sent["nonce"])
        m.userinfo(body["access_token"], sub=claims["sub"])
        if wait:
            time.sleep(wait)
        again = m.token(code)
        if again.status_code == 200 and not wait:
            m.warn("the provider allowed the code to be used twice")
            return
        check(again.status_code == 400, f"reusing the code answered {again.status_code}")
        check(again.headers.get("Content-Type", "").split(";")[0].strip() == "application/json", "the reuse error is not JSON")
        check(again.json().get("error") == "invalid_grant", f"reusing the code answered {again.json().get('error')}")
        if wait:
            info = requests.get(m.ctx.meta["userinfo_endpoint"], headers={"Authorization": f"Bearer {body['access_token']}"},
                                timeout=TIMEOUT)
            if not 400 <= info.status_code < 500:
                m.warn("the first access token still works after the code was reused")
    return module


def oidcc_ensure_registered_redirect_uri(m: Module):
    sent = m.request(redirect_uri=m.ctx.redirect_uri + "/" + random_text())
    answer = m.browser.authorize(sent)
    check(isinstance(answer, ErrorPage), f"the provider redirected to {getattr(answer, 'url', '?')}")
    check(400 <= answer.status < 500, f"the error page answered {answer.status}")


def oidcc_ensure_post_request_succeeds(m: Module):
    m.flow(method="POST")


def unsigned_request_object(m: Module, query_redirect=None):
    advertised = m.ctx.meta.get("request_object_signing_alg_values_supported")
    if advertised is not None and "none" not in advertised:
        raise Skipped("request_object_signing_alg_values_supported lacks none")
    if m.ctx.meta.get("request_parameter_supported") is not True:
        m.warn("discovery does not say request_parameter_supported")
    inner = m.request()
    request_object = b64url(json.dumps({"alg": "none"}).encode()) + "." + b64url(json.dumps(inner).encode()) + "."
    outer = {"request": request_object, "response_type": "code", "client_id": inner["client_id"], "scope": "openid",
             "redirect_uri": query_redirect or inner["redirect_uri"]}
    answer = m.browser.authorize(outer)
    if isinstance(answer, Callback) and answer.params.get("error") == "request_not_supported":
        check(query_redirect is None, "request_not_supported was sent to the redirect_uri of the request object")
        raise Skipped("request objects are not supported")
    if query_redirect is not None and isinstance(answer, ErrorPage):
        return  # the error page the suite accepts for an invalid redirect_uri
    code = m.happy_callback(answer, inner)
    body = m.token_ok(m.token(code))
    m.id_token(body, inner["nonce"])


def oidcc_claims_essential(m: Module):
    _, _, _, claims, info = m.flow(claims=json.dumps({"userinfo": {"name": {"essential": True}}}))
    if not info.get("name"):
        m.warn("userinfo has no name though it was an essential claim")
    if "name" in claims:
        m.warn("name is in the ID token though only userinfo asked for it")


def oidcc_refresh_token(m: Module):
    bodies = {}
    for client in ("client", "client2"):
        sent = m.request(client_id=m.client(client)["client_id"], scope="openid offline_access", prompt="consent")
        code = m.happy_callback(m.browser.authorize(sent), sent)
        body = m.token_ok(m.token(code, client=client))
        first = m.id_token(body, sent["nonce"], client=client)
        if "refresh_token" not in body:
            raise Skipped("no refresh token was issued")
        time.sleep(1)
        form = {"grant_type": "refresh_token", "refresh_token": body["refresh_token"]}
        if client == "client":
            form["scope"] = "openid offline_access"
        refreshed = m.token_call(form, m.client(client))
        check(refreshed.status_code == 200, f"the refresh answered {refreshed.status_code}: {refreshed.text[:200]}")
        check(refreshed.headers.get("Content-Type", "").split(";")[0].strip() == "application/json", "the refresh answer is not JSON")
        check("no-store" in refreshed.headers.get("Cache-Control", ""), "the refresh answer lacks Cache-Control: no-store")
        new = refreshed.json()
        check("error" not in new, f"the refresh answered {new.get('error')}")
        check(str(new.get("token_type", "")).lower() == "bearer", "token_type is not Bearer")
        check(entropy_bits(new["access_token"]) > 96, "the access token has too little entropy")
        for name in ("access_token", "refresh_token"):
            if name in new:
                check(all(0x20 <= ord(c) <= 0x7E for c in new[name]), f"{name} has characters outside 0x20-0x7E")
        if "refresh_token" in new:
            check(len(new["refresh_token"].encode()) >= 16 and entropy_bits(new["refresh_token"]) > 96, "the new refresh token is weak")
        if "expires_in" not in new:
            m.warn("no expires_in in the refresh answer")
        if "id_token" in new:
            second = jwt.decode(new["id_token"], options={"verify_signature": False})
            for name in ("iss", "sub", "aud"):
                check(second.get(name) == first.get(name), f"the refreshed ID token's {name} differs")
            check(second.get("iat") != first.get("iat"), "the refreshed ID token has the same iat")
            if "auth_time" in second:
                check(second["auth_time"] == first.get("auth_time"), "the refreshed ID token's auth_time differs")
            check(second.get("azp") == first.get("azp"), "the refreshed ID token's azp differs")
        m.userinfo(new["access_token"], sub=first["sub"])
        bodies[client] = new
    # Client 2's refresh token presented by client 1.
    crossed = m.token_call({"grant_type": "refresh_token", "refresh_token": bodies["client2"]["refresh_token"]}, m.client("client"))
    check("error" in crossed.json(), "client 1 refreshed client 2's token")
    check(crossed.status_code == 400, f"the crossed refresh answered {crossed.status_code}")
    check(crossed.json().get("error") == "invalid_grant", f"the crossed refresh answered {crossed.json().get('error')}")


def oidcc_ensure_request_with_valid_pkce_succeeds(m: Module):
    verifier = b64url(secrets.token_bytes(32))
    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
    m.flow(code_challenge=challenge, code_challenge_method="S256", _verifier=verifier)


def oidcc_discovery_endpoint_verification(m: Module):
    url = m.ctx.issuer + "/.well-known/openid-configuration"
    response = requests.get(url, timeout=TIMEOUT)
    check(response.status_code == 200, f"discovery answered {response.status_code}")
    check(response.headers.get("Content-Type", "").split(";")[0].strip() == "application/json", "discovery is not application/json")
    meta = response.json()
    https = not m.ctx.args.allow_http

    def is_url(value, need_https=https):
        parsed = urllib.parse.urlsplit(value) if isinstance(value, str) else None
        return parsed is not None and parsed.netloc and (parsed.scheme == "https" or (not need_https and parsed.scheme == "http"))

    kinds = {"code", "code id_token", "id_token", "token id_token", "code id_token token", "code token"}
    types = meta.get("response_types_supported")
    check(isinstance(types, list) and any(" ".join(sorted(t.split())) in {" ".join(sorted(k.split())) for k in kinds} for t in types),
          "response_types_supported lists no OpenID response type")
    check(meta.get("issuer", "").rstrip("/") == url[: -len("/.well-known/openid-configuration")].rstrip("/"),
          "issuer is not the discovery URL's base")
    parsed = urllib.parse.urlsplit(meta["issuer"])
    check(is_url(meta["issuer"]) and not parsed.query and not parsed.fragment and "@" not in parsed.netloc, "issuer is not a valid https URL")
    subjects = meta.get("subject_types_supported")
    check(isinstance(subjects, list) and ({"public", "pairwise"} & set(subjects)), "subject_types_supported lacks public and pairwise")
    algs = meta.get("id_token_signing_alg_values_supported")
    check(isinstance(algs, list) and "RS256" in algs, "id_token_signing_alg_values_supported lacks RS256")
    if "userinfo_signing_alg_values_supported" in meta:
        check(isinstance(meta["userinfo_signing_alg_values_supported"], list), "userinfo_signing_alg_values_supported is not an array")
    for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
        check(is_url(meta.get(key)), f"{key} is missing or not https")
    if "userinfo_endpoint" not in meta:
        m.warn("no userinfo_endpoint")
    for key, value in meta.items():
        if key.endswith("_endpoint"):
            check(is_url(value), f"{key} is not an https URL")
        if key in BOOLEAN_METADATA:
            check(isinstance(value, bool), f"{key} is not a boolean")
        elif key.endswith("_supported"):
            check(isinstance(value, list) and all(isinstance(v, str) for v in value), f"{key} is not an array of strings")
    if "grant_types_supported" in meta:
        check(meta["grant_types_supported"], "grant_types_supported is empty")
    scopes = meta.get("scopes_supported")
    if scopes is None:
        m.warn("no scopes_supported")
    else:
        check("openid" in scopes, "scopes_supported lacks openid")
        scope_token = set(chr(c) for c in [0x21] + list(range(0x23, 0x5C)) + list(range(0x5D, 0x7F)))
        check(all(s and set(s) <= scope_token for s in scopes), "a scope is not an RFC 6749 scope-token")
    for key in ("ui_locales_supported", "claims_locales_supported"):
        for tag in meta.get(key, []):
            parts = tag.split("-")
            check(parts[0].isalpha() and 2 <= len(parts[0]) <= 8, f"{key}: {tag!r} is not a BCP 47 tag")
    methods = meta.get("code_challenge_methods_supported")
    if methods:
        check(isinstance(methods, list) and ({"S256", "plain"} & set(methods)), "code_challenge_methods_supported lacks S256")
    if "claims_supported" not in meta:
        m.warn("no claims_supported")
    request_algs = meta.get("request_object_signing_alg_values_supported")
    if request_algs is not None and "RS256" not in request_algs:
        m.warn("request_object_signing_alg_values_supported lacks RS256")
    m.check_server_keys()


BASIC = [
    ("oidcc-server", oidcc_server),
    ("oidcc-response-type-missing", oidcc_response_type_missing),
    ("oidcc-userinfo-get", userinfo_module("get")),
    ("oidcc-userinfo-post-header", userinfo_module("post-header")),
    ("oidcc-userinfo-post-body", userinfo_module("post-body")),
    ("oidcc-ensure-request-without-nonce-succeeds-for-code-flow", oidcc_ensure_request_without_nonce_succeeds_for_code_flow),
    ("oidcc-scope-profile", scope_module(["profile"])),
    ("oidcc-scope-email", scope_module(["email"], email_warnings=True)),
    ("oidcc-scope-address", scope_module(["address"])),
    ("oidcc-scope-phone", scope_module(["phone"])),
    ("oidcc-scope-all", scope_module(["email", "phone", "address", "profile"])),
    ("oidcc-alternate-happy-flow", scope_module(["email"], email_warnings=True, reverse=True)),
    ("oidcc-display-page", plain_flow(display="page")),
    ("oidcc-display-popup", plain_flow(display="popup")),
    ("oidcc-prompt-login", oidcc_prompt_login),
    ("oidcc-prompt-none-not-logged-in", oidcc_prompt_none_not_logged_in),
    ("oidcc-prompt-none-logged-in", same_auth_twice({"prompt": "none"})),
    ("oidcc-max-age-1", oidcc_max_age_1),
    ("oidcc-max-age-10000", same_auth_twice({"max_age": "10000"}, {"max_age": "15000"}, require_auth_time=True)),
    ("oidcc-ensure-request-with-unknown-parameter-succeeds", plain_flow(extra="foobar")),
    ("oidcc-id-token-hint", same_auth_twice({"prompt": "none"}, hint=True)),
    ("oidcc-login-hint", plain_flow(login_hint="buffy@" + "example.com")),
    ("oidcc-ui-locales", plain_flow(ui_locales="se")),
    ("oidcc-claims-locales", plain_flow(claims_locales="se")),
    ("oidcc-ensure-request-with-acr-values-succeeds", oidcc_ensure_request_with_acr_values_succeeds),
    ("oidcc-codereuse", code_reuse(0)),
    ("oidcc-codereuse-30seconds", None),  # filled in with the configured wait
    ("oidcc-ensure-registered-redirect-uri", oidcc_ensure_registered_redirect_uri),
    ("oidcc-ensure-post-request-succeeds", oidcc_ensure_post_request_succeeds),
    ("oidcc-server-client-secret-post", oidcc_server_client_secret_post),
    ("oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported", unsigned_request_object),
    ("oidcc-claims-essential", oidcc_claims_essential),
    ("oidcc-ensure-request-object-with-redirect-uri", None),  # needs the redirect URI
    ("oidcc-refresh-token", oidcc_refresh_token),
    ("oidcc-ensure-request-with-valid-pkce-succeeds", oidcc_ensure_request_with_valid_pkce_succeeds),
]
CONFIG = [("oidcc-discovery-endpoint-verification", oidcc_discovery_endpoint_verification)]


def run_module(ctx, plan, module_id, function):
    module = Module(ctx, module_id)
    result = {"plan": plan, "module": module_id, "failures": [], "warnings": module.warnings}
    try:
        if plan != "config":
            module.check_server_keys()
        function(module)
        result["result"] = "WARNING" if module.warnings else "PASSED"
    except Skipped as skipped:
        result["result"] = "SKIPPED"
        result["failures"] = [str(skipped)]
    except Failure as failure:
        result["result"] = "FAILED"
        result["failures"] = [str(failure)]
    except Exception as error:  # a crash in a module is its failure, not the harness's
        result["result"] = "FAILED"
        result["failures"] = [f"{type(error).__name__}: {error}"]
    return result


# Setting up a server of our own.

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(binary, args, env, stdin=None):
    done = subprocess.run([binary] + args, env=env, input=stdin, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"gatehouse {' '.join(args[:2])} failed: {done.stderr or done.stdout}")
    return done.stdout


def start_server(args, workdir):
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    env = dict(os.environ, GATEHOUSE_DATABASE_URL=f"sqlite://{workdir}/gatehouse.sqlite", GATEHOUSE_SECRET_FILE=f"{workdir}/secret",
               GATEHOUSE_PORT=str(port), GATEHOUSE_PUBLIC_URL=issuer, GATEHOUSE_DEV_OUTBOX="1", GATEHOUSE_OUTBOX_DIR=f"{workdir}/outbox",
               GATEHOUSE_LOG_LEVEL="warning",
               # The plans test the protocol, not the hashing: cheap Argon2 keeps a debug build's sign-ins fast.
               GATEHOUSE_ARGON2_MEMORY="1024", GATEHOUSE_ARGON2_ITERATIONS="1")
    cli(args.gatehouse, ["migrate"], env)
    clients = {}
    for name in ("client", "client2", "post"):
        created = json.loads(cli(args.gatehouse, [
            "clients", "create", "--name", f"Conformance {name}", "--id", f"conformance-{name}", "--type", "confidential",
            "--redirect-uri", redirect, "--scope", "openid", "--scope", "profile", "--scope", "email", "--scope", "address",
            "--scope", "phone", "--scope", "offline_access", "--set", "email_verification=off"], env))
        clients[name] = {"client_id": created["client_id"], "client_secret": created["client_secret"]}
    email = f"buffy-{random_text(6).lower()}@example.com"
    user = {"email": email, "email_verified": True, "phone": "+14155550123", "phone_verified": True, "password": PASSWORD, "profile": PROFILE}
    cli(args.gatehouse, ["users", "import", "-", "--quiet"], env, stdin=json.dumps(user) + "\n")
    log = open(f"{workdir}/serve.log", "w")
    process = subprocess.Popen([args.gatehouse, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        try:
            if requests.get(issuer + "/health/ready", timeout=1).status_code == 200:
                break
        except requests.RequestException:
            pass
        if process.poll() is not None:
            raise SystemExit(f"gatehouse serve exited: {open(f'{workdir}/serve.log').read()}")
        time.sleep(0.1)
    return process, issuer, clients, email, redirect


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gatehouse", required=True, help="the gatehouse executable")
    parser.add_argument("--plans", default="basic,formpost,config")
    parser.add_argument("--modules", default="", help="only these module ids (comma-separated)")
    parser.add_argument("--allow-http", action="store_true", help="accept http endpoints on a loopback issuer (tests have no TLS)")
    parser.add_argument("--reuse-wait", type=float, default=30, help="seconds oidcc-codereuse-30seconds waits")
    parser.add_argument("--rp-algorithms", default="RS256",
                        help="the ID token algorithms the relying party accepts (default RS256 alone, as many RPs are "
                             "hard-wired; the suite itself accepts any the JWKS can verify)")
    args = parser.parse_args()
    only = set(filter(None, args.modules.split(",")))
    with tempfile.TemporaryDirectory(prefix="gatehouse-oidcc-") as workdir:
        process, issuer, clients, email, redirect = start_server(args, workdir)
        try:
            modules = []
            for name, function in BASIC:
                if name == "oidcc-codereuse-30seconds":
                    function = code_reuse(args.reuse_wait)
                if name == "oidcc-ensure-request-object-with-redirect-uri":
                    function = lambda m: unsigned_request_object(m, query_redirect=m.ctx.redirect_uri + "/_invalid")  # noqa: E731
                modules.append((name, function))
            runs = []
            for plan in args.plans.split(","):
                listed = CONFIG if plan == "config" else modules
                mode = "form_post" if plan == "formpost" else "query"
                ctx = Context(args, issuer, clients, email, redirect, mode)
                runs += [(ctx, plan, name, function) for name, function in listed if not only or name in only]
            # The modules that wait run beside the others, as separate test runs would.
            results = [None] * len(runs)
            threads = []
            for index, (ctx, plan, name, function) in enumerate(runs):
                if name == "oidcc-codereuse-30seconds":
                    def work(i=index, run=(ctx, plan, name, function)):
                        results[i] = run_module(*run)
                    thread = threading.Thread(target=work)
                    thread.start()
                    threads.append(thread)
            for index, (ctx, plan, name, function) in enumerate(runs):
                if name != "oidcc-codereuse-30seconds":
                    results[index] = run_module(ctx, plan, name, function)
                    print(json.dumps(results[index]), flush=True)
            for thread in threads:
                thread.join()
            for index, (_, _, name, _) in enumerate(runs):
                if name == "oidcc-codereuse-30seconds":
                    print(json.dumps(results[index]), flush=True)
        finally:
            process.terminate()
            process.wait(timeout=10)
    sys.exit(1 if any(r["result"] == "FAILED" for r in results) else 0)


if __name__ == "__main__":
    main()
