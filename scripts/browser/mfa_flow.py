#!/usr/bin/env python3
"""Proves the second factor end to end with real parts: an unmodified OpenID Connect client library
(Authlib) asks for the second level with `acr_values`, headless Chromium walks Gatehouse's hosted
pages, the authenticator app is a real TOTP implementation (PyPI's pyotp) fed from the QR code that a
real decoder (zbarimg, Debian's zbar-tools) reads off the page's screenshot. One Chromium session:

  discovery             acr_values_supported lists 2
  one-factor            a plain sign-in: ID token acr 1; the access token says acr 1 too
  resource-challenge    a resource server that wants acr 2 within 300 s refuses the token with the
                        RFC 9470 challenge (WWW-Authenticate: Bearer error="insufficient_user_
                        authentication", acr_values="2", max_age=300)
  step-up-enrol         the client follows the challenge (acr_values=2, max_age=300): the browser is
                        signed in, but with one factor and none enrolled, so the enrolment page shows
                        a QR code; zbarimg decodes it to the otpauth URI (its secret is the one the page
                        prints), pyotp's code confirms it, the recovery codes page shows 10 codes once,
                        and the ID token says acr 2 with amr otp and mfa; the resource server accepts
  prompt-none-level-2   prompt=none with acr_values=2: a code at once, acr 2
  totp-signin           max_age=0, acr_values=2: the sign-in page, then the factor page (no QR now);
                        pyotp's code of a later step signs in; acr 2, a later auth_time
  recovery-code         max_age=0 again: a recovery code instead of the app signs in

    mfa_flow.py --issuer URL --app-port PORT --shots DIR --email E --password P --client ID

The last line of stdout is one JSON object: {"ok": true, "phases": [...], ...} or {"ok": false, ...}.
Screenshots: 11-enrol.png, 11-qr.png, 12-recovery-codes.png, 13-factor.png, 14-recovery-code.png. No
token, code, secret or password is printed.
"""
import argparse
import os
import re
import subprocess
import sys
import time
from urllib.parse import parse_qs, urlsplit

import pyotp
from joserfc import jwt
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry
from selenium.webdriver.common.by import By

import hosted_flow
from hosted_flow import SECRETS, Flow, check, find

# The hosted pages this walk meets besides hosted_flow's, by the form each carries.
hosted_flow.PAGES["factor"] = "form#factor"
hosted_flow.PAGES["recovery_codes"] = "form#codes-kept"

RESOURCE_MAX_AGE = 300


class ResourceServer:
    """What an API that wants the second level does with a JWT access token (RFC 9068): verifies it
    offline against the JWKS and asks for more with the RFC 9470 challenge when acr or auth_time fall
    short."""

    def __init__(self, flow: Flow):
        self.flow = flow

    def check(self, access_token: str):
        """None when the token suffices, else the WWW-Authenticate challenge."""
        registry = JWSRegistry(algorithms=["ES256"], strict_check_header=False)
        decoded = jwt.decode(access_token, KeySet.import_key_set(self.flow.jwks), registry=registry)
        claims = decoded.claims
        check(decoded.header.get("typ") == "at+jwt", "the access token is not typed at+jwt")
        fresh = isinstance(claims.get("auth_time"), int) and time.time() - claims["auth_time"] <= RESOURCE_MAX_AGE + 60
        if claims.get("acr") == "2" and fresh:
            return None
        return ('Bearer error="insufficient_user_authentication", '
                'error_description="A second factor is required", '
                f'acr_values="2", max_age={RESOURCE_MAX_AGE}')


def parse_challenge(header: str):
    """The auth-params of a Bearer challenge (RFC 6750 §3, RFC 9470 §3)."""
    check(header.startswith("Bearer "), "not a Bearer challenge")
    return {k: v1 or v2 for k, v1, v2 in re.findall(r'(\w+)=(?:"([^"]*)"|([^,\s]+))', header[len("Bearer "):])}


def decode_qr(path: str) -> str:
    result = subprocess.run(["zbarimg", "--raw", "-q", "--nodbus", "-Sdisable", "-Sqrcode.enable", path], capture_output=True, text=True, timeout=30)
    check(result.returncode == 0, f"zbarimg could not read the QR code (exit {result.returncode})")
    return result.stdout.strip()


class MFAFlow(Flow):
    PHASES = (
        "discovery", "one-factor", "resource-challenge", "step-up-enrol", "prompt-none-level-2", "totp-signin", "recovery-code",
    )

    def __init__(self, args, browser):
        super().__init__(args, browser)
        self.session = None
        self.resource = ResourceServer(self)
        self.challenge = {}
        self.totp = None
        self.last_step = None
        self.codes = []

    def level_two(self, hit, request, path="/cb"):
        """Exchanges the code and checks the ID token says the second level."""
        self.check_redirect(hit, request, path)
        token, claims = self.exchange(self.session, hit, request, self.args.client)
        check(claims.get("acr") == "2", f"the ID token's acr is {claims.get('acr')!r}, not 2")
        amr = claims.get("amr") or []
        check("otp" in amr and "mfa" in amr, f"the ID token's amr is {amr}")
        check(self.resource.check(token["access_token"]) is None, "the resource server still refuses the token")
        return token, claims

    def phase_discovery(self):
        self.discover()
        check("2" in (self.meta.get("acr_values_supported") or []), "discovery does not list acr 2")
        self.session = self.client(self.args.client, "/cb", "openid email")

    def phase_one_factor(self):
        b = self.browser
        request, outcome = self.authorize(self.session)
        b.expect(outcome, "signin")
        hit = b.expect(b.sign_in(self.args.email, self.args.password), "app")
        self.check_redirect(hit, request, "/cb")
        token, claims = self.exchange(self.session, hit, request, self.args.client)
        check(claims.get("acr") == "1", f"a one-factor sign-in's acr is {claims.get('acr')!r}")
        self.results["token_1"] = token["access_token"]

    def phase_resource_challenge(self):
        header = self.resource.check(self.results.pop("token_1"))
        check(header is not None, "the resource server accepted a one-factor token")
        self.challenge = parse_challenge(header)
        check(self.challenge.get("error") == "insufficient_user_authentication", f"challenge {self.challenge}")

    def phase_step_up_enrol(self):
        b = self.browser
        request, outcome = self.authorize(
            self.session, acr_values=self.challenge["acr_values"], max_age=self.challenge["max_age"])
        b.expect(outcome, "factor")
        qr = find(b.driver, By.ID, "totp-qr")
        check(qr is not None, "the factor page shows no QR code: not an enrolment")
        b.screenshot("11-enrol.png", page=True)
        qr_path = os.path.join(b.shots, "11-qr.png")
        qr.screenshot(qr_path)
        uri = decode_qr(qr_path)
        check(uri.startswith("otpauth://totp/"), "the QR code is not an otpauth URI")
        self.totp = pyotp.parse_uri(uri)
        SECRETS.add(self.totp.secret)
        printed = b.button("totp-secret").text.replace(" ", "")
        check(printed == self.totp.secret, "the secret printed for typing is not the QR code's")
        check(parse_qs(urlsplit(uri).query).get("issuer") == ["127.0.0.1"], "the URI names another issuer")
        code = self.totp.now()
        self.last_step = int(time.time()) // 30
        b.fill("code", code)
        submit = b.button("submit-factor")
        submit.click()
        b.expect(b.wait(leaving=submit), "recovery_codes")
        b.screenshot("12-recovery-codes.png", page=True)
        self.codes = [li.text.strip() for li in b.driver.find_elements(By.CSS_SELECTOR, "#recovery-codes li")]
        SECRETS.add(*self.codes)
        check(len(self.codes) == 10 and len(set(self.codes)) == 10, f"{len(self.codes)} recovery codes shown")
        kept = b.button("submit-codes-kept")
        kept.click()
        hit = b.expect(b.wait(leaving=kept), "app")
        self.level_two(hit, request)

    def phase_prompt_none_level_2(self):
        request, outcome = self.authorize(self.session, prompt="none", acr_values="2")
        hit = self.browser.expect(outcome, "app")
        self.level_two(hit, request)

    def factor_signin(self, factor: str, code, shot: str):
        """`code` is the code, or a function that makes it: an authenticator app's code is made just
        before it is typed, as a person reads it then, not before the pages that lead there (a loaded
        machine can take longer over them than the code lives)."""
        b = self.browser
        request, outcome = self.authorize(self.session, max_age="0", acr_values="2")
        b.expect(outcome, "signin")
        b.expect(b.sign_in(self.args.email, self.args.password), "factor")
        check(find(b.driver, By.ID, "totp-qr") is None, "the factor page enrols again")
        b.screenshot(shot, page=True)
        b.button(f"factor-{factor}").click()
        b.fill("code", code() if callable(code) else code)
        submit = b.button("submit-factor")
        submit.click()
        hit = b.expect(b.wait(leaving=submit), "app")
        return self.level_two(hit, request)

    def phase_totp_signin(self):
        # The step that confirmed the app is spent: wait for the next one, as a person would.
        while int(time.time()) // 30 <= self.last_step:
            time.sleep(0.5)
        _, claims = self.factor_signin("totp", self.totp.now, "13-factor.png")
        self.results["auth_time_totp"] = claims["auth_time"]

    def phase_recovery_code(self):
        _, claims = self.factor_signin("recovery_code", self.codes[0].upper(), "14-recovery-code.png")
        check(claims["auth_time"] >= self.results["auth_time_totp"], "auth_time went back")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--issuer", "--shots", "--email", "--password", "--client"):
        parser.add_argument(name, required=True)
    parser.add_argument("--app-port", required=True, type=int)
    args = parser.parse_args()
    SECRETS.add(args.password)
    os.makedirs(args.shots, exist_ok=True)
    return hosted_flow.run_phases(MFAFlow, args, lambda flow, browser: {"screenshots": browser.taken})


if __name__ == "__main__":
    sys.exit(main())
