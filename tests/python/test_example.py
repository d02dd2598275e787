"""The Python example (worker-sdk/python/examples/guarded_agent.py) as a user runs it: alone,
and joined to a real loopguardd on a free loopback port with a fresh SQLite file. Run by ctest
(python.example, python.example.daemon, python.example.tls); LOOPGUARDD names the daemon
binary. The TLS test makes a self-signed certificate with the openssl command."""

import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.normpath(
    os.path.join(HERE, "..", "..", "worker-sdk", "python", "examples", "guarded_agent.py"))


def run_example(extra_env=None, timeout=60):
    env = dict(os.environ)
    env.pop("LOOPGUARD_DAEMON", None)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, EXAMPLE], env=env, capture_output=True, text=True,
                          timeout=timeout)


def check_guarded_run(test, out):
    """The example's transcript: nudged, then rejected, then a different course, done."""
    lines = out.splitlines()
    nudge = next(i for i, l in enumerate(lines) if l.endswith(": nudge (exact)"))
    reject = next(i for i, l in enumerate(lines) if l.endswith("before: reject (exact)"))
    test.assertLess(nudge, reject)
    test.assertTrue(any(" search before: allow" in l for l in lines[reject:]))
    test.assertIn("outcome: DONE", lines)


class Daemon:
    """loopguardd on 127.0.0.1:<free port> with a database in `work`; stopped by PID."""

    def __init__(self, binary, work, extra=(), ca_file=None):
        port_file = os.path.join(work, "port")
        self.log = open(os.path.join(work, "loopguardd.log"), "wb")
        self.ca_file = ca_file  # set: the daemon serves TLS (extra has --tls-cert/--tls-key)
        self.proc = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--db", os.path.join(work, "lg.db"),
             "--port-file", port_file, "--checkpoint-interval", "10"] + list(extra),
            stdout=self.log, stderr=subprocess.STDOUT)
        self.port = self._wait_port(port_file, deadline=time.monotonic() + 15)

    def _wait_port(self, port_file, deadline):
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("loopguardd exited with %d" % self.proc.returncode)
            try:
                with open(port_file) as f:
                    text = f.read().strip()
                if text:
                    return int(text)
            except FileNotFoundError:
                pass
            time.sleep(0.02)
        raise RuntimeError("loopguardd did not write its port in time")

    def get(self, path):
        scheme = "https" if self.ca_file else "http"
        url = "%s://127.0.0.1:%d%s" % (scheme, self.port, path)
        context = ssl.create_default_context(cafile=self.ca_file) if self.ca_file else None
        with urllib.request.urlopen(url, timeout=5, context=context) as r:
            return json.loads(r.read().decode("utf-8"))

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


class ExampleAloneTest(unittest.TestCase):
    def test_guards_the_toy_agent(self):
        r = run_example()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        check_guarded_run(self, r.stdout)
        self.assertNotIn("acknowledged", r.stdout)


class ExampleWithDaemonTest(unittest.TestCase):
    def setUp(self):
        binary = os.environ.get("LOOPGUARDD")
        if not binary:
            self.skipTest("LOOPGUARDD is not set")
        self.work = tempfile.mkdtemp(prefix="lg-pyexample-")
        self.daemon = Daemon(binary, self.work)

    def tearDown(self):
        self.daemon.stop()
        shutil.rmtree(self.work, ignore_errors=True)

    def test_joins_the_swarm(self):
        swarm = "py-example-%d" % os.getpid()
        r = run_example({"LOOPGUARD_DAEMON": "ws://127.0.0.1:%d" % self.daemon.port,
                         "LOOPGUARD_SWARM": swarm, "LOOPGUARD_WORKER": "py-agent"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        check_guarded_run(self, r.stdout)
        self.assertIn("daemon acknowledged every event: yes", r.stdout)
        view = self.daemon.get("/api/swarms/" + swarm)
        self.assertEqual(view["swarm"], swarm)
        self.assertIn("py-agent", view["worker_names"])
        self.assertGreater(view["calls"], 0)
        self.assertIn("read_file", [f["tool"] for f in view["top"]])


def make_certificate(work):
    """A self-signed certificate for 127.0.0.1 and localhost: (cert, key) paths in `work`."""
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "1", "-keyout", key, "-out", cert, "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=30)
    return cert, key


class ExampleOverTlsTest(unittest.TestCase):
    """The module over wss:// to a loopguardd with --tls-cert: through the environment
    (lg_connect_env, LOOPGUARD_CA_FILE) and through connect(ca_file=...) (lg_set_ca_file)."""

    def setUp(self):
        binary = os.environ.get("LOOPGUARDD")
        if not binary:
            self.skipTest("LOOPGUARDD is not set")
        self.work = tempfile.mkdtemp(prefix="lg-pytls-")
        self.cert, key = make_certificate(self.work)
        self.daemon = Daemon(binary, self.work, ["--tls-cert", self.cert, "--tls-key", key],
                             ca_file=self.cert)
        self.url = "wss://127.0.0.1:%d" % self.daemon.port

    def tearDown(self):
        self.daemon.stop()
        shutil.rmtree(self.work, ignore_errors=True)

    def test_example_joins_over_wss(self):
        swarm = "py-tls-%d" % os.getpid()
        r = run_example({"LOOPGUARD_DAEMON": self.url, "LOOPGUARD_CA_FILE": self.cert,
                         "LOOPGUARD_SWARM": swarm, "LOOPGUARD_WORKER": "py-agent"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("daemon acknowledged every event: yes", r.stdout)
        self.assertIn("py-agent", self.daemon.get("/api/swarms/" + swarm)["worker_names"])

    def test_connect_with_and_without_the_ca_file(self):
        import loopguard  # on PYTHONPATH (ctest's environment)
        env = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("LOOPGUARD_")
               and k not in ("LOOPGUARD_LIBRARY",)}
        try:
            trusted = loopguard.Guard()
            trusted.connect(self.url, "py-tls-api", "w1", from_env=False, ca_file=self.cert)
            trusted.on_tool_call("search", {"q": 1})
            trusted.flush()
            self.assertTrue(trusted.wait_acknowledged(10))
            trusted.close()
            untrusted = loopguard.Guard()
            untrusted.connect(self.url, "py-tls-api", "w2", from_env=False)
            untrusted.on_tool_call("search", {"q": 1})
            untrusted.flush()
            self.assertFalse(untrusted.wait_acknowledged(3))
            client = untrusted.stats()["client"]
            self.assertTrue(client["fatal"])
            self.assertIn("certificate verification failed", client["last_error"])
            untrusted.close()
        finally:
            os.environ.update(env)


if __name__ == "__main__":
    unittest.main()
