// swarm_worker: the manager and the daemon client, wired on the agent's thread.
#include "loopguard/swarm_worker.hpp"

#include <chrono>

#include "client/recording.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard {
namespace {

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

struct swarm_worker::impl {
  explicit impl(manager_config c) : manager(std::move(c)) {}

  // Verdicts the daemon pushed since the last event go to the manager first, so the verdict of
  // this event carries them.
  void before() {
    if (!client) return;
    if (client->take_swarm_complete()) manager.on_swarm_complete();
    for (const auto& v : client->take_verdicts()) manager.on_swarm_verdict(v);
  }

  // Local detections are reported to the daemon (its API shows them per worker).
  verdict after(verdict v) {
    if (!client) return v;
    for (const auto& d : v.detections) {
      if (is_swarm_detector(d.detector)) continue;  // the daemon's own
      protocol::detection out;
      out.detector = std::string(to_string(d.detector));
      out.level = d.level;
      out.count = d.count;
      out.tool = d.tool;
      out.message = d.message;
      out.t = wall_seconds();
      client->report(std::move(out));
    }
    return v;
  }

  void attach(std::unique_ptr<daemon_client> c) {
    client = std::move(c);
    manager.set_call_sink([this](const judged_call& call) {
      protocol::event e;
      e.tool = call.tool;
      e.summary = call.summary;
      e.exact = call.exact;
      e.structural = call.structural;
      e.ok = call.ok;
      e.result = call.result;
      e.t = wall_seconds();
      e.spent = call.spent;
      e.spent.tokens = std::min(e.spent.tokens, protocol::kMaxEventTokens);  // sums of reports
      e.spent.amount = std::min(e.spent.amount, protocol::kMaxEventAmount);
      e.charge = call.charge;
      // A peer the daemon cannot take as a worker name would cost the whole event: left out.
      if (utf8::is_identifier(call.peer) && call.peer.size() <= protocol::kMaxNameBytes) {
        e.peer = call.peer;
      }
      client->send(std::move(e));
    });
  }

  // The recording's worker and swarm: given, else the connection's, else the format's defaults.
  result<std::pair<std::string, std::string>> recording_names(const recording_options& o) const {
    std::string worker = o.worker, swarm = o.swarm;
    if (worker.empty()) worker = client ? client->options().worker : "w0";
    if (swarm.empty()) swarm = client ? client->options().swarm : "default";
    for (const auto& [key, value] : {std::pair{"worker", &worker}, {"swarm", &swarm}}) {
      if (!utf8::is_identifier(*value) || value->size() > protocol::kMaxNameBytes) {
        return status::error(std::string("record: ") + key +
                             ": expected valid UTF-8 without U+FFFD, at most 128 bytes");
      }
    }
    return std::pair{std::move(worker), std::move(swarm)};
  }

  ExecutionEconomicsManager manager;
  std::unique_ptr<daemon_client> client;
  std::unique_ptr<client::recording> rec;  // while recording
};

swarm_worker::swarm_worker(manager_config config)
    : impl_(std::make_unique<impl>(std::move(config))) {}
swarm_worker::~swarm_worker() = default;
swarm_worker::swarm_worker(swarm_worker&&) noexcept = default;
swarm_worker& swarm_worker::operator=(swarm_worker&&) noexcept = default;

status swarm_worker::connect(client_options options) {
  if (impl_->client) return status::error("connect: this worker is already connected");
  if (status s = validate(options); !s.ok()) return s;
  options.observe = impl_->manager.config().mode == guard_mode::observe;
  impl_->attach(std::make_unique<daemon_client>(std::move(options)));
  return {};
}

status swarm_worker::connect(client_options options, boost::asio::io_context& io) {
  if (impl_->client) return status::error("connect: this worker is already connected");
  if (status s = validate(options); !s.ok()) return s;
  options.observe = impl_->manager.config().mode == guard_mode::observe;
  impl_->attach(std::make_unique<daemon_client>(std::move(options), io));
  return {};
}

verdict swarm_worker::on_tool_call(std::string_view tool, const nlohmann::json& args,
                                   std::string_view call_id, std::string_view peer) {
  impl_->before();
  verdict v = impl_->after(impl_->manager.on_tool_call(tool, args, call_id, peer));
  if (impl_->rec) impl_->rec->tool_call(tool, args, call_id, peer, v);
  return v;
}

verdict swarm_worker::on_tool_call_json(std::string_view tool, std::string_view args_json,
                                        std::string_view call_id, std::string_view peer) {
  impl_->before();
  verdict v = impl_->after(impl_->manager.on_tool_call_json(tool, args_json, call_id, peer));
  if (impl_->rec) impl_->rec->tool_call_json(tool, args_json, call_id, peer, v);
  return v;
}

verdict swarm_worker::on_tool_result(std::string_view tool, bool ok, std::string_view output,
                                     std::string_view call_id, const protocol::cost& cost) {
  impl_->before();
  const protocol::cost spent = protocol::sanitized(cost);
  verdict v = impl_->after(impl_->manager.on_tool_result(tool, ok, output, call_id, spent));
  if (impl_->rec) impl_->rec->tool_result(tool, ok, output, call_id, spent, v);
  return v;
}

verdict swarm_worker::on_text(std::string_view content) {
  impl_->before();
  verdict v = impl_->after(impl_->manager.on_text(content));
  if (impl_->rec) impl_->rec->text(content, v);
  return v;
}

verdict swarm_worker::on_text_chunk(std::string_view chunk) {
  impl_->before();
  verdict v = impl_->after(impl_->manager.on_text_chunk(chunk));
  if (impl_->rec) impl_->rec->chunk(chunk, v);
  return v;
}

verdict swarm_worker::on_user_message(std::string_view content) {
  impl_->before();
  verdict v = impl_->after(impl_->manager.on_user_message(content));
  if (impl_->rec) impl_->rec->user_message(content, v);
  return v;
}

verdict swarm_worker::on_resume() {
  impl_->before();
  verdict v = impl_->after(impl_->manager.on_resume());
  if (impl_->rec) impl_->rec->resume(v);
  return v;
}

verdict swarm_worker::add_cost(double amount) {
  return add_cost(protocol::cost{0, amount});
}

verdict swarm_worker::add_cost(const protocol::cost& cost) {
  impl_->before();
  verdict v = impl_->after(impl_->manager.add_cost(cost));
  if (impl_->rec) impl_->rec->cost(v);
  return v;
}

void swarm_worker::flush() {
  impl_->manager.flush_calls();
}

status swarm_worker::record(recording_options options) {
  if (impl_->rec) return status::error("record: this worker is already recording");
  if (const std::size_t n = impl_->manager.events(); n != 0) {
    return status::error("record: a recording starts before the run's first event; " +
                         std::to_string(n) + " events were judged already");
  }
  if (options.path.empty()) return status::error("record: path: expected a file name, got nothing");
  auto names = impl_->recording_names(options);
  if (!names) return names.error();
  auto rec = client::recording::open(options, impl_->manager.config(), std::move(names->first),
                                     std::move(names->second));
  if (!rec) return rec.error();
  impl_->rec = std::move(*rec);
  return {};
}

status swarm_worker::stop_recording() {
  if (!impl_->rec) return {};
  status s = impl_->rec->close();
  impl_->rec.reset();
  return s;
}

std::optional<recording_stats> swarm_worker::recording() const {
  if (!impl_->rec) return std::nullopt;
  return impl_->rec->stats();
}

ExecutionEconomicsManager& swarm_worker::manager() {
  return impl_->manager;
}
const ExecutionEconomicsManager& swarm_worker::manager() const {
  return impl_->manager;
}
daemon_client* swarm_worker::client() {
  return impl_->client.get();
}

}  // namespace loopguard
