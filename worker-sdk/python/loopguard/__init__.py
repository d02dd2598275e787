"""Loopguard for Python agents: the worker SDK's C API (loopguard.h) through ctypes.

Standard library only. The shared library is found, in this order, at $LOOPGUARD_LIBRARY (a
path), next to this package, in the build/ directory of the source tree this package is in,
and by the system's loader (libloopguard.so.<ABI>). docs/sdk.md, "Python", says more.

    import loopguard

    guard = loopguard.Guard({"preset": "balanced"})
    verdict = guard.on_tool_call("read_file", {"path": "notes.txt"}, call_id="c1")
    if verdict.action == "reject":
        ...  # do not run the call; give the model verdict.message as its result
"""

import ctypes
import ctypes.util
import json
import os
import threading
from dataclasses import dataclass, field
from typing import List, Optional, Union

ABI_VERSION = 1  # the LOOPGUARD_ABI_VERSION this module was written for
LOOP_DETECTED = "LOOP_DETECTED"  # the status to end a terminated run with

ALLOW, NUDGE, REJECT, TERMINATE = "allow", "nudge", "reject", "terminate"

__all__ = ["ABI_VERSION", "LOOP_DETECTED", "ALLOW", "NUDGE", "REJECT", "TERMINATE",
           "Detection", "Verdict", "Guard", "LoopguardError", "load_library"]


class LoopguardError(Exception):
    """A call the library refused: a bad configuration or option, a NULL where a value is
    needed. The message names what was wrong."""


@dataclass(frozen=True)
class Detection:
    """One rule that fired (docs/sdk.md, "verdict and detection")."""
    detector: str
    level: str
    count: int
    confidence: float
    loop_start: int
    occurrence: int
    tool: str
    message: str
    suggestion: str

    @classmethod
    def from_dict(cls, d: dict) -> "Detection":
        return cls(**{name: d[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Verdict:
    """What to do about one event: action is "allow", "nudge", "reject" or "terminate".

    In observe mode (the configuration's "mode": "observe") action is always "allow" and
    would_have is the action enforce mode would have taken; otherwise would_have is None."""
    action: str
    level: str
    event_index: int
    detections: List[Detection] = field(default_factory=list)
    would_have: Optional[str] = None

    @classmethod
    def from_json(cls, text: str) -> "Verdict":
        d = json.loads(text)
        return cls(d["action"], d["level"], d["event_index"],
                   [Detection.from_dict(x) for x in d["detections"]], d.get("would_have"))

    @property
    def allowed(self) -> bool:
        return self.action == ALLOW

    @property
    def strongest(self) -> Optional[Detection]:
        """The detection the verdict follows; None when nothing fired."""
        return self.detections[0] if self.detections else None

    @property
    def message(self) -> str:
        """The text to show the model (the strongest detection's message), or ""."""
        return self.detections[0].message if self.detections else ""


_lib = None
_lib_lock = threading.Lock()


def _candidates():
    name = "libloopguard.so.%d" % ABI_VERSION
    env = os.environ.get("LOOPGUARD_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, name)
    source_root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    yield os.path.join(source_root, "build", name)
    yield ctypes.util.find_library("loopguard") or name


# int judge(void* user, const char* digest_json, double* probability, double* cost,
#           char* reason, size_t reason_size)
_JUDGE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                             ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
                             ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)


def _declare(lib):
    p, s, i, d, u = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_double, ctypes.c_ulonglong
    err = ctypes.POINTER(ctypes.c_void_p)
    signatures = {
        "lg_abi_version": (i, []),
        "lg_free": (None, [p]),
        "lg_create": (p, [s, err]),
        "lg_destroy": (None, [p]),
        "lg_on_tool_call": (p, [p, s, s, s, err]),
        "lg_on_tool_result": (p, [p, s, i, s, s, err]),
        "lg_on_handoff": (p, [p, s, s, s, s, err]),
        "lg_on_tool_result_cost": (p, [p, s, i, s, s, u, d, err]),
        "lg_on_text": (p, [p, s, err]),
        "lg_on_text_chunk": (p, [p, s, err]),
        "lg_on_user_message": (p, [p, s, err]),
        "lg_on_resume": (p, [p, err]),
        "lg_set_judge": (i, [p, _JUDGE_FN, p, err]),
        "lg_add_cost": (p, [p, d, err]),
        "lg_add_cost_tokens": (p, [p, u, d, err]),
        "lg_flush": (i, [p, err]),
        "lg_record": (i, [p, s, s, err]),
        "lg_stop_recording": (i, [p, err]),
        "lg_set_ca_file": (i, [p, s, err]),
        "lg_connect": (i, [p, s, s, s, s, err]),
        "lg_connect_env": (i, [p, s, s, s, s, err]),
        "lg_wait_acknowledged": (i, [p, i, err]),
        "lg_stats": (p, [p, err]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


def load_library():
    """The loaded C library (loaded on first use). Raises LoopguardError when it cannot be
    found or its ABI version differs from ABI_VERSION."""
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            _declare(lib)
            found = lib.lg_abi_version()
            if found != ABI_VERSION:
                raise LoopguardError("%s has ABI version %d, this module needs %d"
                                     % (path, found, ABI_VERSION))
            _lib = lib
            return lib
        raise LoopguardError("libloopguard not found (set LOOPGUARD_LIBRARY); tried: "
                             + "; ".join(tried))


def _text(value) -> Optional[bytes]:
    """A C string: str as UTF-8 (lone surrogates pass through; the library repairs them)."""
    if value is None or isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


def _take(lib, ptr) -> str:
    """The library's string at ptr, freed."""
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        lib.lg_free(ptr)


class Guard:
    """One guarded agent: the ExecutionEconomicsManager's methods, and connect() to join a
    swarm through loopguardd. Calls are serialized by a lock (the C library wants one caller
    at a time per guard)."""

    def __init__(self, config: Union[None, str, dict] = None):
        """config: the SDK's JSON configuration (docs/configuration.md) as a dict or JSON text;
        None for the defaults (the balanced preset)."""
        self._lib = load_library()
        self._lock = threading.Lock()
        self._judge_cb = None
        if isinstance(config, dict):
            config = json.dumps(config)
        self._handle = self._call(self._lib.lg_create, _text(config))

    def _call(self, fn, *args):
        """fn(*args, &error); raises with the library's message when it failed."""
        error = ctypes.c_void_p()
        result = fn(*args, ctypes.byref(error))
        if error.value:
            raise LoopguardError(_take(self._lib, error.value))
        if result is None or result == -1:  # failed without a message: out of memory
            raise LoopguardError("%s: failed (out of memory)" % fn.__name__)
        return result

    def _judge(self, fn, *args) -> Verdict:
        with self._lock:
            ptr = self._call(fn, self._live(), *args)
            return Verdict.from_json(_take(self._lib, ptr))

    def _live(self):
        if self._handle is None:
            raise LoopguardError("the guard is closed")
        return self._handle

    def on_tool_call(self, tool: str, args: Union[None, str, dict, list] = None,
                     call_id: Optional[str] = None, peer: Optional[str] = None) -> Verdict:
        """Judges a call before it runs. args: a dict (or any JSON value) or JSON text.
        peer: the worker of the swarm this call hands work to (docs/sdk.md, "Hand-offs")."""
        if args is None:
            args = {}
        if not isinstance(args, (str, bytes)):
            args = json.dumps(args, ensure_ascii=False)
        if peer:
            return self._judge(self._lib.lg_on_handoff, _text(tool), _text(args), _text(call_id),
                               _text(peer))
        return self._judge(self._lib.lg_on_tool_call, _text(tool), _text(args), _text(call_id))

    def on_tool_result(self, tool: str, ok: bool, output: str, call_id: Optional[str] = None,
                       tokens: int = 0, amount: float = 0.0) -> Verdict:
        """Records the outcome of a call; ok is False when the tool reported an error.
        tokens, amount: what the call cost (docs/sdk.md, "Costs")."""
        if tokens or amount:
            return self._judge(self._lib.lg_on_tool_result_cost, _text(tool), 1 if ok else 0,
                               _text(output), _text(call_id), max(0, int(tokens)),
                               float(amount))
        return self._judge(self._lib.lg_on_tool_result, _text(tool), 1 if ok else 0,
                           _text(output), _text(call_id))

    def on_text(self, content: str) -> Verdict:
        """One whole assistant turn of text."""
        return self._judge(self._lib.lg_on_text, _text(content))

    def on_text_chunk(self, chunk: str) -> Verdict:
        """A piece of streamed text."""
        return self._judge(self._lib.lg_on_text_chunk, _text(chunk))

    def on_user_message(self, content: Optional[str] = None) -> Verdict:
        """A message from outside the agent (the user's next instruction, a customer's reply)."""
        return self._judge(self._lib.lg_on_user_message, _text(content))

    def on_resume(self) -> Verdict:
        """The run resumes after a pause: streaks and loop episodes restart, limits do not."""
        return self._judge(self._lib.lg_on_resume)

    def add_cost(self, amount: float = 0.0, tokens: int = 0) -> Verdict:
        """Adds to the run's cost (any unit) and checks the limits; charged to the last judged
        call (docs/sdk.md, "Costs")."""
        if tokens:
            return self._judge(self._lib.lg_add_cost_tokens, max(0, int(tokens)), float(amount))
        return self._judge(self._lib.lg_add_cost, float(amount))

    def set_judge(self, judge) -> None:
        """The judge hook (docs/sdk.md, "Judge hook"): judge(digest: dict) returns None (no
        answer) or (probability 0..1, reason, cost). Called from inside the event methods; an
        exception it raises counts as no answer. None removes the judge."""
        if judge is None:
            with self._lock:
                self._call(self._lib.lg_set_judge, self._live(), _JUDGE_FN(), None)
                self._judge_cb = None
            return

        def trampoline(_user, digest, probability, cost, reason, reason_size):
            try:
                answer = judge(json.loads(digest.decode("utf-8")))
                if answer is None:
                    return 1
                p, why, spent = answer
                probability[0] = float(p)
                cost[0] = float(spent)
                data = str(why).encode("utf-8", "replace")[: max(0, reason_size - 1)]
                ctypes.memmove(reason, data, len(data))
                reason[len(data)] = b"\0"
                return 0
            except Exception:  # a failing judge is no answer; the manager counts it
                return 1

        cb = _JUDGE_FN(trampoline)
        with self._lock:
            self._call(self._lib.lg_set_judge, self._live(), cb, None)
            self._judge_cb = cb  # kept alive as long as the library may call it

    def flush(self) -> None:
        """Sends the calls still waiting for a result to the daemon (the end of a run)."""
        with self._lock:
            self._call(self._lib.lg_flush, self._live())

    def record(self, path: str, detections_path: Optional[str] = None) -> None:
        """Records the run from now on (before the first event): the events to path, in the
        trace format, and the detection lines the agent was given to detections_path (None:
        path with ".jsonl" replaced by ".detections.jsonl"). `loopguard replay` of the trace
        prints those lines again (docs/sdk.md, "Recording a run")."""
        with self._lock:
            self._call(self._lib.lg_record, self._live(), _text(path), _text(detections_path))

    def stop_recording(self) -> None:
        """Ends the recording and closes its files; raises the write error that stopped it,
        if one did. close() ends it too."""
        with self._lock:
            self._call(self._lib.lg_stop_recording, self._live())

    def connect(self, url: Optional[str] = None, swarm: Optional[str] = None,
                worker: Optional[str] = None, token: Optional[str] = None,
                from_env: bool = True, ca_file: Optional[str] = None) -> None:
        """Joins a swarm through loopguardd at url (ws://HOST:PORT, or wss:// for TLS: the
        daemon's certificate is verified against ca_file, a PEM file, or the system's CA
        certificates when it is None). With from_env (the default), LOOPGUARD_DAEMON,
        LOOPGUARD_SWARM, LOOPGUARD_WORKER, LOOPGUARD_TOKEN and LOOPGUARD_CA_FILE override the
        arguments they set. Never blocks on the network."""
        fn = self._lib.lg_connect_env if from_env else self._lib.lg_connect
        with self._lock:
            self._call(self._lib.lg_set_ca_file, self._live(), _text(ca_file))
            self._call(fn, self._live(), _text(url), _text(swarm), _text(worker), _text(token))

    def wait_acknowledged(self, timeout: float) -> bool:
        """Waits up to timeout seconds until the daemon acknowledged every event sent (the end
        of a run, after flush()). False on timeout."""
        with self._lock:
            return self._call(self._lib.lg_wait_acknowledged, self._live(),
                              max(0, int(timeout * 1000))) == 1

    def stats(self) -> dict:
        """{"manager": {...}, "client": {...} or None, "recording": {...} or None}
        (docs/sdk.md, "C API")."""
        with self._lock:
            return json.loads(_take(self._lib, self._call(self._lib.lg_stats, self._live())))

    def close(self) -> None:
        """Destroys the guard (closing its daemon connection). Further calls raise."""
        with self._lock:
            if self._handle is not None:
                self._lib.lg_destroy(self._handle)
                self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self._lib.lg_destroy(self._handle)
            self._handle = None
