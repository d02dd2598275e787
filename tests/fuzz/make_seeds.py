#!/usr/bin/env python3
"""Writes the hand-made seed corpora of the fuzz harnesses into tests/fuzz/corpus/.

Run once after changing it (python3 tests/fuzz/make_seeds.py); the output is committed. Seeds
are small and chosen so that every harness reaches its deep path over the corpus alone
(scripts/fuzz.sh checks the counters): detections, global verdicts, rendered views.
"""
import json
import pathlib
import shutil
import struct

ROOT = pathlib.Path(__file__).resolve().parent
REPO = ROOT.parent.parent
CORPUS = ROOT / "corpus"


def write(harness, name, data):
    d = CORPUS / harness
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


# --- protocol_json: every message type (the golden frames), plus refusals -------------------
for f in sorted((REPO / "tests/daemon/protocol").glob("*.json")):
    write("protocol_json", f.name, f.read_bytes())
write("protocol_json", "bad_json", b'{"type":"ack","seq":')
write("protocol_json", "unknown_type.json", b'{"type":"hug"}')
write("protocol_json", "hello_bad_utf8.json",
      b'{"type":"hello","version":1,"swarm":"s\xff","worker":"w","incarnation":"i","token":""}')
write("protocol_json", "events_repaired.json",
      b'{"type":"events","events":[{"seq":1,"tool":"se\xc3arch","summary":"q=\\ud800 x",'
      b'"exact":"00000000000000ff","structural":"0000000000000001","ok":true,"t":-0.0}]}')
write("protocol_json", "verdict_unicode.json", json.dumps(
    {"type": "verdict", "swarm": "équipe", "tool": "grep ✓", "kind": "structural",
     "fingerprint": "ffffffffffffffff", "level": "critical", "calls": 4294967295, "workers": 1,
     "message": "m\u00e9ssage \U0001f600", "t": 1e300}, ensure_ascii=False))


# --- protocol_binary: LGB1 batches (docs/protocol.md, "Binary event batches") ---------------
def batch(events):
    out = bytearray(b"LGB1") + struct.pack("<Q", len(events))
    for e in events:
        tool, summary = e.get("tool", b"search"), e.get("summary", b"query=config loader")
        tool = tool.encode() if isinstance(tool, str) else tool
        summary = summary.encode() if isinstance(summary, str) else summary
        has_result = "result" in e
        out += struct.pack("<QQQQd", e["seq"], e.get("exact", 0x9A3C55E0D1B27F48),
                           e.get("structural", 0x0C7E11AA93F2B564), e.get("result", 0),
                           e.get("t", 0.0))
        out.append((1 if e.get("ok", False) else 0) | (2 if has_result else 0))
        out += struct.pack("<H", len(tool)) + tool + struct.pack("<H", len(summary)) + summary
    return bytes(out)


# The same failing call twelve times: the global rule fires under every harness rule set.
write("protocol_binary", "same_call_12",
      batch([{"seq": i + 1, "result": 0x51D0E2C4A8B39F77, "t": 10.0 + i} for i in range(12)]))
# Two calls in alternation whose results keep changing (progress), then stop changing.
write("protocol_binary", "alternating_progress", batch(
    [{"seq": i + 1, "exact": 1 + i % 2, "structural": 11 + i % 2, "tool": "read_file",
      "summary": "path=notes.md", "ok": True, "result": 100 + (i if i < 12 else 0), "t": float(i)}
     for i in range(24)]))
# Non-ASCII swarm name (percent-encoded in the detail view) and invalid UTF-8 to repair.
write("protocol_binary", "unicode_and_repair", batch(
    [{"seq": 1, "summary": "équipe/α β?%", "tool": "grep", "result": 7, "t": 1.0}] +
    [{"seq": i + 2, "tool": b"gr\xffep\xc3", "summary": b"q=\xed\xa0\x80" + b"x" * 250,
      "result": 7, "t": 2.0 + i} for i in range(8)]))
# Twenty distinct fingerprints three seconds apart: evictions and window expiry.
write("protocol_binary", "many_fingerprints", batch(
    [{"seq": i + 1, "exact": 1000 + i % 20, "structural": 2000 + i % 20, "result": 5,
      "t": 3.0 * i} for i in range(40)]))
# Out-of-order sequence numbers, times far apart, a result-less call.
write("protocol_binary", "gaps_and_times", batch(
    [{"seq": 5, "t": 1e300}, {"seq": 1, "t": -0.0}, {"seq": 2, "t": -1e300, "result": 1},
     {"seq": 2, "t": 5e-324}, {"seq": 9, "t": 1e9}]))
write("protocol_binary", "empty", batch([]))

# --- protocol_binary: LGB2 batches (feature cost / handoff): each event also has its cost and peer
def batch2(events):
    out = bytearray(b"LGB2") + struct.pack("<Q", len(events))
    for e in events:
        tool, summary = e.get("tool", "delegate").encode(), e.get("summary", "task=t1").encode()
        peer = e.get("peer", "")
        peer = peer.encode() if isinstance(peer, str) else peer
        out += struct.pack("<QQQQd", e["seq"], e.get("exact", 0x77), e.get("structural", 0x11),
                           e.get("result", 7), e.get("t", 0.0))
        out.append(1 | 2 | (4 if e.get("charge") else 0))
        out += struct.pack("<H", len(tool)) + tool + struct.pack("<H", len(summary)) + summary
        out += struct.pack("<Qd", e.get("tokens", 0), e.get("amount", 0.0))
        out += struct.pack("<H", len(peer)) + peer
    return bytes(out)


# Two workers (events alternate between harness workers) handing the same task back and forth,
# each call with a cost, a charge after every fourth: hand-off loops, wasted cost, the budget.
write("protocol_binary", "lgb2_handoff_costs", batch2(
    [{"seq": i + 1, "peer": "w1" if i % 3 == 0 else ("w2" if i % 3 == 1 else "w0"),
      "structural": 0x11 + i % 3, "tokens": 1000 + i, "amount": 0.125 * (i % 4),
      "charge": i % 4 == 3, "t": float(i)} for i in range(30)]))
# Costs out of range and a peer that is no worker name: refused.
write("protocol_binary", "lgb2_bad_cost", batch2([{"seq": 1, "amount": -1.0}]))
write("protocol_binary", "lgb2_bad_peer", batch2([{"seq": 1, "peer": b"w\xff"}]))

write("protocol_binary", "truncated", batch([{"seq": 1}])[:-3])
write("protocol_binary", "too_many", b"LGB1" + struct.pack("<Q", 5000))


# --- trace_replay: the bundled recordings, plus refusals and hostile strings ----------------
for d in ("traces", "replay", "bad"):
    for f in sorted((REPO / "tests/data" / d).glob("*.jsonl")):
        write("trace_replay", f"{d}-{f.name}", f.read_bytes())
hostile = []
for i in range(12):
    hostile.append(b'{"kind":"tool_call","worker":"w%d","swarm":"s\xc3\xa9","tool":"ba\xffsh",'
                   b'"args":{"command":"cat \\udc80 ./a\xe2\x82"},"t":%d}' % (i % 3, i))
    hostile.append(b'{"kind":"tool_result","worker":"w%d","swarm":"s\xc3\xa9","tool":"ba\xffsh",'
                   b'"ok":false,"output":"no \xf0\x9f such file"}' % (i % 3))
hostile.append(b'{"kind":"text","content":"' + b"again and again \xe2\x80 " * 40 + b'"}')
write("trace_replay", "hostile_strings.jsonl", b"\n".join(hostile) + b"\n")


# --- canonical: argument texts ---------------------------------------------------------------
for i, text in enumerate([
    '{"path":"src/a.ts","offset":1.0,"limit":1e2}',
    '{"b":[1,2.5,-0,1e0,1.00],"a":{"z":null,"y":true,"x":false}}',
    '{"command":"ls  -la","timestamp":"2026-11-22T10:00:00Z","request_id":7}',
    '18446744073709551615', '-9223372036854775808', '1e19', '1.7976931348623157e308', '1e-400',
    '"tab\\t nl\\n uni\\u00e9 pair\\ud83d\\ude00 ctl\\u0001"',
    '"lone \\ud800 surrogate"',
    '{"a":1,"a":2}',
    ' [ {} , [ ] , "" ] ',
    '[' * 128 + ']' * 128,
    '[' * 129 + ']' * 129,
    '{"x":1} trailing',
]):
    write("canonical", f"args_{i:02}.json", text)
write("canonical", "invalid_utf8.json", b'{"k\xff":"v\xc3\x28","path":"\xed\xa0\x80"}')


# --- shell_command ---------------------------------------------------------------------------
for i, cmd in enumerate([
    "cat  ./src//a.ts", "ls -la | grep x", "sed -n '1,20p' src/main.py", "FOO=1 head -n 5 a.txt",
    'echo "$(date)"', "bash -c 'pytest -x'", "tail -f log \\\n  && echo done", "cat 'unbalanced",
    "/usr/bin/wc -l ./x//y//z", "cat *.py", "grep -rn \"a b\" .", "  \t nl  file.txt  ",
    "cat a > b", "less ~/notes.md", "bat --plain -- -weird-name",
]):
    write("shell_command", f"cmd_{i:02}", cmd)
write("shell_command", "invalid_utf8", b"cat ./f\xff\xfe//\xc3")
# A fuzz finding (2026-11-25): a lone trailing backslash made an empty operand.
write("shell_command", "trailing_backslash", b"bat -- \\")


# --- result_mask -----------------------------------------------------------------------------
for i, out in enumerate([
    "at 2026-11-22T10:42:15.123+01:00 done", "Ran 10 tests in 0.532s", "elapsed 1m30s, 12 ms",
    "at 0x7ffd5e8c1a2b in main", "id 550e8400-e29b-41d4-a716-446655440000 ok",
    "started pid 4242; PID: 77 exited; pid=1", "commit 3f2a9c1d8e7b6a5f", "10 tests passed",
    "[10:42:15.500] ready in 3 seconds", "été 2026-11-22 ✓ 5 min",
]):
    write("result_mask", f"out_{i:02}", out)
write("result_mask", "invalid_utf8", b"pid 12\xff 2026-11-22\xc3 0xdead\xed\xa0\x80beef 3s")


# --- sdk_config ------------------------------------------------------------------------------
doc = (REPO / "docs/configuration.md").read_text()
full = doc[doc.index("## A full example"):]
full = full[full.index("```json") + len("```json"):]
write("sdk_config", "full_example.json", full[:full.index("```")].strip())
configs = {
    "empty.json": {},
    "aggressive_no_content.json": {"preset": "aggressive",
                                   "detectors": {"content": {"enabled": False}}},
    "small_swarm.json": {"preset": "ralph", "swarm": {"threshold": 2, "min_workers": 1,
                                                      "window_seconds": 0.5}},
    "tools.json": {"tools": {"bash": {"exact": {"warn_at": 2}}, "read_file": {"enabled": False}}},
    "bad_warn_at.json": {"detectors": {"exact": {"warn_at": 0}}},
    "bad_swarm.json": {"swarm": {"threshold": 0}},
    "swarm_cross_check.json": {"swarm": {"threshold": 5, "absolute_cap": 3}},
    "unknown_key.json": {"detectorz": {}},
    "limits.json": {"preset": "goose", "detectors": {"limit": {
        "max_iterations": 3, "max_cost": 1, "max_wall_seconds": 4, "warn_fraction": 0.5}}},
}
for name, c in configs.items():
    write("sdk_config", name, json.dumps(c))
for p in ["balanced", "conservative", "aggressive", "ralph", "aaagent", "attocode", "gemini-cli",
          "openhands", "openhands-sdk", "cline", "roo-code", "goose", "openclaw"]:
    write("sdk_config", f"preset_{p}.json", json.dumps({"preset": p}))
write("sdk_config", "bad_json.json", b'{"preset": "balanced",')


# --- manager: operation programs (see manager_fuzz.cpp) --------------------------------------
def s(b):
    b = b.encode() if isinstance(b, str) else b
    return bytes([len(b)]) + b


TABLE_CALL, TABLE_RESULT, REPEAT, CLOCK, CHUNKS = 8, 9, 7, 10, 11
programs = {
    # the same call seventeen times
    "exact_repeat": bytes([0, TABLE_CALL, 0, REPEAT, 15]),
    # A B A B ... calls
    "cycle": bytes([1] + [TABLE_CALL, 2, TABLE_CALL, 3 + 5] * 6),
    # the same failing call and result over and over
    "failing_pairs": bytes([2] + [TABLE_CALL, 4 + 5 * 4, TABLE_RESULT, 4 + 5 * 1] * 8),
    # one chunk streamed 32 times, then as whole turns
    "content_loop": bytes([3, CHUNKS]) + s("same sentence again. ") + bytes([31]) +
                    bytes([3]) + s("I will try again now. " * 2) + bytes([REPEAT, 6]),
    # every operation once, with invalid UTF-8
    "every_op": bytes([4, 0]) + s(b"b\xffash") + s(b'{"command":"ls \xc3"}') +
                bytes([1]) + s("sh") + bytes([0]) + s(b"cat\xed\xa0\x80 x") + s("i1") +
                bytes([2]) + s("sh") + bytes([0]) + s(b"err\xf0 no") + s("i1") +
                bytes([3]) + s(b"text \xe2\x82") + bytes([4]) + s(b"\xe2\x82\xac chunk") +
                bytes([5, 0, 5, 1, 5, 2, 5, 3, 5, 77, CLOCK, 255, 6, REPEAT, 3]),
    # time passes between calls; the cost limit is reached
    "clock_and_cost": bytes([5] + [TABLE_CALL, 1, CLOCK, 200, 5, 252] * 10),
}
for name, prog in programs.items():
    write("manager", name, prog)

print("seeds written under", CORPUS)
