// Daemon clients on one I/O thread: `replay --daemon` and `simulate` connect one
// loopguard::daemon_client per worker, all driven by one io_context.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "loopguard/daemon_client.hpp"
#include "loopguard/status.hpp"

namespace loopguard::cli {

class client_pool {
 public:
  client_pool();
  ~client_pool();  // closes every client, then stops the I/O thread
  client_pool(const client_pool&) = delete;
  client_pool& operator=(const client_pool&) = delete;

  // A new client; it starts connecting at once. The reference lives as long as the pool.
  daemon_client& add(client_options options);
  // Waits until every client is connected. Otherwise one line saying why: the daemon refused
  // a client (a wrong token), or it could not be reached within `timeout`.
  status wait_connected(std::chrono::milliseconds timeout);

 private:
  boost::asio::io_context io_{1};
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::vector<std::unique_ptr<daemon_client>> clients_;
  std::thread thread_;
};

// "N s" or "N ms", for messages.
std::string duration_words(std::chrono::milliseconds d);

// Why `c` did not get what it waited for: "the daemon at URL refused the connection:
// unauthorized: ..." when it was refused for good, else `what` (what did not happen in time)
// and the client's last error.
status daemon_failure(const daemon_client& c, const std::string& what);

}  // namespace loopguard::cli
