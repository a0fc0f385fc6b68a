#!/usr/bin/env python3
"""Passkeys in a real browser: headless Chromium with a virtual authenticator (WebDriver's WebAuthn
extension, through Selenium's add_virtual_authenticator: CTAP2, internal transport, resident keys,
user verification), on Gatehouse's hosted pages at http://localhost:PORT (an RP ID must be a domain
name, so not 127.0.0.1).

  register       the user signs in with the password on the hosted page, opens /passkeys/new for the
                 client and creates a passkey there (navigator.credentials.create by the page's
                 script); the page says it is done and leads back to the client
  usernameless   a new authorization (prompt=login) in a browser that offers no passkey autofill
                 (PublicKeyCredential.isConditionalMediationAvailable answers false, set before the
                 page's script runs): the sign-in page shows "Sign in with a passkey"; clicking it
                 signs in with no email typed, and the client gets its code, which is exchanged with
                 the PKCE verifier: the ID token says amr hwk, user, mfa
  autofill       the same page in a browser with autofill: its background request (conditional
                 mediation) is answered by the virtual authenticator as a person picking the passkey
                 in the email field's autofill would; the browser is signed in without a click
  second-factor  on a client with mfa=required, the password signs in to the factor page, which
                 offers the passkey; the passkey completes the sign-in (amr pwd, hwk, mfa)

    passkey_flow.py --base URL --client ID --mfa-client ID --redirect URI --email E --password P --shots DIR

The last line of stdout is one JSON object: {"ok": true, "phases": [...]} or
{"ok": false, "error": ...}. Screenshots: 30-passkey-new.png, 30-passkey-added.png, 31-signin-passkey.png, 32-after-passkey.png,
33-autofill.png, 34-factor-passkey.png, 35-after-factor.png. No token, code or password is printed.
"""
import argparse
import base64
import contextlib
import hashlib
import json
import os
import secrets
import sys
import urllib.parse

import requests
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from reset_flow import png_variety

TIMEOUT = 20



class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class Browser:
    def __init__(self, shots):
        options = Options()
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=414,896"):
            options.add_argument(flag)
        options.binary_location = "/usr/bin/chromium"
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_page_load_timeout(TIMEOUT)
        self.driver.set_script_timeout(TIMEOUT)
        self.driver.add_virtual_authenticator(VirtualAuthenticatorOptions(
            protocol=VirtualAuthenticatorOptions.Protocol.CTAP2, transport=VirtualAuthenticatorOptions.Transport.INTERNAL,
            has_resident_key=True, has_user_verification=True, is_user_consenting=True, is_user_verified=True))
        self.shots = shots

    def shot(self, name):
        png = self.driver.get_screenshot_as_png()
        with open(os.path.join(self.shots, name), "wb") as f:
            f.write(png)
        check(png_variety(png) > 20, f"{name} looks blank")

    def wait_for(self, condition):
        return WebDriverWait(self.driver, TIMEOUT).until(condition)


class Flow:
    def __init__(self, args):
        self.args = args
        self.browser = Browser(args.shots)
        self.driver = self.browser.driver

    def authorize(self, client, prompt="login"):
        verifier, challenge = pkce()
        state = secrets.token_urlsafe(12)
        query = urllib.parse.urlencode({
            "response_type": "code", "client_id": client, "redirect_uri": self.args.redirect, "scope": "openid email",
            "state": state, "code_challenge": challenge, "code_challenge_method": "S256", "prompt": prompt,
            "nonce": secrets.token_urlsafe(12)})
        self.driver.get(f"{self.args.base}/oauth/authorize?{query}")
        return verifier, state

    def landed(self, client, verifier, state):
        """Waits for the redirect to the client, then exchanges its code; answers the ID token's claims."""
        self.browser.wait_for(lambda d: d.current_url.startswith(self.args.redirect))
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.driver.current_url).query)
        check(query.get("state") == [state], "the redirect's state is not the request's")
        check("code" in query, f"no code in the redirect: {sorted(query)}")
        token = requests.post(f"{self.args.base}/oauth/token", timeout=10, data={
            "grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": self.args.redirect,
            "client_id": client, "code_verifier": verifier})
        check(token.status_code == 200, f"code exchange answered {token.status_code}")
        return claims(token.json()["id_token"])

    def register(self):
        with self.without_autofill():
            verifier, state = self.authorize(self.args.client)
            self.browser.wait_for(EC.visibility_of_element_located((By.ID, "email"))).send_keys(self.args.email)
            self.driver.find_element(By.ID, "password").send_keys(self.args.password)
            self.driver.find_element(By.ID, "submit-signin").click()
            found = self.landed(self.args.client, verifier, state)
            check(found.get("amr") == ["pwd"], f"amr {found.get('amr')}")
            query = urllib.parse.urlencode({"client_id": self.args.client, "redirect_uri": self.args.redirect})
            self.driver.get(f"{self.args.base}/passkeys/new?{query}")
            button = self.browser.wait_for(EC.visibility_of_element_located((By.ID, "submit-passkey-new")))
            self.driver.find_element(By.ID, "passkey-name").send_keys("Chromium")
            self.browser.shot("30-passkey-new.png")
            button.click()
            self.browser.wait_for(EC.presence_of_element_located((By.ID, "passkey-added")))
            self.browser.shot("30-passkey-added.png")
            link = self.driver.find_element(By.ID, "continue").get_attribute("href")
            check(link == self.args.redirect, f"the page leads to {link}")
        check(len(self.driver.get_credentials()) == 1, "the virtual authenticator holds no credential")

    @contextlib.contextmanager
    def without_autofill(self):
        """A browser that offers no passkey autofill: set before any page script runs."""
        stub = self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {
            "source": "PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);"})
        try:
            yield
        finally:
            self.driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": stub["identifier"]})

    def usernameless(self):
        with self.without_autofill():
            verifier, state = self.authorize(self.args.client)
            button = self.browser.wait_for(EC.visibility_of_element_located((By.ID, "submit-passkey")))
            email = self.driver.find_element(By.ID, "email")
            check("webauthn" in email.get_attribute("autocomplete"), "the email field does not ask for passkeys in its autofill")
            self.browser.shot("31-signin-passkey.png")
            button.click()
            found = self.landed(self.args.client, verifier, state)
        check({"hwk", "user", "mfa"} <= set(found.get("amr", [])), f"amr {found.get('amr')}")
        check(found.get("acr") == "2", f"acr {found.get('acr')}")
        self.browser.shot("32-after-passkey.png")

    def autofill(self):
        before = self.driver.get_credentials()[0].sign_count
        verifier, state = self.authorize(self.args.client)
        found = self.landed(self.args.client, verifier, state)
        check("hwk" in found.get("amr", []) and "mfa" in found.get("amr", []), f"amr {found.get('amr')}")
        check(self.driver.get_credentials()[0].sign_count > before, "the authenticator did not sign")
        self.browser.shot("33-autofill.png")

    def second_factor(self):
        # Without autofill, or the sign-in page's own passkey request would sign in before the password.
        with self.without_autofill():
            verifier, state = self.authorize(self.args.mfa_client)
            self.browser.wait_for(EC.visibility_of_element_located((By.ID, "email"))).send_keys(self.args.email)
            self.driver.find_element(By.ID, "password").send_keys(self.args.password)
            self.driver.find_element(By.ID, "submit-signin").click()
            button = self.browser.wait_for(EC.visibility_of_element_located((By.ID, "submit-passkey")))
            check(not self.driver.find_elements(By.ID, "code"), "the factor page asks for a code the user has no app for")
            self.browser.shot("34-factor-passkey.png")
            button.click()
            found = self.landed(self.args.mfa_client, verifier, state)
        check({"pwd", "hwk", "mfa"} <= set(found.get("amr", [])), f"amr {found.get('amr')}")
        self.browser.shot("35-after-factor.png")


def main():
    parser = argparse.ArgumentParser()
    for name in ("--base", "--client", "--mfa-client", "--redirect", "--email", "--password", "--shots"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    phases = []
    flow = None
    try:
        flow = Flow(args)
        flow.register()
        phases.append("register")
        flow.usernameless()
        phases.append("usernameless")
        flow.autofill()
        phases.append("autofill")
        flow.second_factor()
        phases.append("second-factor")
        print(json.dumps({"ok": True, "phases": phases}))
    except Exception as error:  # the summary line says what failed; the test prints it
        print(json.dumps({"ok": False, "phases": phases, "error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)
    finally:
        if flow:
            flow.driver.quit()


if __name__ == "__main__":
    main()
