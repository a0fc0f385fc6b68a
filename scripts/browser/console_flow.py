#!/usr/bin/env python3
"""Drives the admin console in a real headless Chromium: opens the one-time sign-in link from
`gatehouse console link`, continues, checks the overview's charts, searches a user, opens their page,
revokes one of their live sessions, and finds that revocation in the audit view under the operator's
name. Screenshots of each page go to OUT_DIR (overview.png, users.png, user.png, audit.png). Exit 0 on
success; prints the revoked session's id.

    console_flow.py LINK USER_EMAIL OPERATOR OUT_DIR
"""
import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from reset_flow import png_variety


def shot(driver, out_dir: str, name: str) -> None:
    png = driver.get_screenshot_as_png()
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(png)
    assert png_variety(png) > 20, f"{name} looks blank"


def main() -> int:
    link, email, operator, out_dir = sys.argv[1:5]
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1600"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    wait = WebDriverWait(driver, 20)
    try:
        # Sign in: the link's page asks first, its button spends the link.
        driver.get(link)
        assert driver.title.startswith("Sign in to the console"), driver.title
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(lambda d: d.title.startswith("Overview"))
        assert operator in driver.find_element(By.CSS_SELECTOR, "header .who").text
        charts = driver.find_elements(By.CSS_SELECTOR, "figure svg")
        assert len(charts) == 4, f"{len(charts)} charts"
        captions = [c.text for c in driver.find_elements(By.TAG_NAME, "figcaption")]
        assert captions == ["Sign-ins", "Sign-ups", "Failed sign-ins", "Sessions refreshed"], captions
        assert driver.find_elements(By.CSS_SELECTOR, "figure svg rect"), "no bars drawn"
        shot(driver, out_dir, "overview.png")

        # Search the user by an email prefix and open their page.
        driver.find_element(By.LINK_TEXT, "Users").click()
        wait.until(lambda d: d.title.startswith("Users"))
        box = driver.find_element(By.ID, "q")
        assert driver.find_element(By.CSS_SELECTOR, "label[for=q]").text, "the search box has no label"
        box.send_keys(email.split("@")[0][:6])
        driver.find_element(By.CSS_SELECTOR, "form.search button").click()
        wait.until(lambda d: "q=" in d.current_url)
        shot(driver, out_dir, "users.png")
        driver.find_element(By.LINK_TEXT, email).click()
        wait.until(lambda d: d.title.startswith(email))
        live = driver.find_elements(By.XPATH, "//section[@aria-labelledby='sessions']//button[text()='Revoke']")
        assert len(live) >= 2, f"{len(live)} live sessions shown"
        shot(driver, out_dir, "user.png")

        # Revoke the first live session.
        row = live[0].find_element(By.XPATH, "./ancestor::tr")
        session_id = row.get_attribute("id").removeprefix("session-")
        live[0].click()
        wait.until(lambda d: "done=revoked" in d.current_url)
        notice = driver.find_element(By.CSS_SELECTOR, "p.notice").text
        assert notice == "The session was revoked.", notice
        state = driver.find_element(By.ID, f"session-{session_id}").text
        assert "admin_revoked" in state, state

        # The audit view shows it, by whom.
        driver.find_element(By.LINK_TEXT, "Audit log").click()
        wait.until(lambda d: d.title.startswith("Audit log"))
        rows = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "main table tbody tr")]
        revoked = [r for r in rows if "admin.session.revoked" in r]
        assert revoked and f"console:{operator}" in revoked[0], rows[:5]
        assert any("admin.console.signed_in" in r for r in rows), rows[:5]
        shot(driver, out_dir, "audit.png")
        print(session_id)
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
