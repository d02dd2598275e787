"""The Python module over the C API (worker-sdk/python/loopguard), run by ctest (python.guard)
with LOOPGUARD_LIBRARY naming the library just built."""

import json
import os
import threading
import unittest

import loopguard


def repeat_until_reject(guard, tool="read_file", args=None, limit=12):
    """Calls the same tool again and again (each answered the same way) until a call is
    rejected; the actions seen, in order."""
    args = args if args is not None else {"path": "notes.txt"}
    actions = []
    for i in range(limit):
        call_id = "c%d" % i
        v = guard.on_tool_call(tool, args, call_id=call_id)
        actions.append(v.action)
        if v.action == loopguard.REJECT:
            return actions, v
        guard.on_tool_result(tool, True, "the same notes", call_id=call_id)
    return actions, None


class LibraryTest(unittest.TestCase):
    def test_abi_version_matches(self):
        self.assertEqual(loopguard.load_library().lg_abi_version(), loopguard.ABI_VERSION)

    def test_library_from_environment(self):
        self.assertTrue(os.environ.get("LOOPGUARD_LIBRARY"))


class VerdictTest(unittest.TestCase):
    def test_identical_calls_nudge_then_reject(self):
        actions, rejected = repeat_until_reject(loopguard.Guard())
        self.assertIn(loopguard.NUDGE, actions)
        self.assertEqual(actions[0], loopguard.ALLOW)
        self.assertLess(actions.index(loopguard.NUDGE), actions.index(loopguard.REJECT))
        self.assertEqual(rejected.strongest.detector, "exact")
        self.assertEqual(rejected.level, "critical")
        self.assertIn("read_file", rejected.message)
        self.assertEqual(rejected.message, rejected.detections[0].message)
        self.assertFalse(rejected.allowed)

    def test_args_as_dict_or_json_text_are_the_same_call(self):
        guard = loopguard.Guard()
        actions = []
        for i, args in enumerate([{"path": "a", "n": 1}, '{"n": 1, "path": "a"}',
                                  '{"path":"a","n":1.0}']):
            actions.append(guard.on_tool_call("read", args, call_id=str(i)).action)
            guard.on_tool_result("read", True, "x", call_id=str(i))
        self.assertEqual(actions, [loopguard.ALLOW, loopguard.ALLOW, loopguard.NUDGE])

    def test_observe_mode_allows_and_says_what_would_have_happened(self):
        actions, rejected = repeat_until_reject(loopguard.Guard({"mode": "observe"}))
        self.assertIsNone(rejected)  # observe mode rejects nothing
        self.assertEqual(set(actions), {loopguard.ALLOW})
        guard = loopguard.Guard({"mode": "observe"})
        would_have = []
        for i in range(8):
            v = guard.on_tool_call("read_file", {"path": "notes.txt"}, call_id="c%d" % i)
            self.assertTrue(v.allowed)
            would_have.append(v.would_have)
            guard.on_tool_result("read_file", True, "the same notes", call_id="c%d" % i)
        self.assertEqual(would_have[0], loopguard.ALLOW)
        self.assertIn(loopguard.NUDGE, would_have)
        self.assertIn(loopguard.REJECT, would_have)
        self.assertEqual(guard.stats()["manager"]["rejected"], would_have.count(loopguard.REJECT))
        self.assertIsNone(loopguard.Guard().on_text("hi").would_have)

    def test_record_a_run(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.jsonl")
            guard = loopguard.Guard({"mode": "observe"})
            guard.record(path)
            with self.assertRaises(loopguard.LoopguardError):
                guard.record(path)  # one recording at a time
            guard.on_user_message("Fix the login bug.")
            repeat_until_reject(guard, limit=7)
            guard.on_resume()
            guard.on_text("Done \udcff.")
            stats = guard.stats()["recording"]
            self.assertEqual(stats["path"], path)
            self.assertEqual(stats["events"], 17)
            guard.stop_recording()
            self.assertIsNone(guard.stats()["recording"])
            with open(path, encoding="utf-8") as f:
                lines = [json.loads(line) for line in f]
            with open(os.path.join(d, "run.detections.jsonl"), encoding="utf-8") as f:
                detections = [json.loads(line) for line in f]
            self.assertEqual(lines[0]["kind"], "meta")
            self.assertEqual(lines[0]["config"]["mode"], "observe")
            self.assertEqual([x["kind"] for x in lines[1:3]], ["user", "tool_call"])
            self.assertEqual(lines[-2]["kind"], "resume")
            # A lone surrogate is passed on as its 3 bytes, each repaired to U+FFFD.
            self.assertEqual(lines[-1]["content"], "Done \ufffd\ufffd\ufffd.")
            self.assertEqual(len(detections), stats["detection_lines"])
            self.assertTrue(all(x["trace"] == path for x in detections))
            self.assertIn("exact", {x["detector"] for x in detections})
        with self.assertRaises(loopguard.LoopguardError) as e:
            loopguard.Guard().record(os.path.join("/nonexistent-dir", "run.jsonl"))
        self.assertIn("lg_record: record: cannot open /nonexistent-dir/run.jsonl", str(e.exception))

    def test_allow_verdict(self):
        v = loopguard.Guard().on_text("Let me read the file first.")
        self.assertTrue(v.allowed)
        self.assertEqual((v.action, v.level, v.detections), ("allow", "none", []))
        self.assertIsNone(v.strongest)
        self.assertEqual(v.message, "")

    def test_event_index_counts_events(self):
        guard = loopguard.Guard()
        self.assertEqual(guard.on_tool_call("t", {}).event_index, 0)
        self.assertEqual(guard.on_tool_result("t", False, "boom").event_index, 1)
        self.assertEqual(guard.on_text_chunk("abc").event_index, 2)
        self.assertEqual(guard.add_cost(0.5).event_index, 2)  # not an event

    def test_cost_limit_terminates(self):
        guard = loopguard.Guard({"detectors": {"limit": {"max_cost": 1.0}}})
        self.assertEqual(guard.add_cost(0.5).action, loopguard.ALLOW)
        v = guard.add_cost(0.75)
        self.assertEqual(v.action, loopguard.TERMINATE)
        self.assertEqual(v.strongest.detector, "limit")

    def test_costs_and_hand_offs(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.jsonl")
            guard = loopguard.Guard({"detectors": {"limit": {"max_cost": 1.0}}})
            guard.record(path)
            guard.on_tool_call("delegate", {"task": "fix it"}, call_id="h1", peer="coder")
            v = guard.on_tool_result("delegate", True, "handed over", call_id="h1",
                                     tokens=1200, amount=0.75)
            self.assertEqual(v.action, loopguard.ALLOW)
            v = guard.add_cost(0.5, tokens=300)  # 1.25 of 1.0: the cost limit
            self.assertEqual(v.action, loopguard.TERMINATE)
            self.assertEqual(v.strongest.detector, "limit")
            guard.stop_recording()
            with open(path, encoding="utf-8") as f:
                lines = [json.loads(line) for line in f]
            self.assertEqual(lines[1]["peer"], "coder")
            self.assertEqual(lines[2]["cost"], {"tokens": 1200, "amount": 0.75})

    def test_repeated_text_is_caught(self):
        guard = loopguard.Guard()
        actions = [guard.on_text("I will now fix the bug in parser.py.").action
                   for _ in range(6)]
        self.assertNotEqual(set(actions), {loopguard.ALLOW})

    def test_user_message_and_resume_restart_the_counts(self):
        guard = loopguard.Guard()
        for _ in range(2):
            guard.on_tool_call("read_file", {"path": "a"})
            guard.on_tool_result("read_file", True, "same")
        self.assertEqual(guard.on_resume().action, loopguard.ALLOW)
        self.assertEqual(guard.on_tool_call("read_file", {"path": "a"}).action, loopguard.ALLOW)
        guard.on_tool_result("read_file", True, "same")
        guard.on_text("I cannot do that.")
        self.assertEqual(guard.on_user_message("please?").action, loopguard.ALLOW)
        self.assertEqual(guard.on_user_message().action, loopguard.ALLOW)
        self.assertEqual(guard.on_text("I cannot do that.").action, loopguard.ALLOW)
        stats = guard.stats()["manager"]
        self.assertEqual(stats["user_messages"], 2)
        self.assertEqual(stats["resumes"], 1)

    def test_judge_hook(self):
        guard = loopguard.Guard({"detectors": {"judge": {"after_turn": 1000}}})
        asked = []

        def judge(digest):
            asked.append(digest)
            return (0.96, "it reads the same notes again and again", 0.5)

        guard.set_judge(judge)
        verdicts = []
        for _ in range(3):
            verdicts.append(guard.on_tool_call("read_file", {"path": "notes"}))
            guard.on_tool_result("read_file", True, "the same notes")
        self.assertEqual(len(asked), 1)
        self.assertEqual(asked[0]["why"], "warn")
        self.assertEqual(asked[0]["events"][-1]["tool"], "read_file")
        judged = [d for d in verdicts[-1].detections if d.detector == "judge"]
        self.assertEqual(len(judged), 1)
        self.assertIn("it reads the same notes again and again", judged[0].message)
        self.assertEqual(guard.stats()["manager"]["judge_cost"], 0.5)

        def broken(_digest):
            raise RuntimeError("model down")

        guard.set_judge(broken)
        guard.on_tool_call("read_file", {"path": "notes"})
        self.assertEqual(guard.stats()["manager"]["judge_errors"], 0)  # no answer is not an error
        guard.set_judge(None)

    def test_any_string_is_accepted(self):
        guard = loopguard.Guard()
        v = guard.on_tool_call("t\udcff\ud800", "not json {", call_id="\udcfe")
        self.assertEqual(v.action, loopguard.ALLOW)
        v = guard.on_tool_result(b"t\xff", True, b"\xc0\x80 bytes")
        self.assertEqual(v.action, loopguard.ALLOW)
        self.assertEqual(guard.on_text_chunk("caf\u00e9 \u2603").action, loopguard.ALLOW)

    def test_detection_fields(self):
        _, rejected = repeat_until_reject(loopguard.Guard())
        d = rejected.strongest
        self.assertEqual(d.tool, "read_file")
        self.assertGreaterEqual(d.count, 2)
        self.assertTrue(0 <= d.confidence <= 1)
        self.assertEqual(d.loop_start, 0)
        self.assertGreaterEqual(d.occurrence, 1)
        self.assertTrue(d.suggestion)


class ConfigTest(unittest.TestCase):
    def test_bad_config_names_the_key(self):
        with self.assertRaises(loopguard.LoopguardError) as e:
            loopguard.Guard({"detectors": {"exact": {"warn_at": 0}}})
        self.assertIn("lg_create: config: detectors.exact.warn_at", str(e.exception))

    def test_config_that_is_not_json(self):
        with self.assertRaises(loopguard.LoopguardError) as e:
            loopguard.Guard("{nope")
        self.assertIn("lg_create: config: ", str(e.exception))

    def test_config_as_text_and_preset(self):
        guard = loopguard.Guard('{"preset": "aggressive"}')
        actions, _ = repeat_until_reject(guard)
        balanced, _ = repeat_until_reject(loopguard.Guard(None))
        self.assertLess(len(actions), len(balanced))


class LifecycleTest(unittest.TestCase):
    def test_stats(self):
        guard = loopguard.Guard()
        repeat_until_reject(guard)
        stats = guard.stats()
        self.assertIsNone(stats["client"])
        self.assertEqual(stats["manager"]["rejected"], 1)
        self.assertEqual(stats["manager"]["tool_calls"], stats["manager"]["tool_results"] + 1)
        self.assertGreaterEqual(stats["manager"]["detections"]["exact"]["critical"], 1)

    def test_closed_guard_raises(self):
        guard = loopguard.Guard()
        guard.close()
        guard.close()  # twice is fine
        with self.assertRaises(loopguard.LoopguardError):
            guard.on_text("x")

    def test_context_manager_and_flush(self):
        with loopguard.Guard() as guard:
            guard.on_tool_call("t", {"a": 1}, call_id="1")
            guard.flush()
        with self.assertRaises(loopguard.LoopguardError):
            guard.stats()

    def test_wait_without_connection_is_an_error(self):
        with self.assertRaises(loopguard.LoopguardError) as e:
            loopguard.Guard().wait_acknowledged(0.1)
        self.assertIn("not connected", str(e.exception))

    def test_bad_connect_options(self):
        guard = loopguard.Guard()
        with self.assertRaises(loopguard.LoopguardError) as e:
            guard.connect("http://localhost:1", "swarm", "w1", from_env=False)
        self.assertTrue(str(e.exception).startswith("lg_connect: "))
        with self.assertRaises(loopguard.LoopguardError) as e:
            guard.connect(None, "swarm", "w1", from_env=False)
        self.assertEqual(str(e.exception), "lg_connect: url is NULL")

    def test_connect_options_from_environment(self):
        guard = loopguard.Guard()
        saved = os.environ.get("LOOPGUARD_DAEMON")
        os.environ["LOOPGUARD_DAEMON"] = "not a url"
        try:
            with self.assertRaises(loopguard.LoopguardError) as e:
                guard.connect("ws://127.0.0.1:1", "swarm", "w1")
            self.assertTrue(str(e.exception).startswith("lg_connect_env: "))
        finally:
            if saved is None:
                del os.environ["LOOPGUARD_DAEMON"]
            else:
                os.environ["LOOPGUARD_DAEMON"] = saved

    def test_connect_reads_the_sdk_config_file(self):
        # LOOPGUARD_CONFIG's "daemon" object gives lg_connect_env its options; lg_create takes
        # the same document (the daemon object checked, not used).
        import tempfile
        names = ["LOOPGUARD_CONFIG", "LOOPGUARD_DAEMON", "LOOPGUARD_TOKEN", "LOOPGUARD_SWARM",
                 "LOOPGUARD_WORKER"]
        saved = {n: os.environ.pop(n, None) for n in names}
        try:
            with tempfile.TemporaryDirectory() as d:
                doc = {"preset": "aggressive",
                       "daemon": {"url": "ws://127.0.0.1:1", "swarm": "from-file",
                                  "worker": "w-file", "backoff_min_ms": 10000,
                                  "backoff_max_ms": 10000}}
                good = os.path.join(d, "sdk.json")
                with open(good, "w") as f:
                    json.dump(doc, f)
                guard = loopguard.Guard(doc)
                with self.assertRaises(loopguard.LoopguardError) as e:
                    guard.connect()  # no file, no arguments: no url
                self.assertIn("url", str(e.exception))
                os.environ["LOOPGUARD_CONFIG"] = good
                guard.connect()  # url, swarm and worker from the file
                self.assertIsNotNone(guard.stats()["client"])
                guard.close()

                bad = os.path.join(d, "bad.json")
                with open(bad, "w") as f:
                    json.dump({"daemon": {"outbox_size": 5}}, f)
                os.environ["LOOPGUARD_CONFIG"] = bad
                with self.assertRaises(loopguard.LoopguardError) as e:
                    loopguard.Guard().connect()
                self.assertTrue(str(e.exception).startswith(
                    "lg_connect_env: LOOPGUARD_CONFIG: " + bad +
                    ": daemon.outbox_size: unknown key"), str(e.exception))
        finally:
            for n, v in saved.items():
                os.environ.pop(n, None)
                if v is not None:
                    os.environ[n] = v

    def test_threads_share_a_guard(self):
        guard = loopguard.Guard()
        errors = []

        def feed(n):
            try:
                for i in range(200):
                    guard.on_tool_call("t%d" % n, {"i": i})
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=feed, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(guard.stats()["manager"]["tool_calls"], 800)


class VerdictJsonTest(unittest.TestCase):
    def test_form(self):
        lib = loopguard.load_library()
        import ctypes
        g = lib.lg_create(None, None)
        try:
            ptr = lib.lg_on_tool_call(g, b"read", b"{}", None, None)
            text = ctypes.string_at(ptr).decode("utf-8")
            lib.lg_free(ptr)
        finally:
            lib.lg_destroy(g)
        self.assertEqual(text, '{"action":"allow","level":"none","event_index":0,'
                               '"detections":[]}')
        self.assertEqual(list(json.loads(text)), ["action", "level", "event_index",
                                                  "detections"])


if __name__ == "__main__":
    unittest.main()
