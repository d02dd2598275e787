#!/usr/bin/env python3
"""Turns one AutoCodeRover (ACR) run directory, as the ACR authors committed them under
results/acr-val-only/<status>/<instance>_<date>/, into a Loopguard recording (trace format,
docs/trace-format.md). It implements the conversion written in the note of
tests/data/real/real-autocoderover-django-13265-refusal-text-loop.jsonl:

- Input: the conversation_round_N.json with the highest N (the search phase) and the
  debug_agent_write_patch_N.json with the highest N (it repeats the search phase and adds the
  patch-writing turns; only the turns after its last "Write a patch for the issue" prompt are
  used).
- An assistant turn of the search phase whose API calls were run (the next message is the
  harness's "Result of ..." message) becomes, per call, a tool_call (tool = the search API,
  args = the call's positional arguments named after the API's parameters, read from the
  "Result of api(...)" header) and a tool_result holding that call's section of the message
  (ok=false when it starts with "Could not find"). The prose of such a turn is left out.
- Every other assistant turn of the search phase (analysis, a bug-location answer, an answer
  whose calls the harness found invalid) becomes a text event.
- Each assistant turn of the patch phase becomes tool_call write_patch {"patch": the whole
  message} and a tool_result with the harness's reply (ok=false when the reply says the edit
  "could not be applied").
- Dropped: the system prompt, the issue, every prompt and feedback message of the harness.
- Text and outputs are cut to 2000 characters; the patch argument is kept whole.

Standard library only. Usage:
    python3 scripts/gen/acr_traj.py RUN_DIR [--name N] [--source S] > out.jsonl
The meta line gets no `expect`: label the run by reading it, then add one."""
import argparse
import ast
import glob
import json
import os
import re
import sys

CUT = 2000
# The search APIs as the ACR prompt of these runs lists them; the prompt of the run, when it
# can be read, takes precedence.
SIGNATURES = {
    "search_class": ["class_name"],
    "search_method_in_file": ["method_name", "file_path"],
    "search_method_in_class": ["method_name", "class_name"],
    "search_method": ["method_name"],
    "search_code": ["code_str"],
    "search_code_in_file": ["code_str", "file_path"],
}
HEADER = re.compile(r"^Result of (\w+)\(", re.M)
PATCH_PROMPT = "Write a patch for the issue"


def numbered(run_dir, stem):
    paths = glob.glob(os.path.join(run_dir, stem + "_*.json"))
    key = lambda p: int(re.search(r"_(\d+)\.json$", p).group(1))
    return sorted(paths, key=key)


def signatures_from(messages):
    sig = dict(SIGNATURES)
    for m in messages:
        if m.get("role") != "user" or "search APIs" not in (m.get("content") or ""):
            continue
        for name, params in re.findall(r"^\s*(\w+)\(([^()]*)\):", m["content"], re.M):
            names = [p.split(":")[0].strip() for p in params.split(",") if p.strip()]
            if names:
                sig[name] = names
        break
    return sig


def parse_args(text):
    """Positional arguments of a call written as `name(...)`, or None if they do not parse."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    try:
        return [ast.literal_eval(a) for a in node.args]
    except ValueError:
        return None


def split_results(content, sig):
    """[(api, args dict, section text)] of one "Result of ..." message."""
    starts = [m.start() for m in HEADER.finditer(content)]
    out = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(content)
        block = content[start:end]
        name = HEADER.match(block).group(1)
        # the header ends at the first "):" line end after which the call parses
        call, body = None, None
        for m in re.finditer(r"\):\n", block):
            args = parse_args(block[len("Result of "):m.start() + 1])
            if args is not None:
                call, body = args, block[m.end():]
                break
        if call is None:  # unreadable header: keep the whole line as one argument
            line, _, body = block.partition("\n")
            call = [line[len("Result of " + name + "("):].rstrip(":").rstrip(")")]
        names = sig.get(name) or ["arg%d" % k for k in range(len(call))]
        if len(names) != len(call):
            names = ["arg%d" % k for k in range(len(call))]
        out.append((name, dict(zip(names, call)), body.strip()))
    return out


def convert(run_dir):
    rounds = numbered(run_dir, "conversation_round")
    if not rounds:
        sys.exit("no conversation_round_*.json in " + run_dir)
    with open(rounds[-1], encoding="utf-8") as f:
        search = json.load(f)
    sig = signatures_from(search)
    events = []
    for i, m in enumerate(search):
        if m.get("role") != "assistant":
            continue
        nxt = search[i + 1] if i + 1 < len(search) else None
        reply = (nxt or {}).get("content") or ""
        if nxt and nxt.get("role") == "user" and reply.startswith("Result of "):
            for api, args, body in split_results(reply, sig):
                events.append({"kind": "tool_call", "tool": api, "args": args})
                events.append({"kind": "tool_result", "tool": api,
                               "ok": not body.startswith("Could not find"),
                               "output": body[:CUT]})
        else:
            events.append({"kind": "text", "content": (m.get("content") or "")[:CUT]})
    patches = numbered(run_dir, "debug_agent_write_patch")
    if patches:
        with open(patches[-1], encoding="utf-8") as f:
            thread = json.load(f)
        begin = None
        for i, m in enumerate(thread):
            if m.get("role") == "user" and (m.get("content") or "").startswith(PATCH_PROMPT):
                begin = i + 1
        for i in range(begin if begin is not None else len(thread), len(thread)):
            m = thread[i]
            if m.get("role") != "assistant":
                continue
            events.append({"kind": "tool_call", "tool": "write_patch",
                           "args": {"patch": m.get("content") or ""}})
            nxt = thread[i + 1] if i + 1 < len(thread) else None
            if nxt is not None and nxt.get("role") == "user":
                reply = nxt.get("content") or ""
                events.append({"kind": "tool_result", "tool": "write_patch",
                               "ok": "could not be applied" not in reply,
                               "output": reply.strip()[:CUT]})
    return events


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("--name")
    ap.add_argument("--source")
    a = ap.parse_args()
    run_dir = a.run_dir.rstrip("/")
    meta = {"kind": "meta", "name": a.name or "real/autocoderover " + os.path.basename(run_dir)}
    if a.source:
        meta["source"] = a.source
    lines = [meta] + convert(run_dir)
    for line in lines:
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
