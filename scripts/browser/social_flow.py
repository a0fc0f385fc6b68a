#!/usr/bin/env python3
"""Drives a social web sign-in in a real headless Chromium: opens START_URL (a Gatehouse URL that
redirects to the provider's authorize page), answers the provider's page for USER (or cancels it with
--deny), and follows the redirects back through Gatehouse to the app. A small HTTP server on
127.0.0.1:APP_PORT stands in for the app's redirect target and records what it is sent.

    social_flow.py START_URL PAGE_KIND USER APP_PORT SCREENSHOT_DIR [--deny]

PAGE_KIND is `fake` (the authorize page of scripts/social/provider_apis.py: #user, #authorize, #deny)
or `oidc-mock` (the authorize page of oidc-provider-mock from PyPI: a `sub` field with its own submit
button, and a separate form whose button name=action value=deny cancels).

The last line of stdout is one JSON object:
  - the app was reached: the query (or, for a form_post, the form) it got, single values, e.g.
    {"code": "...", "state": "..."} or {"error": "access_denied", "state": "..."}; exit 0.
    Screenshots provider.png (when the provider page showed) and app.png.
  - the browser ended on some other page (an error page of Gatehouse or of the provider):
    {"page_title": ..., "url": ...}; screenshot end.png; exit 2.
Exit 3: --deny asked of a page that has no way to cancel. Exit 1: anything else went wrong.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

TIMEOUT = 20
SETTLED = 2.0  # seconds a page must stay put (loaded, same URL and title) to count as where the browser ended

APP_PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed in</title>
<style>body{font-family:sans-serif;background:#e8f5e9;padding:2rem}h1{color:#1b5e20}</style></head>
<body><h1>signed in</h1><p>The app received the redirect.</p></body></html>"""


class AppServer:
    """The app's redirect target: answers every request with a "signed in" page and records it."""

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
                self.end_headers()
                self.wfile.write(APP_PAGE)

            do_GET = do_POST = answer

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def first(self):
        with self.lock:
            return self.hits[0] if self.hits else None

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def single_values(text: str) -> dict:
    return {name: values[0] for name, values in parse_qs(text, keep_blank_values=True).items()}


def find(driver, by, value):
    try:
        return driver.find_element(by, value)
    except NoSuchElementException:
        return None


class Browser:
    def __init__(self, app: AppServer, app_origin: str, shots: str):
        self.app, self.app_origin, self.shots = app, app_origin, shots
        options = Options()
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=414,896"):
            options.add_argument(flag)
        options.binary_location = "/usr/bin/chromium"
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_page_load_timeout(TIMEOUT)

    def screenshot(self, name: str):
        with open(os.path.join(self.shots, name), "wb") as f:
            f.write(self.driver.get_screenshot_as_png())

    def where(self):
        """(url, title, loaded) of the current page; None while Chromium is between pages."""
        try:
            d = self.driver
            return d.current_url, d.title, d.execute_script("return document.readyState") == "complete"
        except WebDriverException:
            return None

    def wait(self, found=None, leaving=None):
        """Waits until the app was reached ("app"), `found()` gives an element (that element), or the
        browser has settled on a page that is neither ("ended"). `leaving` is the element just clicked:
        until it is gone the old page is still showing and cannot count as settled."""
        deadline = time.monotonic() + TIMEOUT
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            if self.app.first():
                return "app"
            if found is not None:
                try:
                    element = found()
                except WebDriverException:
                    element = None
                if element is not None:
                    return element
            if leaving is not None:
                try:
                    leaving.is_enabled()  # raises once the page it belonged to is gone
                    time.sleep(0.1)
                    continue
                except WebDriverException:
                    leaving = None
            now = self.where()
            if now != last:
                last, since = now, time.monotonic()
            elif now is not None and now[2] and time.monotonic() - since >= SETTLED:
                return "ended"
            time.sleep(0.1)
        return "app" if self.app.first() else "ended"

    def finish(self, outcome) -> int:
        if outcome == "app":
            # Let the app page render before the screenshot.
            for _ in range(50):
                now = self.where()
                if now and now[2] and now[0].startswith(self.app_origin):
                    break
                time.sleep(0.1)
            self.screenshot("app.png")
            path, body = self.app.first()
            values = single_values(urlsplit(path).query)
            if body:
                values.update(single_values(body))
            print(json.dumps(values), flush=True)
            return 0
        self.screenshot("end.png")
        now = self.where() or (self.driver.current_url, self.driver.title, True)
        print(json.dumps({"page_title": now[1], "url": now[0]}), flush=True)
        return 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("start_url")
    parser.add_argument("page_kind", choices=("fake", "oidc-mock"))
    parser.add_argument("user")
    parser.add_argument("app_port", type=int)
    parser.add_argument("screenshot_dir")
    parser.add_argument("--deny", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.screenshot_dir, exist_ok=True)

    app = AppServer(args.app_port)
    browser = Browser(app, f"http://127.0.0.1:{args.app_port}", args.screenshot_dir)
    driver = browser.driver
    try:
        try:
            driver.get(args.start_url)
        except WebDriverException as error:  # a page that never finishes loading: judge where it stands
            print(f"loading {args.start_url}: {error.msg}", file=sys.stderr)

        if args.page_kind == "fake":
            def account_field():
                return find(driver, By.ID, "user")
        else:
            def account_field():
                return find(driver, By.CSS_SELECTOR, "input[name=sub]")
        field = browser.wait(found=account_field)
        if field in ("app", "ended"):
            print("the provider's authorize page never showed", file=sys.stderr)
            return browser.finish(field)
        browser.screenshot("provider.png")

        if args.page_kind == "fake":
            if args.deny:
                button = driver.find_element(By.ID, "deny")
            else:
                field.send_keys(args.user)
                button = driver.find_element(By.ID, "authorize")
        else:
            if args.deny:
                # oidc-provider-mock's Deny is a form of its own: <button name="action" value="deny">.
                button = find(driver, By.CSS_SELECTOR, "button[name=action][value=deny]")
                if button is None:
                    print("this oidc-provider-mock page has no Deny button", file=sys.stderr)
                    print(json.dumps({"page_title": driver.title, "url": driver.current_url}), flush=True)
                    return 3
            else:
                field.send_keys(args.user)
                button = field.find_element(By.XPATH, "./ancestor::form//button[@type='submit']")
        button.click()
        return browser.finish(browser.wait(leaving=button))
    finally:
        driver.quit()
        app.stop()


if __name__ == "__main__":
    sys.exit(main())
