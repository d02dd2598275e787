#!/usr/bin/env python3
"""Turns one entry of a tau-bench historical trajectory file (a JSON list of
{task_id, trial, reward, info, traj}, e.g. historical_trajectories/gpt-4o-airline.json in
sierra-research/tau-bench) into a Loopguard recording in the JSON Lines trace format v1.1
(docs/trace-format.md). This is the conversion the meta notes of
tests/data/real/real-taubench-* describe, written down so that new recordings come out the
same way. `traj` is an OpenAI-style chat transcript; each message becomes:

- system (the domain policy): left out;
- user (the LLM-simulated customer): a user event {"content": the message};
- assistant with tool_calls: one tool_call per call, in order (tool = the function name,
  args = its JSON arguments parsed, nothing renamed or dropped; `think` stays a tool like
  any other); any text the same message carried is left out;
- assistant without tool_calls: a text event (the reply to the customer);
- tool: a tool_result for that function (ok=false when the environment answered with
  "Error: ..."), paired by order as the trace format does without ids.

Outputs and customer messages are cut to their first 2000 characters. Standard library only.

    python3 scripts/gen/taubench_traj.py FILE.json task_id=N,trial=K [--name NAME] [--source S]
        > out.jsonl

The meta line carries no `expect`: label the run by reading the converted events, then add it.
"""
import argparse
import json
import sys

LIMIT = 2000


def select(entries, selector):
    want = dict(part.split("=", 1) for part in selector.split(","))
    hits = [e for e in entries
            if all(str(e.get(k)) == v for k, v in want.items())]
    if len(hits) != 1:
        sys.exit(f"selector {selector!r} matches {len(hits)} entries, not 1")
    return hits[0]


def convert(entry):
    events = []
    for msg in entry["traj"]:
        role = msg.get("role")
        content = msg.get("content")
        if role == "system":
            continue
        if role == "user":
            events.append({"kind": "user", "content": (content or "")[:LIMIT]})
        elif role == "assistant":
            calls = msg.get("tool_calls") or []
            if not calls:
                events.append({"kind": "text", "content": content or ""})
            for call in calls:
                fn = call["function"]
                args = fn.get("arguments")
                if isinstance(args, str):
                    args = json.loads(args) if args.strip() else {}
                events.append({"kind": "tool_call", "tool": fn["name"], "args": args})
        elif role == "tool":
            out = content or ""
            events.append({"kind": "tool_result", "tool": msg.get("name", ""),
                           "ok": not out.startswith("Error:"), "output": out[:LIMIT]})
    return events


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("selector", help="task_id=N,trial=K")
    ap.add_argument("--name")
    ap.add_argument("--source")
    a = ap.parse_args()
    with open(a.file, encoding="utf-8") as f:
        entry = select(json.load(f), a.selector)
    meta = {"kind": "meta",
            "name": a.name or f"real/tau-bench task {entry['task_id']} trial {entry['trial']}",
            "source": a.source or f"{a.file}::{a.selector}"}
    for line in [meta] + convert(entry):
        sys.stdout.write(json.dumps(line) + "\n")  # non-ASCII as \u escapes, like the earlier files


if __name__ == "__main__":
    main()
