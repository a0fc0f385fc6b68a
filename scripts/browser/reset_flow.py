#!/usr/bin/env python3
"""Drives the hosted /reset page in a real headless Chromium: opens the link from the recovery mail,
checks that the page renders (screenshot with real content, the form's fields and CSRF token present),
fills in a new password, submits, and checks the confirmation. Exit 0 on success.

    reset_flow.py URL NEW_PASSWORD SCREENSHOT.png
"""
import struct
import sys
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def png_variety(png: bytes) -> int:
    """Distinct byte values in the decoded image data: a blank page has almost none."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, idat = 8, b""
    width = height = 0
    while offset < len(png):
        length, kind = struct.unpack(">I4s", png[offset:offset + 8])
        data = png[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", data[:8])
        elif kind == b"IDAT":
            idat += data
        offset += 12 + length
    raw = zlib.decompress(idat)
    assert width > 300 and height > 300, f"tiny screenshot {width}x{height}"
    return len(set(raw))


def main() -> int:
    url, password, screenshot = sys.argv[1], sys.argv[2], sys.argv[3]
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=414,896"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(url)
        assert "new password" in driver.title.lower(), f"unexpected title {driver.title!r}"
        assert driver.find_element(By.NAME, "csrf").get_attribute("value"), "no CSRF token in the form"
        errors = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".error")]
        assert not errors, f"a fresh form shows an error: {errors}"
        png = driver.get_screenshot_as_png()
        with open(screenshot, "wb") as f:
            f.write(png)
        variety = png_variety(png)
        assert variety > 20, f"the screenshot looks blank ({variety} distinct values)"
        driver.find_element(By.ID, "password").send_keys(password)
        driver.find_element(By.ID, "confirm").send_keys(password)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        # The click starts a navigation: wait for the new page rather than read the old one.
        WebDriverWait(driver, 20).until(lambda d: d.title == "Password changed")
        heading = driver.find_element(By.TAG_NAME, "h1").text
        assert heading == "Password changed", f"after submit: {heading!r}"
        print("reset flow ok")
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
