// `loopguard simulate`: synthetic agents against a real loopguardd, for demos and load. N
// workers (one daemon_client each, all on one I/O thread), K of them sharing a dead end; every
// verdict a worker receives is printed as it arrives, and a summary at the end.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <thread>

#include "client_pool.hpp"
#include "commands.hpp"
#include "loopguard/canonical_json.hpp"
#include "loopguard/utf8.hpp"
#include "run_swarm_id.hpp"
#include "simulated_agent.hpp"
#include "trace_file.hpp"

namespace loopguard::cli {
namespace {

using clock_type = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(10);

struct simulate_options {
  std::string url, token, swarm, ca_file;
  std::size_t workers = 0, stuck = 0;
  double rate = 5, duration = 10, timeout_seconds = 10;
  protocol::cost per_call;  // what each call reports it cost (--tokens, --amount)
};

struct worker {
  std::string name;
  simulated_agent agent;
  daemon_client* client = nullptr;
  std::uint64_t verdicts = 0;
};

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

class simulation {
 public:
  explicit simulation(const simulate_options& o) : o_(o) {}

  status start();
  void drive();
  void flush();
  void print_summary() const;

 private:
  double elapsed() const {
    return std::chrono::duration<double>(clock_type::now() - start_).count();
  }
  void print_verdicts();
  void poll_until(clock_type::time_point until);

  const simulate_options& o_;
  client_pool pool_;
  std::vector<worker> workers_;
  std::map<severity, std::uint64_t> by_level_;
  clock_type::time_point start_;
};

status simulation::start() {
  for (std::size_t i = 0; i < o_.workers; ++i) {
    client_options c;
    c.url = o_.url;
    c.token = o_.token;
    c.ca_file = o_.ca_file;
    c.swarm = o_.swarm;
    c.worker = "w" + std::to_string(i + 1);
    c.backoff_min = std::chrono::milliseconds(50);
    c.backoff_max = std::chrono::milliseconds(1000);
    if (status s = validate(c); !s.ok()) return s.with_context("--daemon: ");
    workers_.push_back({c.worker, simulated_agent(i, i < o_.stuck), nullptr, 0});
    workers_.back().client = &pool_.add(std::move(c));
  }
  if (status s = pool_.wait_connected(millis(o_.timeout_seconds)); !s.ok()) return s;
  std::cout << "simulate: swarm \"" << o_.swarm << "\" on " << o_.url << ", " << o_.workers
            << " workers (" << o_.stuck << " stuck), " << o_.rate << " events/s each for "
            << o_.duration << " s\n"
            << std::flush;
  start_ = clock_type::now();
  return {};
}

// Prints every verdict received since the last call, one line each.
void simulation::print_verdicts() {
  std::string out;
  for (worker& w : workers_) {
    for (const protocol::verdict& v : w.client->take_verdicts()) {
      ++w.verdicts;
      ++by_level_[v.level];
      char when[32];
      std::snprintf(when, sizeof when, "%.2fs ", elapsed());
      out += when + w.name + " told: level=" + std::string(to_string(v.level)) + " kind=" + v.kind +
             " tool=";
      append_json_string(out, v.tool);
      out += " calls=" + std::to_string(v.calls) + " workers=" + std::to_string(v.workers) +
             " message=";
      append_json_string(out, v.message);
      out += '\n';
    }
  }
  std::cout << out << std::flush;
}

void simulation::poll_until(clock_type::time_point until) {
  for (;;) {
    print_verdicts();
    const auto now = clock_type::now();
    if (now >= until) return;
    std::this_thread::sleep_for(std::min<clock_type::duration>(kPoll, until - now));
  }
}

// Every worker sends one event per 1/rate seconds for `duration` seconds.
void simulation::drive() {
  const auto steps =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(o_.rate * o_.duration)));
  for (std::uint64_t step = 0; step < steps; ++step) {
    poll_until(start_ + millis(static_cast<double>(step) / o_.rate));
    const double t = elapsed();
    for (worker& w : workers_) {
      protocol::event e = w.agent.event(step, t);
      e.spent = o_.per_call;
      w.client->send(std::move(e));
    }
  }
}

// Waits (up to the timeout) for every event's acknowledgement, then for every worker to have
// received every verdict any of them received.
void simulation::flush() {
  const auto deadline = clock_type::now() + millis(o_.timeout_seconds);
  const auto left = [&] {
    return std::max(
        std::chrono::milliseconds(0),
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()));
  };
  for (worker& w : workers_) w.client->wait_acknowledged(w.client->stats().sent, left());
  print_verdicts();
  std::uint64_t most = 0;
  for (const worker& w : workers_) most = std::max(most, w.verdicts);
  for (worker& w : workers_) w.client->wait_verdicts(most, left());
  print_verdicts();
}

void simulation::print_summary() const {
  std::string out = "summary:\n";
  for (const worker& w : workers_) {
    const client_stats s = w.client->stats();
    out += w.name + (w.agent.stuck() ? " stuck" : " healthy") + ": sent " + std::to_string(s.sent) +
           ", acknowledged " + std::to_string(s.acknowledged) + ", verdicts " +
           std::to_string(w.verdicts);
    if (s.overflow_dropped > 0) out += ", dropped " + std::to_string(s.overflow_dropped);
    if (s.acknowledged < s.sent) out += " (not all acknowledged: " + s.last_error + ")";
    out += '\n';
  }
  std::uint64_t total = 0;
  std::string levels;
  for (const auto& [level, n] : by_level_) {
    total += n;
    levels +=
        (levels.empty() ? "" : ", ") + std::string(to_string(level)) + " " + std::to_string(n);
  }
  out += "verdicts: " + std::to_string(total) + " received in all";
  std::cout << out << (levels.empty() ? "" : " (" + levels + ")") << '\n';
}

int run_simulate(simulate_options o) {
  if (o.stuck > o.workers) {
    std::cerr << "loopguard simulate: --stuck " << o.stuck << " is more than --workers "
              << o.workers << '\n';
    return kExitBadInput;
  }
  if (o.swarm.empty()) o.swarm = run_swarm_id("sim", random_run_tag());
  simulation sim(o);
  if (status s = sim.start(); !s.ok()) {
    std::cerr << "loopguard simulate: " << utf8::repair(s.message()) << '\n';
    return kExitBadInput;
  }
  sim.drive();
  sim.flush();
  sim.print_summary();
  return 0;
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto o = std::make_shared<simulate_options>();
  auto* cmd = app.add_subcommand(
      "simulate", "Synthetic agents against a loopguardd: K of N share a dead end (demos, load)");
  cmd->add_option("--daemon", o->url, "ws://HOST:PORT of the loopguardd (wss:// for TLS)")
      ->required();
  cmd->add_option("--token", o->token, "The daemon's token");
  cmd->add_option("--ca-file", o->ca_file,
                  "wss://: PEM CA certificate(s) to verify the daemon with (default: the "
                  "system's)")
      ->envname("LOOPGUARD_CA_FILE");
  cmd->add_option("--workers", o->workers, "Workers (1..1000)")
      ->required()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--stuck", o->stuck, "How many of them share a dead end")->required();
  cmd->add_option("--rate", o->rate, "Events per second per worker (default 5)")
      ->check(CLI::Range(0.1, 10000.0));
  cmd->add_option("--duration", o->duration, "Seconds to run (default 10)")
      ->check(CLI::Range(0.1, 86400.0));
  cmd->add_option("--tokens", o->per_call.tokens,
                  "Tokens each call reports it cost (default 0; needs the daemon's feature cost)")
      ->check(CLI::Range(std::uint64_t{0}, protocol::kMaxEventTokens));
  cmd->add_option("--amount", o->per_call.amount,
                  "Amount each call reports it cost, in the swarm's unit (default 0)")
      ->check(CLI::Range(0.0, protocol::kMaxEventAmount));
  cmd->add_option("--swarm", o->swarm, "Swarm id (default: sim~r<random hex>, new every run)");
  cmd->add_option("--timeout", o->timeout_seconds,
                  "Seconds to wait for the daemon: to connect, and for the final "
                  "acknowledgements (default 10)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->footer(
      "Exit status: 0 ok; 2 bad options, or the daemon could not be reached or refused the "
      "connection.");
  cmd->callback([o] {
    if (int rc = run_simulate(*o); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace loopguard::cli
