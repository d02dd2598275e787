// The C API (loopguard.h) over swarm_worker. Every lg_* function runs its body through
// `run`, so that no C++ exception crosses the C boundary and every failure (a NULL pointer,
// a bad option, an exception) becomes the caller's *error, a malloc'd UTF-8 message.
#include "loopguard/loopguard.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "loopguard/config.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/sdk_config.hpp"
#include "loopguard/swarm_worker.hpp"
#include "loopguard/utf8.hpp"
#include "loopguard/verdict_json.hpp"
#include "stats_json.hpp"

static_assert(LOOPGUARD_ABI_VERSION == LOOPGUARD_EXPECTED_ABI_VERSION,
              "loopguard.h and CMakeLists.txt (the SONAME) disagree on the ABI version");

struct lg_guard {
  explicit lg_guard(loopguard::manager_config config) : worker(std::move(config)) {}
  loopguard::swarm_worker worker;
  std::string ca_file;  // lg_set_ca_file: for the connect that follows
};

namespace loopguard {
namespace {

// A malloc'd, NUL-terminated copy of `s` (freed with lg_free), or nullptr when memory is out.
char* copy_out(std::string_view s) noexcept {
  auto* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

// *error = "fn: message" (repaired to valid UTF-8), when the caller asked for it.
void set_error(char** error, const char* fn, std::string_view message) noexcept {
  if (error == nullptr) return;
  try {
    *error = copy_out(utf8::repair(std::string(fn) + ": " + std::string(message)));
  } catch (...) {
    *error = copy_out("out of memory");
  }
}

// Runs `body` (returning result<T>); a failure or an exception becomes *error and nullopt.
template <class T, class Body>
std::optional<T> run(const char* fn, char** error, Body&& body) noexcept {
  if (error != nullptr) *error = nullptr;
  try {
    result<T> r = body();
    if (r) return std::move(*r);
    set_error(error, fn, r.error().message());
  } catch (const std::bad_alloc&) {
    set_error(error, fn, "out of memory");
  } catch (const std::exception& e) {
    set_error(error, fn, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    set_error(error, fn, "unexpected exception");
  }
  return std::nullopt;
}

char* text_out(const char* fn, char** error, const std::optional<std::string>& text) noexcept {
  if (!text) return nullptr;
  char* p = copy_out(*text);
  if (p == nullptr) set_error(error, fn, "out of memory");
  return p;
}

int status_out(const std::optional<int>& code) noexcept {
  return code.value_or(-1);
}

status need(const void* p, std::string_view name) {
  if (p != nullptr) return {};
  return status::error(std::string(name) + " is NULL");
}

std::string_view optional_text(const char* s) {
  return s == nullptr ? std::string_view{} : s;
}

// One event: `event` (swarm_worker& -> result<verdict>) on the guard, the verdict as JSON.
template <class Event>
char* judge(const char* fn, lg_guard* guard, char** error, Event&& event) noexcept {
  return text_out(fn, error, run<std::string>(fn, error, [&]() -> result<std::string> {
                    if (status s = need(guard, "guard"); !s.ok()) return s;
                    result<verdict> v = event(guard->worker);
                    if (!v) return v.error();
                    return verdict_json(*v);
                  }));
}

// The room a C judge has for its reason, NUL included (the manager keeps at most 500 bytes).
constexpr std::size_t kReasonBytes = 512;

nlohmann::ordered_json to_json(const judge_digest& d) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const auto& e : d.events) {
    events.push_back(
        {{"index", e.index}, {"kind", e.kind}, {"tool", e.tool}, {"text", e.text}, {"ok", e.ok}});
  }
  return {{"turn", d.turn}, {"why", d.why}, {"warning", d.warning}, {"events", std::move(events)}};
}

result<manager_config> config_from(const char* text) {
  if (text == nullptr || *text == '\0') return manager_config{};
  const auto doc = json_input::parse(text);
  if (!doc) return doc.error().with_context("config: ");
  // The SDK's config file may be given whole: its "daemon" object is checked, not used here
  // (lg_connect_env reads it from $LOOPGUARD_CONFIG).
  auto config = parse_sdk_config(doc->value);
  if (!config) return config.error().with_context("config: ");
  return std::move(config->detector);
}

// The options given as arguments; NULL leaves an option empty.
client_options options_from(const char* url, const char* swarm, const char* worker,
                            const char* token) {
  client_options o;
  o.url = optional_text(url);
  o.swarm = optional_text(swarm);
  o.worker = optional_text(worker);
  o.token = optional_text(token);
  return o;
}

// lg_connect_env's options: the "daemon" object of the file $LOOPGUARD_CONFIG names (when set),
// then the arguments that are neither NULL nor "" (lg_set_ca_file's among them), then the
// variables (options_from_env).
result<client_options> options_from_file_and_env(const char* url, const char* swarm,
                                                 const char* worker, const char* token,
                                                 const char* ca_file) {
  client_options o;
  if (const char* file = std::getenv("LOOPGUARD_CONFIG"); file != nullptr && *file != '\0') {
    auto c = load_sdk_config(file);
    if (!c) return c.error().with_context("LOOPGUARD_CONFIG: ");
    o = std::move(c->client);
  }
  const std::pair<const char*, std::string*> args[] = {{url, &o.url},
                                                       {swarm, &o.swarm},
                                                       {worker, &o.worker},
                                                       {token, &o.token},
                                                       {ca_file, &o.ca_file}};
  for (const auto& [arg, field] : args) {
    if (arg != nullptr && *arg != '\0') *field = arg;
  }
  return options_from_env(std::move(o));
}

result<int> connect(lg_guard* guard, result<client_options> options) {
  if (status s = need(guard, "guard"); !s.ok()) return s;
  if (!options) return options.error();
  if (status s = guard->worker.connect(std::move(*options)); !s.ok()) return s;
  return 0;
}

result<std::string> stats_of(lg_guard* guard) {
  if (status s = need(guard, "guard"); !s.ok()) return s;
  nlohmann::ordered_json out;
  out["manager"] = to_json(guard->worker.manager().stats());
  const daemon_client* client = guard->worker.client();
  out["client"] = client == nullptr ? nlohmann::ordered_json() : to_json(client->stats());
  const auto recording = guard->worker.recording();
  out["recording"] = recording ? to_json(*recording) : nlohmann::ordered_json();
  return json_input::dump(out);
}

}  // namespace
}  // namespace loopguard

using namespace loopguard;

int lg_abi_version(void) {
  return LOOPGUARD_ABI_VERSION;
}

void lg_free(void* p) {
  std::free(p);
}

lg_guard* lg_create(const char* config_json, char** error) {
  auto made = run<lg_guard*>("lg_create", error, [&]() -> result<lg_guard*> {
    auto config = config_from(config_json);
    if (!config) return config.error();
    return std::make_unique<lg_guard>(std::move(*config)).release();
  });
  return made.value_or(nullptr);
}

void lg_destroy(lg_guard* guard) {
  try {
    delete guard;
  } catch (...) {  // a destructor that throws: nothing crosses the C boundary
  }
}

char* lg_on_tool_call(lg_guard* guard, const char* tool, const char* args_json, const char* call_id,
                      char** error) {
  return judge("lg_on_tool_call", guard, error, [&](swarm_worker& w) -> result<verdict> {
    if (status s = need(tool, "tool"); !s.ok()) return s;
    if (status s = need(args_json, "args_json"); !s.ok()) return s;
    return w.on_tool_call_json(tool, args_json, optional_text(call_id));
  });
}

char* lg_on_tool_result(lg_guard* guard, const char* tool, int ok, const char* output,
                        const char* call_id, char** error) {
  return judge("lg_on_tool_result", guard, error, [&](swarm_worker& w) -> result<verdict> {
    if (status s = need(tool, "tool"); !s.ok()) return s;
    if (status s = need(output, "output"); !s.ok()) return s;
    return w.on_tool_result(tool, ok != 0, output, optional_text(call_id));
  });
}

char* lg_on_handoff(lg_guard* guard, const char* tool, const char* args_json, const char* call_id,
                    const char* peer, char** error) {
  return judge("lg_on_handoff", guard, error, [&](swarm_worker& w) -> result<verdict> {
    if (status s = need(tool, "tool"); !s.ok()) return s;
    if (status s = need(args_json, "args_json"); !s.ok()) return s;
    return w.on_tool_call_json(tool, args_json, optional_text(call_id), optional_text(peer));
  });
}

char* lg_on_tool_result_cost(lg_guard* guard, const char* tool, int ok, const char* output,
                             const char* call_id, unsigned long long tokens, double amount,
                             char** error) {
  return judge("lg_on_tool_result_cost", guard, error, [&](swarm_worker& w) -> result<verdict> {
    if (status s = need(tool, "tool"); !s.ok()) return s;
    if (status s = need(output, "output"); !s.ok()) return s;
    return w.on_tool_result(tool, ok != 0, output, optional_text(call_id),
                            protocol::cost{static_cast<std::uint64_t>(tokens), amount});
  });
}

char* lg_on_text(lg_guard* guard, const char* content, char** error) {
  return judge("lg_on_text", guard, error, [&](swarm_worker& w) -> result<verdict> {
    if (status s = need(content, "content"); !s.ok()) return s;
    return w.on_text(content);
  });
}

char* lg_on_user_message(lg_guard* guard, const char* content, char** error) {
  return judge("lg_on_user_message", guard, error, [&](swarm_worker& w) -> result<verdict> {
    return w.on_user_message(optional_text(content));
  });
}

char* lg_on_resume(lg_guard* guard, char** error) {
  return judge("lg_on_resume", guard, error,
               [&](swarm_worker& w) -> result<verdict> { return w.on_resume(); });
}

char* lg_on_text_chunk(lg_guard* guard, const char* chunk, char** error) {
  return judge("lg_on_text_chunk", guard, error, [&](swarm_worker& w) -> result<verdict> {
    if (status s = need(chunk, "chunk"); !s.ok()) return s;
    return w.on_text_chunk(chunk);
  });
}

char* lg_add_cost(lg_guard* guard, double amount, char** error) {
  return judge("lg_add_cost", guard, error,
               [&](swarm_worker& w) -> result<verdict> { return w.add_cost(amount); });
}

char* lg_add_cost_tokens(lg_guard* guard, unsigned long long tokens, double amount, char** error) {
  return judge("lg_add_cost_tokens", guard, error, [&](swarm_worker& w) -> result<verdict> {
    return w.add_cost(protocol::cost{static_cast<std::uint64_t>(tokens), amount});
  });
}

int lg_flush(lg_guard* guard, char** error) {
  return status_out(run<int>("lg_flush", error, [&]() -> result<int> {
    if (status s = need(guard, "guard"); !s.ok()) return s;
    guard->worker.flush();
    return 0;
  }));
}

int lg_set_judge(lg_guard* guard, lg_judge_fn judge, void* user_data, char** error) {
  return status_out(run<int>("lg_set_judge", error, [&]() -> result<int> {
    if (status s = need(guard, "guard"); !s.ok()) return s;
    if (judge == nullptr) {
      guard->worker.manager().set_judge(nullptr);
      return 0;
    }
    guard->worker.manager().set_judge([judge, user_data](
                                          const judge_digest& d) -> std::optional<judge_answer> {
      const std::string digest = to_json(d).dump();
      judge_answer a;
      char reason[kReasonBytes] = "";
      if (judge(user_data, digest.c_str(), &a.probability, &a.cost, reason, sizeof reason) != 0) {
        return std::nullopt;
      }
      reason[sizeof reason - 1] = '\0';  // a judge that wrote past the NUL is cut
      a.reason = reason;
      return a;
    });
    return 0;
  }));
}

int lg_record(lg_guard* guard, const char* path, const char* detections_path, char** error) {
  return status_out(run<int>("lg_record", error, [&]() -> result<int> {
    if (status s = need(guard, "guard"); !s.ok()) return s;
    if (status s = need(path, "path"); !s.ok()) return s;
    recording_options o;
    o.path = path;
    o.detections_path = optional_text(detections_path);
    if (status s = guard->worker.record(std::move(o)); !s.ok()) return s;
    return 0;
  }));
}

int lg_stop_recording(lg_guard* guard, char** error) {
  return status_out(run<int>("lg_stop_recording", error, [&]() -> result<int> {
    if (status s = need(guard, "guard"); !s.ok()) return s;
    if (status s = guard->worker.stop_recording(); !s.ok()) return s;
    return 0;
  }));
}

int lg_connect(lg_guard* guard, const char* url, const char* swarm, const char* worker,
               const char* token, char** error) {
  return status_out(run<int>("lg_connect", error, [&]() -> result<int> {
    if (status s = need(url, "url"); !s.ok()) return s;
    if (status s = need(swarm, "swarm"); !s.ok()) return s;
    if (status s = need(worker, "worker"); !s.ok()) return s;
    client_options o = options_from(url, swarm, worker, token);
    if (guard != nullptr) o.ca_file = guard->ca_file;
    return connect(guard, std::move(o));
  }));
}

int lg_set_ca_file(lg_guard* guard, const char* ca_file, char** error) {
  return status_out(run<int>("lg_set_ca_file", error, [&]() -> result<int> {
    if (status s = need(guard, "guard"); !s.ok()) return s;
    guard->ca_file = optional_text(ca_file);
    return 0;
  }));
}

int lg_connect_env(lg_guard* guard, const char* url, const char* swarm, const char* worker,
                   const char* token, char** error) {
  return status_out(run<int>("lg_connect_env", error, [&]() -> result<int> {
    if (status s = need(guard, "guard"); !s.ok()) return s;
    return connect(guard,
                   options_from_file_and_env(url, swarm, worker, token, guard->ca_file.c_str()));
  }));
}

int lg_wait_acknowledged(lg_guard* guard, int timeout_ms, char** error) {
  return status_out(run<int>("lg_wait_acknowledged", error, [&]() -> result<int> {
    if (status s = need(guard, "guard"); !s.ok()) return s;
    if (timeout_ms < 0) return status::error("timeout_ms is negative");
    daemon_client* client = guard->worker.client();
    if (client == nullptr) return status::error("not connected (call lg_connect first)");
    const bool all =
        client->wait_acknowledged(client->stats().sent, std::chrono::milliseconds(timeout_ms));
    return all ? 1 : 0;
  }));
}

char* lg_stats(lg_guard* guard, char** error) {
  return text_out("lg_stats", error,
                  run<std::string>("lg_stats", error, [&] { return stats_of(guard); }));
}
