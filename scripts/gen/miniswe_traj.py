#!/usr/bin/env python3
"""Turns one mini-SWE-agent trajectory (v1.x `<instance>.traj.json`, a chat transcript under
"messages") into a Loopguard recording in the JSON Lines trace format (docs/trace-format.md).
This is the conversion the meta notes of tests/data/real/real-miniswe-* describe, written down
so that new recordings come out the same way:

- the system prompt and the task (the first two messages) are left out;
- an assistant message holding exactly one ```bash block was executed by the harness: it
  becomes tool_call "bash" {"command": the block}; the harness's reply becomes the tool_result:
  '<returncode>N</returncode>' followed by the output (ok = N is 0; the output is what stands
  inside <output>, or the head/elided/tail part the harness shows for a long output); the last
  reply, which carries the submitted diff and no return code, is ok; so is any other reply
  without a return code (the harness's "timed out and has been killed" message, kept whole),
  as in the earlier recordings, which this keeps comparable;
- an assistant message with no or several ```bash blocks was refused by the harness (format
  error), nothing ran: it becomes a text event with the whole message, and the harness's
  complaint is left out;
- the THOUGHT part of executed messages is left out;
- outputs and texts are cut to their first 2000 characters.

Standard library only.

    python3 scripts/gen/miniswe_traj.py RUN.traj.json [--name NAME] [--source SOURCE] > out.jsonl

The meta line carries no `expect`: label the run by reading the converted events, then add it.
"""
import argparse
import json
import re
import sys

BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)  # the harness's action regex
RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>\n?")
LIMIT = 2000


def observation(reply):
    """(ok, output) of the harness's reply to an executed command."""
    m = RETURNCODE.match(reply)
    if not m:
        return True, reply  # the submitted diff, or a timeout notice: no return code
    rest = reply[m.end():]
    if rest.startswith("<warning>") and "</warning>" in rest:
        rest = rest.split("</warning>", 1)[1]  # long output: keep head, elided count, tail
    elif rest.startswith("<output>"):
        rest = rest[len("<output>"):]
        if rest.startswith("\n"):
            rest = rest[1:]
        if rest.endswith("</output>"):
            rest = rest[:-len("</output>")]
    return int(m.group(1)) == 0, rest


def convert(run):
    msgs = run["messages"]
    events = []
    i = 2  # messages 0 and 1: system prompt and task
    while i < len(msgs):
        msg = msgs[i]
        content = msg.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        if msg.get("role") == "assistant":
            blocks = BASH_BLOCK.findall(content)
            reply = msgs[i + 1].get("content", "") if i + 1 < len(msgs) else None
            if len(blocks) == 1 and reply is not None:
                events.append({"kind": "tool_call", "tool": "bash",
                               "args": {"command": blocks[0].strip()}})
                ok, out = observation(reply)
                events.append({"kind": "tool_result", "tool": "bash", "ok": ok,
                               "output": out[:LIMIT]})
                i += 2
                continue
            if len(blocks) == 1:  # executed but the transcript ends before its reply
                events.append({"kind": "tool_call", "tool": "bash",
                               "args": {"command": blocks[0].strip()}})
            else:
                events.append({"kind": "text", "content": content[:LIMIT]})
            i += 1
            continue
        i += 1  # the harness's format-error reply (or anything else not from the agent)
    return events


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traj")
    ap.add_argument("--name")
    ap.add_argument("--source")
    a = ap.parse_args()
    with open(a.traj, encoding="utf-8") as f:
        run = json.load(f)
    meta = {"kind": "meta",
            "name": a.name or "real/mini-swe-agent " + run.get("instance_id", a.traj),
            "source": a.source or a.traj}
    for line in [meta] + convert(run):
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
