#include "client_pool.hpp"

namespace loopguard::cli {

client_pool::client_pool() {
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
}

client_pool::~client_pool() {
  clients_.clear();  // each posts its own close
  work_.reset();     // run() returns once the closes are done
  thread_.join();
}

daemon_client& client_pool::add(client_options options) {
  clients_.push_back(std::make_unique<daemon_client>(std::move(options), io_));
  return *clients_.back();
}

status client_pool::wait_connected(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& c : clients_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!c->wait_connected(std::max(left, std::chrono::milliseconds(0)))) {
      return daemon_failure(*c, "cannot reach the daemon at " + c->options().url + " within " +
                                    duration_words(timeout));
    }
  }
  return {};
}

std::string duration_words(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + " s";
  return std::to_string(d.count()) + " ms";
}

status daemon_failure(const daemon_client& c, const std::string& what) {
  const client_stats s = c.stats();
  if (s.fatal && s.last_error.starts_with("TLS")) {
    return status::error("cannot trust the daemon at " + c.options().url + ": " + s.last_error);
  }
  if (s.fatal) {
    return status::error("the daemon at " + c.options().url +
                         " refused the connection: " + s.last_error);
  }
  return status::error(what + ": " + (s.last_error.empty() ? "no answer" : s.last_error));
}

}  // namespace loopguard::cli
