#!/usr/bin/env python3
"""A worked example: a toy agent loop guarded by Loopguard (docs/sdk.md, "Python").

The toy model keeps reading the same file. Loopguard nudges it (the nudge is added to the tool
result the model sees), then rejects the call (the call does not run; the model gets the
explanation as its result); the model then changes course and finishes. A terminate verdict
would end the run with LOOP_DETECTED.

    LOOPGUARD_LIBRARY=build/libloopguard.so.1 python3 worker-sdk/python/examples/guarded_agent.py

With LOOPGUARD_DAEMON=ws://HOST:PORT (and LOOPGUARD_SWARM, LOOPGUARD_WORKER, LOOPGUARD_TOKEN)
set, the agent also joins that swarm through loopguardd.
"""

import os
import sys

try:
    import loopguard
except ImportError:  # run from the source tree: the package is in worker-sdk/python
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import loopguard


class ToyModel:
    """Stands in for the LLM: rereads config.yaml until a call of it is rejected, then searches
    the code instead, then says it is done."""

    def __init__(self):
        self.turn = 0
        self.rejected = False
        self.searched = False

    def next_call(self):
        """The next tool call as (id, tool, args), or None when the model is done."""
        self.turn += 1
        call_id = "call-%d" % self.turn
        if not self.rejected:
            return call_id, "read_file", {"path": "config.yaml"}
        if not self.searched:
            self.searched = True
            return call_id, "search", {"query": "where is the port set"}
        return None

    def tool_result(self, call_id, text, rejected=False):
        """What the model sees as the call's result."""
        self.rejected = self.rejected or rejected
        shown = text if len(text) <= 72 else text[:72] + "..."
        print("  model sees for %s: %s" % (call_id, shown.replace("\n", " | ")))


def run_tool(tool, args):
    if tool == "read_file":
        return "port: 8080\nhost: localhost"
    return "server.py:12: listen(config.port)"


def show(call_id, tool, when, verdict):
    detector = " (%s)" % verdict.strongest.detector if verdict.strongest else ""
    print("%s %s %s: %s%s" % (call_id, tool, when, verdict.action, detector))


def run_agent(guard, model):
    """The agent loop: what the caller does with each action. Returns "DONE" or
    loopguard.LOOP_DETECTED."""
    while True:
        call = model.next_call()
        if call is None:
            return "DONE"
        call_id, tool, args = call
        before = guard.on_tool_call(tool, args, call_id=call_id)
        show(call_id, tool, "before", before)
        if before.action == loopguard.TERMINATE:
            return loopguard.LOOP_DETECTED
        if before.action == loopguard.REJECT:  # not run, and no on_tool_result for it
            model.tool_result(call_id, before.message, rejected=True)
            continue
        output = run_tool(tool, args)
        after = guard.on_tool_result(tool, True, output, call_id=call_id)
        show(call_id, tool, "after", after)
        if after.action == loopguard.TERMINATE:
            return loopguard.LOOP_DETECTED
        text = output
        for verdict in (before, after):
            if verdict.action == loopguard.NUDGE:
                text += "\n\n" + verdict.message
        model.tool_result(call_id, text)


def main():
    with loopguard.Guard({"preset": "balanced"}) as guard:
        connected = "LOOPGUARD_DAEMON" in os.environ
        if connected:
            guard.connect()  # url, swarm, worker and token from LOOPGUARD_*
        outcome = run_agent(guard, ToyModel())
        print("outcome:", outcome)
        guard.flush()  # the end of the run: send the calls still waiting for a result
        if connected:
            delivered = guard.wait_acknowledged(timeout=5)
            print("daemon acknowledged every event:", "yes" if delivered else "no")
        stats = guard.stats()
        print("tool calls: %d, rejected: %d" % (stats["manager"]["tool_calls"],
                                                stats["manager"]["rejected"]))
        return 0 if outcome == "DONE" else 1


if __name__ == "__main__":
    sys.exit(main())
