#!/usr/bin/env python3
"""The device authorization grant (RFC 8628) with real parts. This script plays the TV: it asks for
codes and polls the token endpoint as RFC 8628 §3.4/§3.5 say (every `interval` seconds, five more
after each `slow_down`). Headless Chromium plays the phone: it opens `verification_uri_complete`,
signs in on the hosted page, sees the consent page name the client, and approves. Then a second TV
code: the phone (signed in by then) declines, and that TV hears `access_denied`.

  device-code      the /device page shows the TV's code, prefilled
  approve          sign-in page, consent page naming the client, "Device connected"; the TV, which
                   polled too early once on purpose (slow_down, then honoured), gets tokens once
  decline          a second code straight to the consent page (the browser is signed in); "Device not
                   connected"; that TV's poll ends with access_denied

    device_flow.py --issuer URL --client ID --client-name NAME --email E --password P --shots DIR

The last line of stdout is one JSON object: {"ok": true, "phases": [...], "polls": [...]} or
{"ok": false, "error": ...}. Screenshots: 21-device-code.png, 22-signin.png, 23-consent.png,
24-connected.png, 25-declined.png. No token, code or password is printed.
"""
import argparse
import json
import os
import sys
import threading
import time

import requests
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from reset_flow import png_variety

GRANT = "urn:ietf:params:oauth:grant-type:device_code"
TIMEOUT = 20


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class TV(threading.Thread):
    """Polls for one device code; `answers` are the errors it heard, `result` how it ended."""

    def __init__(self, issuer, client, started, early=False):
        super().__init__(daemon=True)
        self.issuer, self.client, self.started, self.early = issuer, client, started, early
        self.answers, self.result = [], None
        # Seconds from sending the first early poll to the second's answer: on a machine loaded enough
        # that this reaches the interval, the second poll was no longer too soon.
        self.early_span = 0.0

    def poll(self):
        return requests.post(f"{self.issuer}/oauth/token", timeout=10, data={
            "grant_type": GRANT, "device_code": self.started["device_code"], "client_id": self.client})

    def run(self):
        interval = self.started["interval"]
        deadline = time.time() + self.started["expires_in"]
        if self.early:
            # Two polls at once: the second is too soon and must be told to slow down.
            began = time.monotonic()
            for _ in range(2):
                self.answers.append(self.poll().json().get("error"))
            self.early_span = time.monotonic() - began
            if self.answers[-1] == "slow_down":
                interval += 5
        while time.time() < deadline:
            time.sleep(interval)
            answer = self.poll()
            if answer.status_code == 200:
                self.result = ("tokens", answer.json())
                return
            error = answer.json().get("error")
            self.answers.append(error)
            if error == "authorization_pending":
                continue
            if error == "slow_down":
                interval += 5
                continue
            self.result = ("error", error)
            return
        self.result = ("error", "timed out")


class Phone:
    def __init__(self, shots):
        options = Options()
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=414,896"):
            options.add_argument(flag)
        options.binary_location = "/usr/bin/chromium"
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_page_load_timeout(TIMEOUT)
        self.shots = shots

    def shot(self, name):
        png = self.driver.get_screenshot_as_png()
        with open(os.path.join(self.shots, name), "wb") as f:
            f.write(png)
        check(png_variety(png) > 20, f"{name} looks blank")

    def wait_for(self, css):
        return WebDriverWait(self.driver, TIMEOUT).until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))

    def click_and_wait(self, button_id, css):
        self.driver.find_element(By.ID, button_id).click()
        return self.wait_for(css)


def start(issuer, client):
    answer = requests.post(f"{issuer}/oauth/device_authorization", data={"client_id": client, "scope": "openid profile"}, timeout=10)
    check(answer.status_code == 200, f"device_authorization answered {answer.status_code}")
    return answer.json()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--issuer", "--client", "--client-name", "--email", "--password", "--shots"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    phases, polls = [], []
    phone = Phone(args.shots)
    try:
        # The first TV: the phone opens the complete URI (as from a QR code), signs in, approves.
        first = start(args.issuer, args.client)
        tv = TV(args.issuer, args.client, first, early=True)
        tv.start()
        phone.driver.get(first["verification_uri_complete"])
        code_field = phone.wait_for("form#device-form input#user_code")
        check(code_field.get_attribute("value") == first["user_code"], "the /device page does not show the TV's code")
        phone.shot("21-device-code.png")
        phases.append("device-code")
        phone.click_and_wait("submit-device", "form#signin")
        phone.shot("22-signin.png")
        phone.driver.find_element(By.ID, "email").send_keys(args.email)
        phone.driver.find_element(By.ID, "password").send_keys(args.password)
        phone.click_and_wait("submit-signin", "form#consent")
        heading = phone.driver.find_element(By.TAG_NAME, "h1").text
        check(args.client_name in heading, f"the consent page does not name the client: {heading}")
        phone.shot("23-consent.png")
        phone.click_and_wait("submit-allow", "#error-detail")
        check("connected" in phone.driver.find_element(By.TAG_NAME, "h1").text.lower(), "no 'Device connected' page")
        phone.shot("24-connected.png")
        tv.join(120)
        check(tv.result is not None and tv.result[0] == "tokens",
              f"the TV did not get tokens: {tv.result[1] if tv.result and tv.result[0] == 'error' else 'still polling'}")
        tokens = tv.result[1]
        check(tokens.get("refresh_token") and tokens.get("id_token") and tokens.get("access_token"), "the TV's answer lacks tokens")
        early_ok = tv.answers[:2] == ["authorization_pending", "slow_down"] or (
            tv.answers[:2] == ["authorization_pending", "authorization_pending"] and tv.early_span >= first["interval"])
        check(early_ok, f"the early polls heard {tv.answers[:2]} in {tv.early_span:.1f} s")
        again = TV(args.issuer, args.client, first).poll()
        check(again.json().get("error") == "invalid_grant", "the device code worked twice")
        me = requests.get(f"{args.issuer}/v1/me", headers={"Authorization": f"Bearer {tokens['access_token']}"}, timeout=10)
        check(me.status_code == 200 and me.json().get("email") == args.email, "the TV's token is not the person's")
        polls.append(tv.answers)
        phases.append("approve")

        # The second TV: the signed-in phone types the code by hand and declines.
        second = start(args.issuer, args.client)
        tv2 = TV(args.issuer, args.client, second)
        tv2.start()
        phone.driver.get(second["verification_uri"])
        phone.wait_for("form#device-form").find_element(By.ID, "user_code").send_keys(second["user_code"].lower().replace("-", ""))
        phone.click_and_wait("submit-device", "form#consent")
        phone.click_and_wait("submit-deny", "#error-detail")
        check("not connected" in phone.driver.find_element(By.TAG_NAME, "h1").text.lower(), "no 'Device not connected' page")
        phone.shot("25-declined.png")
        tv2.join(60)
        check(tv2.result == ("error", "access_denied"), f"the second TV heard {tv2.result}")
        polls.append(tv2.answers)
        phases.append("decline")
        print(json.dumps({"ok": True, "phases": phases, "polls": polls}))
        return 0
    except Exception as error:  # noqa: BLE001 - every failure is reported as the JSON line
        print(json.dumps({"ok": False, "phases": phases, "error": f"{type(error).__name__}: {error}"}))
        return 1
    finally:
        phone.driver.quit()


if __name__ == "__main__":
    sys.exit(main())
