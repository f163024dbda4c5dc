"""The default email action handler page (issue 7) in a real browser.

Headless Chromium (Debian's `chromium` + `chromium-driver`) driven by Selenium against a running
accountd. Screenshots of every page go to `test-artifacts/action-page/` (git-ignored).

Environment: ACCOUNTD_BROWSER_URL (http://127.0.0.1:PORT), ACCOUNTD_BROWSER_PROJECT,
ACCOUNTD_BROWSER_API_KEY, ACCOUNTD_BROWSER_ADMIN_TOKEN.
"""

import http.server
import json
import os
import pathlib
import threading
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

BASE = os.environ["ACCOUNTD_BROWSER_URL"].rstrip("/")
PROJECT = os.environ["ACCOUNTD_BROWSER_PROJECT"]
API_KEY = os.environ["ACCOUNTD_BROWSER_API_KEY"]
ADMIN = os.environ["ACCOUNTD_BROWSER_ADMIN_TOKEN"]
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts" / "action-page"


def rpc(path, body, admin=False):
    """POSTs JSON; returns (status, parsed body)."""
    url = f"{BASE}/v1/projects/{PROJECT}/accounts:{path}" if admin else f"{BASE}/v1/accounts:{path}?key={API_KEY}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    if admin:
        request.add_header("Authorization", f"Bearer {ADMIN}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def oob_link(request_type, email, **settings):
    status, body = rpc("sendOobCode", {"requestType": request_type, "email": email, "returnOobLink": True, **settings}, admin=True)
    assert status == 200, body
    return body["oobLink"], body["oobCode"]


def sign_up(email, password="old-password"):
    status, body = rpc("signUp", {"email": email, "password": password, "returnSecureToken": True})
    assert status == 200, body
    return body["localId"]


def unique(name):
    return f"{name}-{uuid.uuid4().hex[:8]}@example.com"


@pytest.fixture(scope="module")
def browser():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    options = Options()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1100,800", "--lang=en-US"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def app_server():
    """A stand-in web app on localhost (an authorized domain) that email-link sign-in lands on."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            page = b"<!doctype html><html lang=en><title>App</title><h1>Finishing sign-in\xe2\x80\xa6</h1></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_address[1]}"
    server.shutdown()


def shot(driver, name):
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def heading(driver):
    return WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.TAG_NAME, "h1"))).text


def submit(driver):
    """Submits the page's form and waits until the response has replaced the page: reading the
    heading right after the click could find the old page's, gone stale by the time it is read.
    The old document carries a mark the new one lacks; asking for it mid-navigation may fail in
    chromedriver ("unhandled inspector error", as asking an element's staleness did), so a failed
    probe only means "not yet"."""
    driver.execute_script("window.__accountdOldPage = true")
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(driver, 10, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return window.__accountdOldPage === undefined && document.readyState !== 'loading'"))


def test_reset_password_through_the_form(browser):
    email = unique("reset")
    sign_up(email)
    link, code = oob_link("PASSWORD_RESET", email, continueUrl="http://localhost/after-reset")
    browser.get(link)
    assert heading(browser) == "Reset your password"
    assert "Use at least 6 characters." in browser.page_source
    field = browser.find_element(By.ID, "new-password")
    assert browser.switch_to.active_element == field  # autofocus: the form is ready to type into
    label = browser.find_element(By.CSS_SELECTOR, "label[for=new-password]")
    assert label.text == "New password"
    shot(browser, "01-reset-form")

    field.send_keys("short")
    browser.execute_script("document.querySelector('form').noValidate = true")  # exercise the server-side policy
    submit(browser)
    assert heading(browser) == "Reset your password"
    assert "too short" in browser.find_element(By.CSS_SELECTOR, "[role=alert]").text
    shot(browser, "02-reset-weak-password")

    browser.find_element(By.ID, "new-password").send_keys("a-brand-new-password")
    submit(browser)
    assert heading(browser) == "Your password has been changed"
    assert browser.find_element(By.LINK_TEXT, "Continue").get_attribute("href") == "http://localhost/after-reset"
    assert code not in browser.page_source
    shot(browser, "03-reset-done")

    status, body = rpc("signInWithPassword", {"email": email, "password": "a-brand-new-password", "returnSecureToken": True})
    assert status == 200, body
    status, body = rpc("signInWithPassword", {"email": email, "password": "old-password", "returnSecureToken": True})
    assert status == 400, body


def test_reset_form_on_a_phone_in_french(browser):
    email = unique("mobile")
    sign_up(email)
    link, _ = oob_link("PASSWORD_RESET", email)
    browser.set_window_size(390, 844)
    try:
        browser.get(link.replace("lang=en", "lang=fr"))
        assert heading(browser) == "Réinitialiser votre mot de passe"
        assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "fr"
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 390, "no horizontal scrolling on a phone"
        shot(browser, "04-reset-form-mobile-fr")
    finally:
        browser.set_window_size(1100, 800)


def test_verify_email_link(browser):
    email = unique("verify")
    local_id = sign_up(email)
    link, _ = oob_link("VERIFY_EMAIL", email)
    browser.get(link)
    # Opening the link only asks: mail scanners fetch links, so only the button applies it.
    assert heading(browser) == "Verify your email"
    status, body = rpc("lookup", {"localId": [local_id]}, admin=True)
    assert status == 200 and body["users"][0]["emailVerified"] is False
    shot(browser, "05-verify-confirm")
    submit(browser)
    assert heading(browser) == "Your email has been verified"
    shot(browser, "05-verify-done")
    status, body = rpc("lookup", {"localId": [local_id]}, admin=True)
    assert status == 200 and body["users"][0]["emailVerified"] is True

    browser.get(link)  # a second use
    assert heading(browser) == "This link is no longer valid"
    shot(browser, "06-error-used-link")


def test_sign_in_link_lands_on_the_app(browser, app_server):
    email = unique("signin")
    link, code = oob_link("EMAIL_SIGNIN", email, continueUrl=f"{app_server}/finish", canHandleCodeInApp=True)
    browser.get(link)
    WebDriverWait(browser, 10).until(lambda d: d.current_url.startswith(f"{app_server}/finish"))
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(browser.current_url).query)
    assert query["mode"] == ["signIn"]
    assert query["oobCode"] == [code]
    assert query["apiKey"] == [API_KEY]
    assert query["lang"] == ["en"]
    shot(browser, "07-sign-in-landed")

    tampered = link.replace(urllib.parse.quote(app_server, safe=""), urllib.parse.quote("https://evil.example.net", safe=""))
    assert tampered != link
    browser.get(tampered)
    assert heading(browser) == "This link points somewhere it should not"
    assert browser.current_url.startswith(BASE)
    shot(browser, "08-error-unauthorized-continue")


def test_unknown_mode_page(browser):
    browser.get(f"{BASE}/__/auth/action?mode=nope&oobCode=x&lang=en")
    assert heading(browser) == "This link cannot be used here"
    shot(browser, "09-error-unknown-mode")
