#!/usr/bin/env python3
"""The console's browser test (run by Tests/console/console.sh): headless Debian chromium over WebDriver.

Flow: register one device over the API; log in with the keyboard; see "1 recipient"; compose, preview and send
to all (confirmed with Enter); watch the job complete; find the notification in the simulator's record; find
the device with its installation fields; a hostile reason string inserted into the store shows as text; send a
body per language to two devices of different locales (each gets its language, the other the default); schedule
a send at a time; build an audience clause by clause (a `tags.NAME` clause among them) with its live count and
send it at a local time (the job's waves shown); cancel a scheduled job; Web Push (issue #39): register a
subscription minted by the simulator's Web Push service, see the device as a web device (its endpoint shortened),
the preview's web payload beside the APNs one (and why a silent push is not sent to web devices), and the
recipient count per service; log out, log in to an app without Web Push and see neither, then (issue #40) an FCM
device registered: its count per service and the device shown as FCM; log out. Fields that do not apply are
hidden, not greyed: the target fields of other targets, the times of other "When"s, the alert fields of a silent
push, the per-language rows without a body.
Also: Tab order through the login and compose controls, every control labelled, no CSP violation, the key only
in sessionStorage (no cookie, not in the URL). Each failure prints one line and exits 1."""
import argparse
import json
import pathlib
import sqlite3
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

TOKEN = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
HOSTILE = '<img src=x onerror="window.__pwned=1">Unregistered</b>'


def fail(message):
    print(f"console: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


class Console:
    def __init__(self, args):
        self.args = args
        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1200,1400",
                     "--no-first-run", "--disable-extensions", "--disable-background-networking"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # An explicit driver path: selenium-manager never runs (and never downloads anything).
        self.driver = webdriver.Chrome(service=Service(executable_path=args.chromedriver), options=options)
        self.shots = pathlib.Path(args.screenshots)

    def api(self, method, path, key, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.args.base + path, data=data, method=method,
                                         headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def wait(self, predicate, what, timeout=20):
        try:
            # A stale element (the console re-rendered what was found) is retried like one not there yet.
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)).until(
                lambda d: predicate())
        except TimeoutException:
            fail(f"timed out waiting for {what}")

    def click(self, selector, what, timeout=20):
        """Clicks the element `selector` finds once it is there; again if the page re-rendered it between the find
        and the click (a list whose fetch answers late replaces its buttons, leaving a stale element)."""
        def attempt():
            try:
                self.driver.find_element(By.CSS_SELECTOR, selector).click()
                return True
            except StaleElementReferenceException:
                return False
        self.wait(attempt, what, timeout)

    def shown(self, element_id):
        return self.by_id(element_id).is_displayed()

    def only_shown(self, ids, what):
        """Of `ids`, exactly those named in what's value are displayed (the others hidden, not merely disabled)."""
        wanted = set(what)
        self.wait(lambda: {i for i in ids if self.shown(i)} == wanted,
                  f"only {sorted(wanted)} shown of {ids} (shown: {sorted(i for i in ids if self.shown(i))})")

    def recorded(self, token, match):
        """The simulator's recorded notification to `token` whose payload `match` accepts, or None."""
        path = pathlib.Path(self.args.record)
        if not path.exists():
            return None
        for line in path.read_text().splitlines():
            item = json.loads(line)
            if item.get("service") == "webpush":  # a Web Push message: no token, an encrypted body
                continue
            payload = item["payload"] if isinstance(item["payload"], dict) else json.loads(item["payload"])
            if item["token"] == token and match(payload):
                return payload
        return None

    def text(self, element_id):
        return self.by_id(element_id).text

    def json_shown(self, element_id, expected):
        """The element's text when it is JSON equal to `expected`, else False (not yet, or not JSON)."""
        text = self.text(element_id)
        try:
            return json.loads(text) == expected and text
        except ValueError:
            return False

    def active_id(self):
        return self.driver.execute_script("return document.activeElement && document.activeElement.id")

    def tab_order(self, start_id, expected):
        """Focus start_id, press Tab, and expect focus to visit `expected` in order."""
        self.driver.execute_script("document.getElementById(arguments[0]).focus()", start_id)
        seen = []
        for _ in expected:
            self.driver.switch_to.active_element.send_keys(Keys.TAB)
            seen.append(self.active_id())
        check(seen == expected, f"Tab order from #{start_id} is {seen}, expected {expected}")

    def screenshot(self, name):
        self.driver.save_screenshot(str(self.shots / f"{name}.png"))

    def no_markup_from_data(self, where):
        images = self.driver.execute_script("return document.querySelectorAll('img').length")
        pwned = self.driver.execute_script("return window.__pwned === undefined ? null : window.__pwned")
        check(images == 0 and pwned is None, f"{where}: a data string became markup (img elements: {images}, __pwned: {pwned})")

    def unlabelled_controls(self):
        return self.driver.execute_script("""
            return [...document.querySelectorAll('input, select, textarea')].filter((c) =>
              !(c.id && document.querySelector(`label[for="${c.id}"]`)) && !c.getAttribute('aria-label')
            ).map((c) => c.id || c.name || c.outerHTML);""")

    def csp_violations(self):
        return [entry["message"] for entry in self.driver.get_log("browser")
                if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]]

    def run(self):
        a = self.args
        d = self.driver
        # (1) one device over the API, with the registration key (as the app would).
        status, device = self.api("POST", f"/v1/apps/{a.app}/devices", a.registration_key,
                                  {"token": TOKEN, "channels": ["news"], "environment": "development"})
        check(status == 201, f"registering the device answered {status} {device}")

        # (2) log in, with the keyboard only.
        d.get(a.base + "/console")
        self.wait(lambda: self.by_id("login-app").get_attribute("value") == a.app, "the app list from /healthz/details")
        check(self.active_id() == "login-app", f"focus starts on the app selector, not #{self.active_id()}")
        self.tab_order("login-app", ["login-key", "login-submit"])
        check(self.unlabelled_controls() == [], f"unlabelled controls: {self.unlabelled_controls()}")
        self.screenshot("login")
        key_field = self.by_id("login-key")
        key_field.send_keys("not-a-key", Keys.ENTER)
        self.wait(lambda: "Login failed" in self.text("login-error"), "a refused key's message")
        key_field.clear()
        key_field.send_keys(a.send_key, Keys.ENTER)
        self.wait(lambda: self.by_id("app-view").is_displayed(), "the console after login")
        check(self.text("current-app") == a.app, "the header names the app")
        check(d.execute_script("return sessionStorage.getItem('pushprovider.key')") == a.send_key, "the key is in sessionStorage")
        check(d.execute_script("return document.cookie") == "", "no cookie")
        check(d.get_cookies() == [], "no cookie in the browser")
        check(a.send_key not in d.current_url, "the key is not in the URL")
        check(d.execute_script("return localStorage.length") == 0, "nothing in localStorage")

        # (3) the recipient count for "all".
        self.wait(lambda: self.text("recipients") == "1 recipient", "“1 recipient”")

        # Fields that do not apply are hidden: another target's fields, another "When"'s times, the per-language
        # rows while there is no body.
        targets = ["c-channel", "c-tokens", "audience-builder"]
        whens = ["w-at-date", "w-at-time", "w-time", "w-date"]
        self.only_shown(targets + whens + ["c-locales"], [])
        for radio, field in [("t-channel", "c-channel"), ("t-tokens", "c-tokens"), ("t-audience", "audience-builder"), ("t-all", None)]:
            self.by_id(radio).click()
            self.only_shown(targets, [field] if field else [])
        for radio, fields in [("w-at", ["w-at-date", "w-at-time"]), ("w-local", ["w-time", "w-date"]), ("w-now", [])]:
            self.by_id(radio).click()
            self.only_shown(whens, fields)
        self.wait(lambda: self.text("recipients") == "1 recipient", "“1 recipient” again")

        # Keyboard: Tab through the compose controls (disabled target fields are skipped).
        self.tab_order("c-title", ["c-body", "c-badge", "c-sound", "c-silent", "c-data", "t-all", "w-now", "send"])
        check(self.unlabelled_controls() == [], f"unlabelled controls: {self.unlabelled_controls()}")

        # (4) compose: a live preview from the server's builder, with its byte count.
        self.by_id("c-title").send_keys("Console test")
        self.by_id("c-body").send_keys("Hello from the console")
        self.by_id("c-badge").send_keys("1")
        self.by_id("c-sound").send_keys("default")
        self.by_id("c-data").send_keys('{"photoTitle": "Nebula"}')
        expected = {"aps": {"alert": {"title": "Console test", "body": "Hello from the console"}, "badge": 1, "sound": "default"},
                    "photoTitle": "Nebula"}

        def preview_matches():
            return self.json_shown("preview-payload", expected)
        payload_text = self.wait(preview_matches, "the payload preview")
        size = len(payload_text.encode())
        check(self.text("preview-bytes") == f"{size} / 4096 bytes", f"byte count {self.text('preview-bytes')!r}, payload is {size}")
        check("apns-push-type\nalert" in self.text("preview-headers") or "alert" in self.text("preview-headers"), "headers shown")
        # A body opens the per-language rows. Silent: the alert fields are hidden (not greyed) and not sent, so the
        # preview is content-available with the custom data; unticked, they are back as they were.
        alert_fields = ["c-title", "c-body", "c-badge", "c-sound", "c-locales"]
        self.only_shown(alert_fields, alert_fields)
        self.by_id("c-silent").click()
        self.only_shown(alert_fields + ["c-data"], ["c-data"])
        self.wait(lambda: self.text("preview-payload") and json.loads(self.text("preview-payload")) ==
                  {"aps": {"content-available": 1}, "photoTitle": "Nebula"}, "the silent preview without the hidden fields")
        check(self.text("preview-error") == "", f"silent preview error {self.text('preview-error')!r}")
        self.by_id("c-silent").click()
        self.only_shown(alert_fields, alert_fields)
        self.wait(lambda: preview_matches(), "the preview again")
        self.screenshot("compose")

        # Enter in a field submits; "all" asks for confirmation first, with focus on its button; Enter confirms.
        self.by_id("c-title").send_keys(Keys.ENTER)
        self.wait(lambda: self.by_id("confirm-all").is_displayed(), "the confirmation for all devices")
        check("all 1 device" in self.text("confirm-text"), f"confirmation text {self.text('confirm-text')!r}")
        check(self.active_id() == "confirm-send", f"focus on the confirm button, not #{self.active_id()}")
        self.screenshot("confirm")
        d.switch_to.active_element.send_keys(Keys.ENTER)

        # (5) the job's live progress until it completes.
        self.wait(lambda: self.by_id("view-jobs").is_displayed(), "the jobs view after sending")
        self.wait(lambda: self.text("job-state") == "completed", "the job to complete", timeout=60)
        job_id = self.text("job-id")
        self.wait(lambda: self.text("job-numbers").startswith("1 / 1 done"), "1 / 1 done")
        check("accepted" in self.text("job-chart"), "the outcome chart shows accepted")
        self.wait(lambda: job_id in self.text("jobs-table"), "the job in the list")
        self.screenshot("job")

        # (6) the simulator recorded it.
        def recorded():
            path = pathlib.Path(a.record)
            if not path.exists():
                return None
            for line in path.read_text().splitlines():
                item = json.loads(line)
                if item.get("service") == "webpush":
                    continue
                payload = item["payload"] if isinstance(item["payload"], dict) else json.loads(item["payload"])
                if item["token"] == TOKEN and payload == expected:
                    return item
            return None
        item = self.wait(recorded, "the notification in the simulator's record")
        check(item["topic"] == "com.example.app" and item["pushType"] == "alert", f"recorded headers {item}")
        check(item.get("collapseId") == job_id, f"collapse id {item.get('collapseId')} is the job id {job_id}")

        # Devices: find the token, its channels and last delivery.
        self.by_id("tab-devices").click()
        self.by_id("d-token").send_keys(TOKEN, Keys.ENTER)
        self.wait(lambda: self.by_id("device-result").is_displayed(), "the device")
        # The job went to all devices: under the default delivery log its accepted notification is counted per job,
        # not recorded per device, and the view says so.
        facts = self.text("device-facts")
        check("news" in facts and "development" in facts and "none recorded" in facts, f"device facts {facts!r}")
        check("counted per job" in self.text("device-note"), "the device view explains what is recorded per device")

        # A hostile reason string, inserted into the store, is text everywhere it reaches the page.
        now = int(time.time() * 1000)
        other = "ab" * 32
        with sqlite3.connect(a.database, timeout=30) as db:
            db.execute("""INSERT INTO delivery_log (app, apns_id, token, status, reason, attempts, possibly_duplicated,
                          first_attempt_ms, finished_ms, broadcast_id, kind) VALUES (?, ?, ?, 400, ?, 1, 0, ?, ?, ?, 'rejected')""",
                       (a.app, "00000000-0000-4000-8000-000000000001", TOKEN, HOSTILE, now, now + 1000, job_id))
            db.execute("""INSERT INTO broadcast_outcomes (broadcast_id, token, kind, status, reason, attempts, pruned,
                          possibly_duplicated) VALUES (?, ?, 'rejected', 400, ?, 1, 0, 0)""", (job_id, other, HOSTILE))
            db.execute("""INSERT INTO broadcast_counts (broadcast_id, shard, kind, reason, devices, retried,
                          possibly_duplicated, pruned) VALUES (?, 0, 'rejected', ?, 1, 0, 0, 0)""", (job_id, HOSTILE))
        self.by_id("d-find").click()
        self.wait(lambda: HOSTILE in self.text("device-facts"), "the hostile reason as text in the device view")
        self.no_markup_from_data("devices view")
        self.screenshot("devices")
        self.by_id("tab-jobs").click()
        self.click(f"button[aria-label='Show job {job_id}']", "the job's Show button")
        self.wait(lambda: HOSTILE in self.text("job-chart"), "the hostile reason as text in the outcome chart")
        self.no_markup_from_data("job chart")

        # Audiences: a second device with installation fields (registered by the backend's send key, which may
        # name a user); the device view shows them; the builder adds clauses one by one and the count follows.
        second = "cd" * 32
        status, body = self.api("POST", f"/v1/apps/{a.app}/devices", a.send_key,
                                {"token": second, "user": "carol", "locale": "de-DE", "appVersion": "2.10",
                                 "timeZone": "Europe/Berlin", "tags": {"plan": "pro"}, "environment": "production"})
        check(status == 201, f"registering the second device answered {status} {body}")
        self.by_id("tab-devices").click()
        self.by_id("d-token").clear()
        self.by_id("d-token").send_keys(second, Keys.ENTER)
        self.wait(lambda: "Europe/Berlin" in self.text("device-facts") and "carol" in self.text("device-facts"), "the device's installation fields")
        check("de-DE" in self.text("device-facts") and "2.10" in self.text("device-facts"), f"device facts {self.text('device-facts')!r}")
        # A body per language, to both devices as listed tokens: the German device (de-DE) gets the "de" row's
        # body, the other (no locale) the default. A row added and removed again is not sent.
        self.by_id("tab-compose").click()
        self.by_id("t-tokens").click()
        self.by_id("c-tokens").send_keys(f"{TOKEN}\n{second}")
        self.wait(lambda: self.text("recipients") == "2 recipients", "“2 recipients” for the listed tokens")
        body = self.by_id("c-body")
        body.clear()
        self.only_shown(["c-locales"], [])
        body.send_keys("Good morning")
        self.only_shown(["c-locales"], ["c-locales"])
        self.by_id("l-add").click()
        rows = d.find_elements(By.CSS_SELECTOR, "#locale-rows .locale-row")
        check(len(rows) == 1, f"one language row after Add, not {len(rows)}")
        check(self.active_id() == rows[0].find_element(By.CSS_SELECTOR, ".l-locale").get_attribute("id"), "focus on the new row's language")
        d.switch_to.active_element.send_keys("de")
        rows[0].find_element(By.CSS_SELECTOR, ".l-text").send_keys("Guten Morgen")
        self.by_id("l-add").click()
        d.switch_to.active_element.send_keys("fr")
        d.find_elements(By.CSS_SELECTOR, "#locale-rows .l-text")[1].send_keys("Bonjour")
        self.wait(lambda: "Body for de" in self.text("preview-variants") and "Body for fr" in self.text("preview-variants")
                  and "Guten Morgen" in self.text("preview-variants"), "the preview of each language's payload")
        check(self.unlabelled_controls() == [], f"unlabelled controls: {self.unlabelled_controls()}")
        self.screenshot("languages")
        d.find_elements(By.CSS_SELECTOR, "#locale-rows .l-remove")[1].click()
        self.wait(lambda: "Body for fr" not in self.text("preview-variants") and "Body for de" in self.text("preview-variants"),
                  "the removed row gone from the preview")
        check(len(d.find_elements(By.CSS_SELECTOR, "#locale-rows .locale-row")) == 1, "one row after Remove")
        # A locale not in the server's canonical form: the server's message, nothing sent.
        self.by_id("l-add").click()
        d.switch_to.active_element.send_keys("de_at")
        d.find_elements(By.CSS_SELECTOR, "#locale-rows .l-text")[1].send_keys("Servus")
        self.wait(lambda: "canonical" in self.text("preview-error"), "the server's message for a locale not in canonical form")
        d.find_elements(By.CSS_SELECTOR, "#locale-rows .l-remove")[1].click()
        self.wait(lambda: self.text("preview-error") == "" and "Body for de" in self.text("preview-variants"), "the preview back")
        self.by_id("send").click()
        self.wait(lambda: self.by_id("view-jobs").is_displayed(), "the jobs view after the per-language send")
        self.wait(lambda: self.text("job-state") == "completed", "the per-language job to complete", timeout=60)
        body_of = lambda p: (p.get("aps", {}).get("alert") or {}).get("body") if isinstance(p.get("aps", {}).get("alert"), dict) else p.get("aps", {}).get("alert")
        german = self.wait(lambda: self.recorded(second, lambda p: body_of(p) in ("Guten Morgen", "Good morning", "Bonjour")),
                           "the per-language notification to the German device")
        check(body_of(german) == "Guten Morgen", f"the de-DE device got {german}, not its language")
        default = self.wait(lambda: self.recorded(TOKEN, lambda p: body_of(p) in ("Guten Morgen", "Good morning", "Bonjour")),
                            "the per-language notification to the device without a locale")
        check(body_of(default) == "Good morning", f"the device without a locale got {default}, not the default")

        # At a time: the API's `at`, from a date and time in the browser's zone; the job waits, then is cancelled.
        self.by_id("tab-compose").click()
        self.by_id("w-at").click()
        self.only_shown(whens, ["w-at-date", "w-at-time"])
        self.by_id("w-at-date").send_keys("12242099")
        at_time = self.by_id("w-at-time")
        at_time.send_keys("0930AM")
        expected_at = d.execute_script("return new Date('2099-12-24T09:30').toISOString().replace('.000Z', 'Z')")
        self.by_id("send").click()
        self.wait(lambda: self.by_id("view-jobs").is_displayed(), "the jobs view after scheduling")
        self.wait(lambda: self.text("job-state") == f"pending (scheduled for {expected_at})", f"the job pending until {expected_at}")
        scheduled_id = self.text("job-id")
        status, job = self.api("GET", f"/v1/apps/{a.app}/notifications/{scheduled_id}", a.send_key)
        check(status == 200 and job.get("at") == expected_at and job.get("state") == "pending", f"the scheduled job {job}")
        self.screenshot("scheduled")
        self.by_id("job-cancel").click()
        self.wait(lambda: self.text("job-state").startswith("cancelled"), "the scheduled job cancelled")
        self.by_id("tab-compose").click()
        self.by_id("w-now").click()

        self.by_id("t-audience").click()
        self.wait(lambda: self.text("recipients") == "Name a user or add a clause.", "the empty audience's hint")
        # tags.NAME: its name field is shown only for it; the clause it adds counts the device tagged plan=pro.
        self.only_shown(["a-tag"], [])
        Select(self.by_id("a-field")).select_by_value("tags")
        self.only_shown(["a-tag"], ["a-tag"])
        self.by_id("a-tag").send_keys("plan")
        Select(self.by_id("a-op")).select_by_value("=")
        self.by_id("a-value").send_keys("pro")
        self.by_id("a-add").click()
        check(self.by_id("a-clauses").get_attribute("value") == "tags.plan = pro", f"the tag clause {self.by_id('a-clauses').get_attribute('value')!r}")
        self.wait(lambda: self.text("recipients") == "1 recipient", "“1 recipient” for tags.plan = pro")
        self.by_id("a-clauses").clear()
        self.by_id("a-value").send_keys("free")
        self.by_id("a-add").click()
        self.wait(lambda: self.text("recipients") == "0 recipients", "“0 recipients” for tags.plan = free")
        self.by_id("a-clauses").clear()
        Select(self.by_id("a-field")).select_by_value("appVersion")
        self.only_shown(["a-tag"], [])
        Select(self.by_id("a-op")).select_by_value(">=")
        self.by_id("a-value").send_keys("2.9")
        self.by_id("a-add").click()
        check(self.by_id("a-clauses").get_attribute("value") == "appVersion >= 2.9", "the clause added")
        self.wait(lambda: self.text("recipients") == "1 recipient", "“1 recipient” for appVersion >= 2.9 (2.10 in version order)")
        Select(self.by_id("a-field")).select_by_value("locale")
        Select(self.by_id("a-op")).select_by_value("=")
        self.by_id("a-value").send_keys("fr*")
        self.by_id("a-add").click()
        self.wait(lambda: self.text("recipients") == "0 recipients", "“0 recipients” once locale = fr* is added")
        clauses = self.by_id("a-clauses")
        clauses.clear()
        clauses.send_keys("appVersion >= 2.9\nlocale = de*")
        self.wait(lambda: self.text("recipients") == "1 recipient", "“1 recipient” for the edited clauses")
        clauses.send_keys("\nlocale ~ de")
        self.wait(lambda: "where[2]" in self.text("recipients"), "the server's message naming the bad clause")
        clauses.clear()
        clauses.send_keys("locale = de*")
        self.by_id("a-user").send_keys("carol")
        self.wait(lambda: self.text("recipients") == "1 recipient", "“1 recipient” for carol's German devices")
        check(self.unlabelled_controls() == [], f"unlabelled controls: {self.unlabelled_controls()}")
        self.screenshot("audience")
        # At 09:00 local time: one job, a wave per UTC offset, shown with the job.
        self.by_id("w-local").click()
        time_field = self.by_id("w-time")
        check(time_field.is_displayed() and time_field.get_attribute("value") == "09:00", "the local time field, 09:00")
        self.only_shown(["w-skip"], [])
        self.by_id("w-date").send_keys("12242099")
        self.only_shown(["w-skip"], ["w-skip"])
        self.by_id("send").click()
        self.wait(lambda: self.by_id("view-jobs").is_displayed(), "the jobs view after sending at local time")
        self.wait(lambda: "local time" in self.text("job-state") and "waves" in self.text("job-state"), "the local-time job's state")
        self.wait(lambda: self.by_id("job-waves").is_displayed() and "Europe/Berlin" not in self.text("waves-table")
                  and "UTC+01:00" in self.text("waves-table"), "the waves, Berlin's among them")
        local_id = self.text("job-id")
        status, job = self.api("GET", f"/v1/apps/{a.app}/notifications/{local_id}", a.send_key)
        check(status == 200 and job.get("localTime") == "09:00 on 2099-12-24" and len(job.get("waves", [])) > 30, f"the local-time job {job}")
        self.screenshot("local-time")
        self.by_id("job-cancel").click()
        self.wait(lambda: self.text("job-state").startswith("cancelled"), "the local-time job cancelled")
        self.by_id("tab-compose").click()
        self.by_id("w-now").click()
        self.by_id("t-all").click()
        self.by_id("tab-jobs").click()

        # Cancel: a scheduled job, from the jobs view; a cancelled job's GET is 404 job_cancelled.
        status, job = self.api("POST", f"/v1/apps/{a.app}/notifications", a.send_key,
                               {"id": "console-later", "all": True, "alert": "later", "at": "2099-01-01T00:00:00Z"})
        check(status == 202, f"scheduling a job answered {status} {job}")
        self.by_id("jobs-refresh").click()
        self.click("button[aria-label='Show job console-later']", "the scheduled job")
        self.wait(lambda: self.text("job-state").startswith("pending"), "the scheduled job's state")
        self.by_id("job-cancel").click()
        self.wait(lambda: self.text("job-state") == "cancelled", "the job to be cancelled")
        status, body = self.api("GET", f"/v1/apps/{a.app}/notifications/console-later", a.send_key)
        check(status == 404 and body["error"]["code"] == "job_cancelled", f"GET of the cancelled job: {status} {body}")

        # Apps: devices per environment, credentials and days to expiry.
        self.by_id("tab-apps").click()
        self.wait(lambda: "development\n1" in self.text("device-counts") or "development 1" in self.text("device-counts"), "the device counts")
        self.wait(lambda: "Days to expiry" in self.text("health"), "the certificate's days to expiry")
        self.screenshot("apps")

        self.web_push()
        self.unified_push()

        violations = self.csp_violations()
        check(violations == [], f"CSP violations: {violations}")

        # Log out: the key is gone.
        self.by_id("logout").click()
        self.wait(lambda: self.by_id("login-view").is_displayed(), "the login form after logout")
        check(d.execute_script("return sessionStorage.getItem('pushprovider.key')") is None, "the key is removed on logout")
        self.without_web_push()
        print("console: every step passed")

    def web_push(self):
        """Issue #39: a web device registered through the API with a subscription the simulator's Web Push service
        minted; the device view, the preview per service and the counts per service."""
        a = self.args
        d = self.driver
        subscription = json.loads(pathlib.Path(a.web_subscription).read_text())
        status, web = self.api("POST", f"/v1/apps/{a.app}/devices", a.registration_key,
                               {"service": "webpush", "subscription": subscription, "channels": ["news"], "locale": "de-DE"})
        check(status == 201 and web.get("service") == "webpush", f"registering the web device answered {status} {web}")
        endpoint = subscription["endpoint"]
        # Devices: the web device says Web Push and shows its endpoint shortened (whole in its title); the APNs
        # device says APNs and has no endpoint.
        self.by_id("tab-devices").click()
        self.by_id("d-token").clear()
        self.by_id("d-token").send_keys(web["token"], Keys.ENTER)
        self.wait(lambda: "Web Push" in self.text("device-facts"), "the web device shown as Web Push")
        facts = self.text("device-facts")
        shown = d.find_element(By.CSS_SELECTOR, f"#device-facts span[title='{endpoint}']").text
        check(shown.startswith("https://127.0.0.1:") and shown.endswith("…") and len(shown) < len(endpoint),
              f"the endpoint shortened: {shown!r} for {endpoint!r}")
        check("Endpoint" in facts and "de-DE" in facts, f"web device facts {facts!r}")
        self.screenshot("web-device")
        # The same device found by its endpoint as the browser gives it, in another spelling (scheme in capitals,
        # the default port written out): the server keys the canonical form.
        self.by_id("d-token").clear()
        respelled = "HTTPS://" + endpoint[len("https://"):]
        self.by_id("d-token").send_keys(respelled, Keys.ENTER)
        self.wait(lambda: web["token"] in self.text("device-facts") and "Web Push" in self.text("device-facts")
                  and not self.text("device-error"), "the web device found by its endpoint")
        self.by_id("d-token").clear()
        self.by_id("d-token").send_keys(TOKEN, Keys.ENTER)
        self.wait(lambda: TOKEN in self.text("device-facts") and "APNs" in self.text("device-facts"), "the APNs device shown as APNs")
        check("Endpoint" not in self.text("device-facts"), "an APNs device has no endpoint")

        # Compose: the web payload beside the APNs one, from the server's mapping; each language's too.
        self.by_id("tab-compose").click()
        self.by_id("t-all").click()
        title, body = self.by_id("c-title"), self.by_id("c-body")
        title.clear()
        title.send_keys("Web test")
        body.clear()
        body.send_keys("Hello browsers")
        if not d.find_elements(By.CSS_SELECTOR, "#locale-rows .locale-row"):
            self.by_id("l-add").click()
            d.switch_to.active_element.send_keys("de")
        german = d.find_elements(By.CSS_SELECTOR, "#locale-rows .l-text")[0]
        german.clear()
        german.send_keys("Hallo Browser")
        data = json.loads(self.by_id("c-data").get_attribute("value") or "{}")
        badge = self.by_id("c-badge").get_attribute("value")
        sound = self.by_id("c-sound").get_attribute("value")
        expected = {"id": "00000000-0000-0000-0000-000000000000", "title": "Web test", "body": "Hello browsers"}
        if sound:
            expected["sound"] = sound
        if badge:
            expected["badge"] = int(badge)
        if data:
            expected["data"] = data

        def web_matches():
            return self.json_shown("preview-web-payload", expected)
        self.wait(lambda: self.shown("preview-web") and web_matches(), f"the web payload {expected} in the preview")
        check(json.loads(self.text("preview-payload"))["aps"]["alert"]["body"] == "Hello browsers", "the APNs payload beside it")
        web_text = self.text("preview-web-payload")
        check(self.text("preview-web-form") == f"{len(web_text.encode())} bytes, service-worker form",
              f"the web payload's size and form {self.text('preview-web-form')!r}")
        self.wait(lambda: "Web body for de" in self.text("preview-web-variants") and "Hallo Browser" in self.text("preview-web-variants"),
                  "the German web payload")
        self.screenshot("web-preview")
        # A silent push: no web payload, the reason instead.
        self.by_id("c-silent").click()
        self.wait(lambda: self.text("preview-web-form").startswith("Not sent to web devices: Web Push has no silent push")
                  and not self.shown("preview-web-payload"), "the silent push's reason for web devices")
        self.by_id("c-silent").click()
        self.wait(web_matches, "the web payload again")

        # Counts per service: all devices (2 APNs, 1 web), a channel (news: the first APNs device and the web one),
        # an audience (locale = de*: the German APNs device and the web one).
        self.wait(lambda: self.text("recipients") == "3 recipients" and self.shown("recipients-by-service")
                  and self.text("recipients-by-service") == "APNs: 2 · Web Push: 1", "the counts per service for all devices")
        self.by_id("t-channel").click()
        self.by_id("c-channel").send_keys("news")
        self.wait(lambda: self.text("recipients") == "2 recipients" and self.text("recipients-by-service") == "APNs: 1 · Web Push: 1",
                  "the counts per service for the news channel")
        self.by_id("c-channel").clear()
        self.by_id("t-audience").click()
        self.by_id("a-user").clear()
        clauses = self.by_id("a-clauses")
        clauses.clear()
        clauses.send_keys("locale = de*")
        self.wait(lambda: self.text("recipients") == "2 recipients" and self.text("recipients-by-service") == "APNs: 1 · Web Push: 1",
                  "the counts per service for locale = de*")
        self.screenshot("web-counts")
        # Listed tokens are not split.
        self.by_id("t-tokens").click()
        self.only_shown(["recipients-by-service"], [])
        self.by_id("t-all").click()

    def unified_push(self):
        """UnifiedPush beside the other services: the Apps tab's VAPID key and exempt hosts, the preview of the JSON
        the app receives (a silent push too, which Web Push skips), a device registered with an endpoint of the
        simulator's distributor counted and shown as UnifiedPush."""
        a = self.args
        self.by_id("tab-apps").click()
        self.wait(lambda: "UnifiedPush credentials" in self.text("health") and "VAPID key loaded" in self.text("health")
                  and "127.0.0.1:" in self.text("health"), "the UnifiedPush key and exempt hosts in the Apps tab")
        self.by_id("tab-compose").click()
        self.by_id("t-all").click()
        self.wait(lambda: self.shown("preview-unifiedpush") and self.text("preview-unifiedpush-payload")
                  and json.loads(self.text("preview-unifiedpush-payload")).get("body") == "Hello browsers",
                  "the UnifiedPush message in the preview")
        up_text = self.text("preview-unifiedpush-payload")
        check(self.text("preview-unifiedpush-size").startswith(f"{len(up_text.encode())} bytes, the JSON the app receives"),
              f"the UnifiedPush message's size {self.text('preview-unifiedpush-size')!r}")
        self.wait(lambda: "UnifiedPush message for de" in self.text("preview-unifiedpush-variants"), "the German UnifiedPush message")
        # A silent push: not sent to web devices, but sent to UnifiedPush ones (no title: the app's data message).
        self.by_id("c-silent").click()
        self.wait(lambda: self.text("preview-web-form").startswith("Not sent to web devices")
                  and self.shown("preview-unifiedpush-payload")
                  and "title" not in json.loads(self.text("preview-unifiedpush-payload") or "{}")
                  and json.loads(self.text("preview-unifiedpush-payload") or "{}").get("id"), "the silent push sent to UnifiedPush devices")
        self.screenshot("unifiedpush-preview")
        self.by_id("c-silent").click()
        # A device with an endpoint of the simulator's distributor (discovery passes: its host:port is exempt).
        subscription = json.loads(pathlib.Path(a.unifiedpush_subscription).read_text())
        status, up = self.api("POST", f"/v1/apps/{a.app}/devices", a.registration_key,
                              {"service": "unifiedpush", "subscription": {"endpoint": subscription["endpoint"], "keys": subscription["keys"]}})
        check(status == 201 and up.get("service") == "unifiedpush", f"registering the UnifiedPush device answered {status} {up}")
        self.by_id("t-channel").click()
        self.by_id("t-all").click()
        self.wait(lambda: self.text("recipients") == "4 recipients"
                  and self.text("recipients-by-service") == "APNs: 2 · Web Push: 1 · UnifiedPush: 1", "the counts per service with a UnifiedPush device")
        self.by_id("tab-devices").click()
        self.by_id("d-token").clear()
        self.by_id("d-token").send_keys(up["token"], Keys.ENTER)
        self.wait(lambda: "UnifiedPush" in self.text("device-facts") and "Endpoint" in self.text("device-facts"), "the device shown as UnifiedPush")
        self.by_id("tab-compose").click()

    def without_web_push(self):
        """An app without Web Push: no web preview and no counts per service (hidden, not greyed) until it has an
        FCM device."""
        a = self.args
        Select(self.by_id("login-app")).select_by_value(a.plain_app)
        self.by_id("login-key").send_keys(a.plain_key, Keys.ENTER)
        self.wait(lambda: self.by_id("app-view").is_displayed() and self.text("current-app") == a.plain_app, "the app without Web Push")
        self.by_id("t-all").click()
        self.wait(lambda: self.text("preview-payload") != "" and self.text("recipients") == "0 recipients", "its preview and count")
        self.only_shown(["preview-web", "recipients-by-service"], [])
        self.screenshot("no-web-push")
        # Issue #40: an FCM device (registration needs no FCM configuration) is counted per service once the app
        # has one, and the device view says FCM with its registration token shortened (whole in its title).
        fcm_token = "console-" + "f" * 14 + ":APA91b" + "Zx9_-" * 28
        status, fcm = self.api("POST", f"/v1/apps/{a.plain_app}/devices", a.plain_key, {"service": "fcm", "token": fcm_token})
        check(status == 201 and fcm.get("service") == "fcm" and fcm.get("fcmToken") == fcm_token, f"registering the FCM device answered {status} {fcm}")
        self.by_id("t-channel").click()
        self.by_id("t-all").click()
        self.wait(lambda: self.text("recipients") == "1 recipient" and self.shown("recipients-by-service")
                  and self.text("recipients-by-service") == "APNs: 0 · FCM: 1", "the counts per service with an FCM device")
        self.by_id("tab-devices").click()
        self.by_id("d-token").clear()
        self.by_id("d-token").send_keys(fcm["token"], Keys.ENTER)
        self.wait(lambda: "FCM" in self.text("device-facts"), "the FCM device shown as FCM")
        shown = self.driver.find_element(By.CSS_SELECTOR, f"#device-facts span[title='{fcm_token}']").text
        check(shown == fcm_token[:24] + "…", f"the registration token shortened: {shown!r}")
        # Found by the registration token itself (what an Android log shows), not only by its key.
        self.by_id("d-token").clear()
        self.by_id("d-token").send_keys("x", Keys.ENTER)
        self.wait(lambda: "fcmToken" in self.text("device-error"), "a text that is no token refused, naming fcmToken")
        self.by_id("d-token").clear()
        self.by_id("d-token").send_keys(fcm_token, Keys.ENTER)
        self.wait(lambda: fcm["token"] in self.text("device-facts") and "FCM" in self.text("device-facts")
                  and not self.text("device-error"), "the FCM device found by its registration token")
        self.screenshot("fcm-device")
        self.by_id("logout").click()
        self.wait(lambda: self.by_id("login-view").is_displayed(), "the login form after the second logout")

    def close(self):
        self.driver.quit()


def main():
    parser = argparse.ArgumentParser()
    for name in ["base", "app", "plain-app", "plain-key", "web-subscription", "unifiedpush-subscription", "send-key", "registration-key", "database", "record", "screenshots", "chromium", "chromedriver"]:
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    try:
        console = Console(args)
    except Exception as error:  # noqa: BLE001 — one line, then fail
        fail(f"cannot start chromium over WebDriver: {str(error).splitlines()[0] if str(error) else type(error).__name__}")
    try:
        console.run()
    except SystemExit:
        try:
            console.screenshot("failure")
        except Exception:  # noqa: BLE001
            pass
        raise
    finally:
        console.close()


if __name__ == "__main__":
    main()
