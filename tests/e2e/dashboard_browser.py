"""The dashboard in a real browser: loopguardd on a free loopback port, headless Chromium driven
by /usr/bin/chromedriver over W3C WebDriver (plain HTTP, standard library only). The page is
opened first, *then* `loopguard simulate` feeds a swarm; the page must show the swarm, a verdict
and its tool among the top fingerprints without a reload. Run by ctest (e2e.dashboard.browser)
with LOOPGUARDD, LOOPGUARD_CLI and LOOPGUARD_SCREENSHOT set. Every process is stopped by PID."""

import base64
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C web element key

# What the page shows, read in one script: the tests poll this.
PAGE_STATE = """
const q = (s) => Array.from(document.querySelectorAll(s));
const byId = (id) => document.getElementById(id) || {textContent: null, hidden: true};
const tool = (e) => { const t = e.querySelector('.tool'); return t ? t.textContent : null; };
return {
  status: byId('status').textContent,
  login: !byId('login').hidden,
  loginError: byId('login-error').textContent,
  swarms: q('#swarms .name').map((e) => e.textContent),
  title: byId('title').textContent,
  verdicts: q('#verdicts [data-fingerprint]').map((e) => ({fp: e.dataset.fingerprint, tool: tool(e)})),
  top: q('#top [data-fingerprint]').map((e) => ({fp: e.dataset.fingerprint, tool: tool(e)})),
  marker: window.__lgNoReload || null,
  images: document.images.length,
  pwned: window.__pwned || null,
  resources: performance.getEntriesByType('resource').map((r) => r.name),
};
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what, predicate, timeout, interval=0.1):
    """predicate() until it returns something true, or raise naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %g s waiting for %s" % (timeout, what))
        time.sleep(interval)


def stop(proc, group=False):
    """SIGTERM then SIGKILL the process we started (its process group when `group`)."""
    if proc is None or proc.poll() is not None:
        return
    kill = (lambda sig: os.killpg(proc.pid, sig)) if group else (lambda sig: os.kill(proc.pid, sig))
    try:
        kill(signal.SIGTERM)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        kill(signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


class Daemon:
    """loopguardd on 127.0.0.1:<free port> with a fresh database in `work`."""

    def __init__(self, work, token_file=None):
        port_file = os.path.join(work, "port")
        args = [os.environ["LOOPGUARDD"], "--listen", "127.0.0.1:0", "--port-file", port_file,
                "--db", os.path.join(work, "x.db")]
        if token_file:
            args += ["--token-file", token_file]
        self.log_path = os.path.join(work, "loopguardd.log")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)

        def port():
            if self.proc.poll() is not None:
                raise AssertionError("loopguardd exited with %d: %s" % (self.proc.returncode,
                                                                        self.log()))
            try:
                with open(port_file) as f:
                    return int(f.read().strip() or 0)
            except FileNotFoundError:
                return 0
        self.port = wait_until("loopguardd's port file", port, 15, 0.02)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")[-4000:]


class WebDriver:
    """chromedriver on a free loopback port and one Chromium session; W3C commands over HTTP."""

    def __init__(self, work):
        self.session = None
        self.port = free_port()
        # Its own process group: Chromium's processes are stopped with it if the session is not.
        self.proc = subprocess.Popen(
            [CHROMEDRIVER, "--port=%d" % self.port, "--log-path=" + os.path.join(work, "chromedriver.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_until("chromedriver /status", self._ready, 15, 0.1)
        profile = tempfile.mkdtemp(prefix="profile-", dir=work)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": CHROMIUM_ARGS + [
                "--user-data-dir=" + profile, "--window-size=1366,900"]}}}}
        self.session = self._call("POST", "/session", caps, timeout=60)["sessionId"]

    def _ready(self):
        if self.proc.poll() is not None:
            raise AssertionError("chromedriver exited with %d" % self.proc.returncode)
        try:
            return self._call("GET", "/status", timeout=2).get("ready")
        except (OSError, AssertionError):
            return False

    def _call(self, method, path, body=None, timeout=30):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), data=data,
                                     method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read().decode("utf-8"))["value"]
        except urllib.error.HTTPError as e:
            raise AssertionError("WebDriver %s %s: HTTP %d %s" % (
                method, path, e.code, e.read().decode("utf-8", "replace")[:2000]))

    def cmd(self, method, path, body=None, timeout=30):
        return self._call(method, "/session/%s%s" % (self.session, path), body, timeout)

    def open(self, url):
        self.cmd("POST", "/url", {"url": url})

    def run(self, script, *args):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        return self.cmd("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def type(self, css, text):
        element = self.find(css)
        self.cmd("POST", "/element/%s/clear" % element, {})
        self.cmd("POST", "/element/%s/value" % element, {"text": text})

    def click(self, css):
        self.cmd("POST", "/element/%s/click" % self.find(css), {})

    def screenshot(self):
        return base64.b64decode(self.cmd("GET", "/screenshot"))

    def quit(self):
        try:
            if self.session:
                self._call("DELETE", "/session/" + self.session, timeout=20)
        except (OSError, AssertionError):
            pass
        finally:
            stop(self.proc, group=True)


class DashboardBrowserTest(unittest.TestCase):
    def setUp(self):
        for var in ("LOOPGUARDD", "LOOPGUARD_CLI"):
            if not os.environ.get(var):
                self.fail(var + " is not set (ctest sets it)")
        for exe in (CHROMIUM, CHROMEDRIVER):
            if not os.access(exe, os.X_OK):
                self.fail(exe + " is not installed (scripts/setup.sh --all installs it)")
        self.work = tempfile.mkdtemp(prefix="lg-dashboard-")
        self.daemon = None
        self.driver = None

    def tearDown(self):
        try:
            if self.driver:
                self.driver.quit()
        finally:
            if self.daemon:
                stop(self.daemon.proc)
            shutil.rmtree(self.work, ignore_errors=True)

    def state(self):
        return self.driver.run(PAGE_STATE)

    def page_text(self):
        try:
            return self.driver.run("return document.body.innerText")
        except (OSError, AssertionError) as e:
            return "(cannot read the page: %s)" % e

    def wait_page(self, what, predicate, timeout):
        """Poll the page state until predicate(state), and return that state; on timeout fail
        with what the page showed."""
        def check():
            state = self.state()
            return state if predicate(state) else None
        try:
            return wait_until(what, check, timeout, 0.2)
        except AssertionError as e:
            try:
                state = json.dumps(self.state(), indent=1)
            except (OSError, AssertionError) as error:
                state = str(error)
            self.fail("%s\n--- the page showed:\n%s\n--- its state:\n%s\n--- loopguardd:\n%s" % (
                e, self.page_text(), state, self.daemon.log()))

    def simulate(self, swarm, token=None):
        args = [os.environ["LOOPGUARD_CLI"], "simulate", "--daemon",
                "ws://127.0.0.1:%d" % self.daemon.port, "--workers", "6", "--stuck", "4",
                "--rate", "20", "--duration", "3", "--swarm", swarm]
        if token:
            args += ["--token", token]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def start(self, token_file=None):
        self.daemon = Daemon(self.work, token_file)
        self.driver = WebDriver(self.work)
        self.base = "http://127.0.0.1:%d" % self.daemon.port
        self.driver.open(self.base + "/")

    def check_swarm_shown(self, swarm):
        """The swarm, a verdict, and its fingerprint and tool among the top ones; no reload."""
        def shown(s):
            top = {(t["fp"], t["tool"]) for t in s["top"]}
            return (swarm in s["swarms"] and s["title"] == swarm and s["verdicts"]
                    and all(v["fp"] for v in s["verdicts"])
                    and any(v["tool"] and (v["fp"], v["tool"]) in top for v in s["verdicts"]))
        s = self.wait_page("the swarm, a verdict and its top fingerprint", shown, 20)
        self.assertEqual(s["marker"], "set before the swarm", "the page was reloaded")
        self.assertEqual(s["status"], "live")
        for url in s["resources"]:  # nothing fetched from anywhere but the daemon
            self.assertTrue(url.startswith(self.base + "/"), url)
        return s

    def test_shows_a_swarm_fed_after_the_page_opened(self):
        self.start()
        self.wait_page("#status to say live", lambda s: s["status"] == "live", 15)
        s = self.state()
        self.assertEqual(s["swarms"], [])
        self.assertEqual(s["verdicts"], [])
        self.driver.run("window.__lgNoReload = 'set before the swarm'")

        self.simulate("dash-test")
        self.check_swarm_shown("dash-test")

        png = self.driver.screenshot()
        path = os.environ.get("LOOPGUARD_SCREENSHOT") or os.path.join(self.work, "dashboard.png")
        with open(path, "wb") as f:
            f.write(png)
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertGreater(len(png), 10 * 1024, "a blank page? the screenshot is tiny")

    def test_token_login_then_live_and_hostile_names_stay_text(self):
        token = secrets.token_hex(16)
        token_file = os.path.join(self.work, "token")
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(token + "\n")
        self.start(token_file)
        self.wait_page("the login form", lambda s: s["login"], 15)
        self.assertNotEqual(self.state()["status"], "live")

        self.driver.type("#token", "not-" + token)
        self.driver.click("#login-button")
        self.wait_page("a wrong token refused", lambda s: s["loginError"] and s["login"], 10)

        self.driver.type("#token", token)
        self.driver.click("#login-button")
        self.wait_page("#status to say live after login",
                       lambda s: s["status"] == "live" and not s["login"], 15)
        self.driver.run("window.__lgNoReload = 'set before the swarm'")

        hostile = '<img src=x onerror="window.__pwned=1">'
        self.simulate(hostile, token)
        s = self.check_swarm_shown(hostile)
        self.assertEqual(s["images"], 0)
        self.assertIsNone(s["pwned"])


if __name__ == "__main__":
    unittest.main()
