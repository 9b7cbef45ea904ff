"""A newcomer's first hour, in a real browser: `pushctl serve` on `make run`'s configuration (the built-in simulator
plays APNs, the browsers' push service and FCM), one device of each service registered over the HTTP API as the apps
would, one notification to all of them, and the console's development inbox shows the three as the simulator
decoded them — APNs' payload, the browser's decrypted Web Push message with its TTL and urgency, the Android device's
FCM message — newest first; Clear empties it. Run by Tests/console/console.sh, which starts the server."""

import argparse
import json
import pathlib
import ssl
import sys
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

APNS_TOKEN = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
FCM_TOKEN = "dGhpc0lzQW5JbnN0YW5jZUlk:APA91bHello-from-the-inbox-test_0123456789"


def fail(message):
    print(f"console inbox: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def call(url, method="GET", key=None, body=None, content_type="application/json", context=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    headers = {"Content-Type": content_type}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20, context=context) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def main():
    parser = argparse.ArgumentParser()
    for name in ["api", "admin", "simulator", "ca", "key", "screenshots", "chromium", "chromedriver"]:
        parser.add_argument(f"--{name}", required=True)
    a = parser.parse_args()
    app = f"{a.api}/v1/apps/example"

    # One device per service, registered as each app does.
    status, _ = call(f"{app}/devices", "POST", a.key, f"oldToken=(null)&newToken=<{APNS_TOKEN}>".encode(),
                     "application/x-www-form-urlencoded")
    check(status == 201, f"the iOS registration answered {status}")
    _, key = call(f"{app}/webpush/key", key=a.key)
    tls = ssl.create_default_context(cafile=a.ca)
    status, subscription = call(f"{a.simulator}/subscribe", "POST", body={"vapid": key["publicKey"]},
                                content_type="application/webpush-options+json", context=tls)
    check(status in (200, 201), f"the simulator's push service gave no subscription ({status})")
    status, web = call(f"{app}/devices", "POST", a.key, {"service": "webpush", "subscription": subscription, "locale": "fr-FR"})
    check(status == 201, f"the web registration answered {status} {web}")
    status, android = call(f"{app}/devices", "POST", a.key, {"service": "fcm", "token": FCM_TOKEN})
    check(status == 201, f"the Android registration answered {status} {android}")

    # One notification to every device of the app.
    status, job = call(f"{app}/notifications", "POST", a.key, {"title": "Inbox", "alert": "Hello, every device", "all": True})
    check(status == 202, f"the send answered {status} {job}")

    options = webdriver.ChromeOptions()
    options.binary_location = a.chromium
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1200,1600",
                 "--no-first-run", "--disable-extensions", "--disable-background-networking"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=a.chromedriver), options=options)
    shots = pathlib.Path(a.screenshots)

    def wait(predicate, what, timeout=30):
        try:
            # A list the console re-renders may replace an element between finding and reading it: a stale element
            # is retried like one not there yet (CI saw StaleElementReferenceException on the inbox's entries).
            return WebDriverWait(driver, timeout, poll_frequency=0.2, ignored_exceptions=(StaleElementReferenceException,)).until(
                lambda d: predicate())
        except TimeoutException:
            driver.save_screenshot(str(shots / "inbox-failure.png"))
            fail(f"timed out waiting for {what}")

    try:
        driver.get(a.admin + "/console")
        wait(lambda: driver.find_element(By.ID, "login-app").get_attribute("value") != "", "the app list")
        driver.execute_script("document.getElementById('login-app').value = 'example'")
        driver.find_element(By.ID, "login-key").send_keys(a.key, Keys.ENTER)
        wait(lambda: driver.find_element(By.ID, "app-view").is_displayed(), "the console after login")
        wait(lambda: driver.find_element(By.ID, "tab-inbox").is_displayed(), "the Inbox tab (the server runs the simulator)")
        driver.find_element(By.ID, "tab-inbox").click()

        # The entries as one script reads them, at once: a Refresh clicked while waiting may still be answering and
        # replace the list after it was found (CI saw a stale element here), so nothing is read element by element.
        def snapshot():
            return driver.execute_script("""
                return [...document.querySelectorAll('#inbox-entries .inbox-entry')].map(e => ({
                    service: e.dataset.service, sequence: Number(e.dataset.sequence),
                    content: e.querySelector('.inbox-content').textContent,
                    device: e.querySelector('h3 span').title, text: e.innerText }));""")

        def three():
            now = snapshot()
            if len(now) < 3:
                driver.find_element(By.ID, "inbox-refresh").click()
                return False
            return now
        listed = wait(three, "the three notifications in the inbox")
        shown = {e["service"]: e for e in listed}
        check(set(shown) == {"apns", "webpush", "fcm"} and len(listed) == 3, f"entries: {[e['text'][:80] for e in listed]}")
        sequences = [e["sequence"] for e in listed]
        check(sequences == sorted(sequences, reverse=True), f"newest first: {sequences}")

        def content(service):
            return json.loads(shown[service]["content"])
        apns = content("apns")
        check(apns == {"aps": {"alert": {"title": "Inbox", "body": "Hello, every device"}}}, f"APNs payload {apns}")
        check(APNS_TOKEN in shown["apns"]["device"], "the APNs token")
        web_message = content("webpush")
        check(web_message.get("title") == "Inbox" and web_message.get("body") == "Hello, every device",
              f"the browser's decrypted message {web_message}")
        check("TTL" in shown["webpush"]["text"] and "Urgency" in shown["webpush"]["text"], f"Web Push headers: {shown['webpush']['text']}")
        check(web["endpoint"] == shown["webpush"]["device"], "the web device is named by its endpoint")
        fcm = content("fcm")
        check(fcm.get("token") == FCM_TOKEN and fcm.get("notification") == {"title": "Inbox", "body": "Hello, every device"},
              f"the Android message {fcm}")
        driver.save_screenshot(str(shots / "inbox.png"))

        # One service only, then Clear.
        driver.execute_script("document.getElementById('i-service').value = 'fcm'")
        driver.find_element(By.ID, "inbox-refresh").click()
        wait(lambda: [e["service"] for e in snapshot()] == ["fcm"], "only the FCM entry")
        driver.find_element(By.ID, "inbox-clear").click()
        wait(lambda: snapshot() == [] and "Nothing received yet" in driver.find_element(By.ID, "inbox-status").text,
             "an empty inbox after Clear")
        status, page = call(f"{a.admin}/v1/apps/example/inbox", key=a.key)
        check(status == 200 and page["entries"] == [], f"the API after Clear: {status} {page}")
    finally:
        driver.quit()
    print("console inbox: the three notifications shown as decoded, newest first; Clear empties it")


if __name__ == "__main__":
    main()
