/* loopguard.h: the C API of the Loopguard worker SDK (docs/sdk.md, "C API").
 *
 * A C99 interface over loopguard::swarm_worker (the ExecutionEconomicsManager plus, once
 * connected, the daemon client), for agents written in C, Python, Go, Rust, Node, ... It is
 * built into the shared library libloopguard.so.<LOOPGUARD_ABI_VERSION>, which exports only the
 * lg_* functions below.
 *
 * Conventions, for every function:
 *  - Strings in are NUL-terminated and may hold any bytes: text that is not valid UTF-8 is
 *    repaired (each maximal ill-formed subsequence becomes U+FFFD), as in the C++ SDK.
 *  - Strings out (verdicts, stats, error messages) are valid UTF-8, NUL-terminated and
 *    allocated by the library: the caller owns them and frees each with lg_free().
 *  - Errors: a function that fails returns NULL (or -1) and, when `error` is not NULL, stores in
 *    *error a message naming what was wrong ("lg_create: config: detectors.exact.warn_at:
 *    ..."); free it with lg_free(). On success *error is set to NULL. A NULL pointer where a
 *    value is required is an error, never a crash; no C++ exception crosses this interface.
 *  - Threads: one lg_guard per agent. Calls on one guard must not overlap (protect it with a
 *    lock when several threads feed it); different guards share nothing.
 */
#ifndef LOOPGUARD_LOOPGUARD_H
#define LOOPGUARD_LOOPGUARD_H

#include <stddef.h>

/* The version of this interface. It changes only when a change would break a program built
 * against an older header (a function removed or changed, the verdict JSON changed
 * incompatibly); adding a function or a JSON field keeps it. The shared library's SONAME is
 * libloopguard.so.LOOPGUARD_ABI_VERSION. */
#define LOOPGUARD_ABI_VERSION 1

#if defined(__GNUC__) && !defined(_WIN32)
#define LG_API __attribute__((visibility("default")))
#else
#define LG_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One guarded agent: a swarm_worker. Opaque. */
typedef struct lg_guard lg_guard;

/* LOOPGUARD_ABI_VERSION of the library actually loaded: compare it with the header's. */
LG_API int lg_abi_version(void);

/* Frees a string (or any pointer) this library returned. NULL is ignored. */
LG_API void lg_free(void* p);

/* A guard configured by `config_json`, the SDK's JSON configuration (docs/configuration.md:
 * {"preset": "aggressive", "detectors": {...}}). NULL or "" gives the defaults (the balanced
 * preset). Returns NULL on error: the configuration is not JSON, or a key is unknown, mistyped
 * or out of range (the message names its key path). Destroy it with lg_destroy(). */
LG_API lg_guard* lg_create(const char* config_json, char** error);

/* Destroys a guard (and closes its daemon connection; events not yet acknowledged are not
 * waited for: see lg_wait_acknowledged). NULL is ignored. */
LG_API void lg_destroy(lg_guard* guard);

/* The events. Each returns the verdict as a JSON object (docs/sdk.md, "Verdict JSON"):
 *   {"action":"nudge","level":"warn","event_index":2,"detections":[{"detector":"exact",
 *    "level":"warn","count":3,"confidence":1,"loop_start":0,"occurrence":1,
 *    "tool":"read_file","message":"...","suggestion":"..."}]}
 * `action` is "allow", "nudge", "reject" or "terminate"; free the string with lg_free(). In
 * observe mode (the configuration's "mode": "observe") `action` is always "allow" and a last
 * key "would_have" holds the action enforce mode would have taken. */

/* A tool call, before it runs. `args_json`: the arguments as JSON text (text that is not JSON
 * is fingerprinted as one string); `call_id` may be NULL or "" (no id). */
LG_API char* lg_on_tool_call(lg_guard* guard, const char* tool, const char* args_json,
                             const char* call_id, char** error);
/* The outcome of a call: `ok` is 0 when the tool reported an error. `call_id` may be NULL. */
LG_API char* lg_on_tool_result(lg_guard* guard, const char* tool, int ok, const char* output,
                               const char* call_id, char** error);
/* A tool call that hands work to the worker `peer` of the swarm (docs/sdk.md, "Hand-offs"):
 * as lg_on_tool_call; the daemon looks for hand-off loops. `peer` may be NULL or "" (none). */
LG_API char* lg_on_handoff(lg_guard* guard, const char* tool, const char* args_json,
                           const char* call_id, const char* peer, char** error);
/* lg_on_tool_result with what the call cost (docs/sdk.md, "Costs"): `tokens` and `amount` in
 * the swarm's unit; an amount that is not a finite number above 0 is 0. */
LG_API char* lg_on_tool_result_cost(lg_guard* guard, const char* tool, int ok, const char* output,
                                    const char* call_id, unsigned long long tokens, double amount,
                                    char** error);
/* One whole assistant turn of text. */
LG_API char* lg_on_text(lg_guard* guard, const char* content, char** error);
/* A piece of streamed text (it may end inside a UTF-8 character). */
LG_API char* lg_on_text_chunk(lg_guard* guard, const char* chunk, char** error);
/* A message from outside the agent (the user's next instruction, a customer's reply); `content`
 * may be NULL. The agent's repetition is counted afresh after it (docs/detectors.md). */
LG_API char* lg_on_user_message(lg_guard* guard, const char* content, char** error);
/* The run resumes after a pause ("continue"): streaks and loop episodes restart; limits and
 * the swarm's verdicts do not. */
LG_API char* lg_on_resume(lg_guard* guard, char** error);
/* A judge (docs/sdk.md, "Judge hook"): called with the digest of the recent history as JSON
 * ({"turn":N,"why":"cadence"|"warn","warning":[...],"events":[{"index":i,"kind":"...","tool":
 * "...","text":"...","ok":true},...]}); writes the probability that the agent is stuck (0..1),
 * what the check cost, and a NUL-terminated reason of at most reason_size bytes (the NUL
 * included; `reason` holds "" on entry), and returns 0; non-zero means no answer. Called on the
 * thread of the event call, never concurrently for one guard; it must not call the guard. */
typedef int (*lg_judge_fn)(void* user_data, const char* digest_json, double* probability,
                           double* cost, char* reason, size_t reason_size);
/* Sets the judge (NULL removes it); `user_data` is passed back unchanged. 0, or -1. */
LG_API int lg_set_judge(lg_guard* guard, lg_judge_fn judge, void* user_data, char** error);
/* Adds to the run's cost (any unit); a negative or non-finite amount is ignored. Charged to
 * the last judged call (docs/sdk.md, "Costs"). */
LG_API char* lg_add_cost(lg_guard* guard, double amount, char** error);
/* The same with tokens. */
LG_API char* lg_add_cost_tokens(lg_guard* guard, unsigned long long tokens, double amount,
                                char** error);
/* Records the run (docs/sdk.md, "Recording a run"): every event and verdict from now on, each
 * written and flushed as it happens, the events to `path` (JSON Lines, docs/trace-format.md),
 * the detection lines to `detections_path` (NULL or "": `path` with ".jsonl" replaced by
 * ".detections.jsonl"). `loopguard replay` of the trace prints those lines again. Must come
 * before the first event (after lg_connect, the trace names the connection's swarm and worker).
 * 0, or -1: a file cannot be opened, a recording is running, events were judged already. */
LG_API int lg_record(lg_guard* guard, const char* path, const char* detections_path, char** error);
/* Ends the recording and closes its files: 0, or -1 with the write error that stopped it.
 * lg_destroy() ends it too. */
LG_API int lg_stop_recording(lg_guard* guard, char** error);
/* Sends the calls still waiting for a result to the daemon; for the end of a run. 0, or -1. */
LG_API int lg_flush(lg_guard* guard, char** error);

/* The PEM file of the CA certificate(s) the daemon's TLS certificate must chain to, for a
 * wss:// url of the lg_connect or lg_connect_env that follows (LOOPGUARD_CA_FILE overrides it
 * there). NULL or "": the system's CA paths. The certificate is always verified, for the url's
 * host; a failed verification is fatal (stats: "fatal", "last_error" says why). 0, or -1. */
LG_API int lg_set_ca_file(lg_guard* guard, const char* ca_file, char** error);
/* Joins a swarm: connects the guard to loopguardd at `url` (ws://HOST:PORT, wss:// for TLS) as
 * `worker` of
 * `swarm`, with `token` (NULL or "": none). Never blocks on the network: the connection is
 * made, kept and restored in the background, and the guard works locally meanwhile. At most
 * once per guard. Returns 0, or -1 when an option is invalid (the message names it). */
LG_API int lg_connect(lg_guard* guard, const char* url, const char* swarm, const char* worker,
                      const char* token, char** error);
/* The same, with each option that its environment variable sets taken from it instead:
 * LOOPGUARD_DAEMON (url), LOOPGUARD_SWARM, LOOPGUARD_WORKER, LOOPGUARD_TOKEN, LOOPGUARD_CA_FILE.
 * Arguments may
 * be NULL (unset). When LOOPGUARD_CONFIG names the SDK's config file (docs/configuration.md,
 * "The SDK's config file"), its "daemon" object comes first (the arguments that are neither
 * NULL nor "" override it, the variables override both); an error names the file and key. */
LG_API int lg_connect_env(lg_guard* guard, const char* url, const char* swarm, const char* worker,
                          const char* token, char** error);
/* Blocks until the daemon has acknowledged every event sent so far (1), or `timeout_ms`
 * passes, or the daemon refused the client for good (0). For the end of a run, never inside
 * the agent's loop. -1 on error (NULL guard, not connected). */
LG_API int lg_wait_acknowledged(lg_guard* guard, int timeout_ms, char** error);

/* Counters as a JSON object: {"manager":{...},"client":{...}} ("client" is null before
 * lg_connect). docs/sdk.md, "C API", lists the fields. */
LG_API char* lg_stats(lg_guard* guard, char** error);

#ifdef __cplusplus
}
#endif

#endif /* LOOPGUARD_LOOPGUARD_H */
