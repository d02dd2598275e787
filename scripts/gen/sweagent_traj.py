#!/usr/bin/env python3
"""Converts a SWE-agent 0.x trajectory (.traj JSON) into a Loopguard recording (trace format,
docs/trace-format.md), by the conversion the notes of tests/data/real/real-sweagent-* describe:
each action -> tool_call (tool = the ACI command, or "bash" for anything else; args
{"command": the whole action}), its observation -> tool_result (ok inferred from the text;
no exit codes are recorded), thoughts dropped, the environment's exit_cost autosubmit step
dropped, outputs truncated to 2000 characters. Standard library only.

    scripts/gen/sweagent_traj.py RUN.traj --name NAME --source SOURCE > out.jsonl
(the meta line gets no `expect`: label the run by reading it, then add one)."""
import argparse
import json
import sys

ACI = {"open", "goto", "scroll_down", "scroll_up", "create", "edit", "search_dir",
       "search_file", "find_file", "submit"}
FAILURE_MARKS = ("Your proposed edit has introduced new syntax error",
                 "Traceback (most recent call last)", "command not found", "syntax error",
                 "No such file or directory", "Error:", " FAILED", "failed,", "== FAILURES ==")


def tool_of(action):
    word = action.strip().split(None, 1)[0] if action.strip() else ""
    return word if word in ACI else "bash"


def ok_of(tool, observation):
    if tool == "submit":
        return True
    return not any(mark in observation for mark in FAILURE_MARKS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("traj")
    ap.add_argument("--name", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    with open(a.traj, encoding="utf-8") as f:
        run = json.load(f)
    out = [{"kind": "meta", "name": a.name, "source": a.source}]
    for step in run["trajectory"]:
        action = step.get("action") or ""
        if action.strip() in ("exit_cost", "exit_context", "exit_api", "exit_format"):
            continue
        tool = tool_of(action)
        obs = step.get("observation") or ""
        out.append({"kind": "tool_call", "tool": tool, "args": {"command": action.rstrip("\n")}})
        out.append({"kind": "tool_result", "tool": tool, "ok": ok_of(tool, obs),
                    "output": obs[:2000]})
    for line in out:
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
