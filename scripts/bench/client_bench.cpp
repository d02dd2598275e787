// What the SDK's daemon client costs an agent, against a real loopguardd (scripts/bench/client
// starts one): the time per judged call (on_tool_call + on_tool_result) of a swarm_worker
// connected to the daemon vs. the manager alone, measured in alternating rounds; and the events
// per second one daemon_client sustains into the daemon (sent until all are acknowledged).
// Prints one line per round and the medians; not a test.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "loopguard/swarm_worker.hpp"

using namespace loopguard;
using clk = std::chrono::steady_clock;

namespace {

struct args {
  unsigned short port = 0;
  int rounds = 7;
  int calls = 20000;    // judged calls per round, for the per-call cost
  int events = 200000;  // events per round, for the sustained rate
};

client_options options(const args& a, const std::string& swarm) {
  client_options o;
  o.url = "ws://127.0.0.1:" + std::to_string(a.port);
  o.swarm = swarm;
  o.worker = "bench";
  o.outbox = static_cast<std::size_t>(a.events) + 1;
  return o;
}

double cpu_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct cost {
  double thread_ns = 0;   // CPU time of the agent's thread, per judged call
  double process_ns = 0;  // CPU time of the whole process (the client's I/O thread too)
};

ExecutionEconomicsManager& manager_of(ExecutionEconomicsManager& m) {
  return m;
}
ExecutionEconomicsManager& manager_of(swarm_worker& w) {
  return w.manager();
}

// Per judged call of a varied agent (every call distinct), as a healthy agent is. CPU time, not
// wall time: on a machine with two cores the daemon, which runs beside, would otherwise be
// counted as the client's cost whenever the scheduler preempts the agent for it.
template <class Guard>
cost per_call(Guard& g, int calls, int round) {
  const double t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 0; i < calls; ++i) {
    // A run of 200 calls, then a fresh one: a healthy run stays below the limits (the
    // iteration limit would otherwise make every later call a detection).
    if (i % 200 == 0) manager_of(g).reset();
    const std::string args = R"({"path":"src/file_)" + std::to_string(round) + "_" +
                             std::to_string(i) + R"(.cpp","limit":200})";
    g.on_tool_call_json("read_file", args);
    g.on_tool_result("read_file", true, "line 1\nline 2\nline 3 of file " + std::to_string(i));
  }
  return {(cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / calls,
          (cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - p0) / calls};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Events per second from the first send() until the daemon acknowledged the last one.
double sustained_rate(const args& a, int round) {
  daemon_client c(options(a, "bench-rate-" + std::to_string(round)));
  if (!c.wait_connected(std::chrono::seconds(10))) return 0;
  protocol::event e;
  e.tool = "search";
  e.summary = "query=bench";
  e.result = 7;
  const auto start = clk::now();
  for (int i = 0; i < a.events; ++i) {
    e.exact = 1 + static_cast<std::uint64_t>(i % 1000);
    e.structural = e.exact + 1000000;
    e.t = i * 0.001;
    c.send(e);
  }
  if (!c.wait_acknowledged(static_cast<std::uint64_t>(a.events), std::chrono::seconds(120))) {
    return 0;
  }
  return a.events / std::chrono::duration<double>(clk::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  CLI::App app{"loopguard client benchmark"};
  app.add_option("--port", a.port, "loopguardd port on 127.0.0.1")->required();
  app.add_option("--rounds", a.rounds);
  app.add_option("--calls", a.calls);
  app.add_option("--events", a.events);
  CLI11_PARSE(app, argc, argv);

  std::vector<double> alone, attached, added, added_process, rates;
  for (int r = 0; r < a.rounds; ++r) {
    ExecutionEconomicsManager m;
    swarm_worker w;
    if (!w.connect(options(a, "bench-calls-" + std::to_string(r))).ok() ||
        !w.client()->wait_connected(std::chrono::seconds(10))) {
      std::fprintf(stderr, "client bench: cannot connect to 127.0.0.1:%u\n", a.port);
      return 1;
    }
    const cost m_ns = per_call(m, a.calls, r);
    const cost w_ns = per_call(w, a.calls, r);
    alone.push_back(m_ns.thread_ns);
    attached.push_back(w_ns.thread_ns);
    added.push_back(w_ns.thread_ns - m_ns.thread_ns);
    added_process.push_back(w_ns.process_ns - m_ns.process_ns);
    rates.push_back(sustained_rate(a, r));
    std::printf(
        "round %d: manager %.0f ns/call, with client %.0f ns/call (+%.0f on the agent's "
        "thread, +%.0f in the process); one client %.0f events/s\n",
        r + 1, m_ns.thread_ns, w_ns.thread_ns, added.back(), added_process.back(), rates.back());
  }
  std::printf(
      "median: manager alone %.0f ns of CPU per judged call; with the client attached "
      "%.0f ns (+%.0f ns on the agent's thread, target < 1000 ns: %s; +%.0f ns in the "
      "whole process, the client's I/O thread included); one client sustains %.0f "
      "events/s\n",
      median(alone), median(attached), median(added), median(added) < 1000 ? "met" : "MISSED",
      median(added_process), median(rates));
  return 0;
}
