// `loopguard inspect`: what a running loopguardd knows, from its HTTP API (docs/inspect.md):
// the swarms, or one swarm's workers, top fingerprints and active verdicts, as aligned tables
// or (--json) as the daemon's JSON. Errors are one line on stderr and a non-zero exit.
#include <fstream>
#include <iostream>

#include "cluster/cluster_ring.hpp"
#include "commands.hpp"
#include "daemon_http.hpp"
#include "inspect_tables.hpp"
#include "inspect_view.hpp"
#include "loopguard/canonical_json.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/utf8.hpp"
#include "trace_file.hpp"

namespace loopguard::cli {
namespace {

// Exit statuses (docs/inspect.md): 2 is kExitBadInput, as for every command.
constexpr int kExitNoSwarm = 1;
constexpr int kExitDaemon = 3;

struct inspect_options {
  std::vector<std::string> urls;  // --daemon, repeatable
  std::string cluster_file;       // --cluster: every server of a cluster file
  std::string token, swarm, ca_file;
  bool json = false, swarm_given = false;
  double timeout_seconds = 10;
};

// A failure: the line to print and the exit status.
struct failure {
  int exit;
  std::string message;
};

template <class T>
using outcome = boost::system::result<T, failure>;

std::string json_quoted(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

status check_options(const inspect_options& o) {
  if (o.swarm_given && (o.swarm.empty() || o.swarm.size() > protocol::kMaxNameBytes ||
                        !utf8::is_identifier(o.swarm))) {
    return status::error("--swarm: expected 1.." + std::to_string(protocol::kMaxNameBytes) +
                         " bytes of valid UTF-8");
  }
  if (!o.ca_file.empty() && !std::ifstream(o.ca_file)) {
    return status::error("--ca-file " + o.ca_file + ": cannot read the file");
  }
  if (o.token.size() > 4096 || !utf8::is_identifier(o.token)) {
    return status::error("--token: expected at most 4096 bytes of valid UTF-8");
  }
  for (const char c : o.token) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      return status::error("--token: holds a control character");
    }
  }
  return {};
}

// GETs `target` and turns every answer but 200 into the failure a person can act on.
outcome<std::string> fetch(const inspect_options& o, const http_address& at,
                           const std::string& target) {
  const std::string where = at.authority();
  http_request rq;
  rq.target = target;
  rq.token = o.token;
  rq.ca_file = o.ca_file;
  rq.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_seconds * 1000));
  auto answer = http_get(at, rq);
  if (!answer) {
    return failure{kExitDaemon, "cannot reach the daemon at " + where + ": " +
                                    utf8::repair(answer.error().message())};
  }
  const unsigned code = answer->status;
  const std::string said = utf8::repair(error_of(answer->body));
  const std::string status_line = std::to_string(code) + " " + utf8::repair(answer->reason);
  if (code == 200) return std::move(answer->body);
  if (code == 401 || code == 403) {
    // 403 with a token: a right one that is a worker's, which reads no swarm over HTTP.
    const std::string check = code == 403 ? "the API takes an admin token, --token is a worker's"
                                          : "check --token against the daemon's tokens";
    return failure{kExitDaemon, o.token.empty()
                                    ? "the daemon at " + where + " wants a token (" + status_line +
                                          "): give it with --token"
                                    : "the daemon at " + where + " refused the token (" +
                                          status_line + "): " + check};
  }
  if (code == 404 && o.swarm_given && target != "/api/swarms") {
    return failure{kExitNoSwarm, "no swarm " + json_quoted(o.swarm) + " on " + where};
  }
  return failure{kExitDaemon, "the daemon at " + where + " answered " + status_line + " to GET " +
                                  target + (said.empty() ? "" : ": " + said)};
}

failure malformed(const http_address& at, const std::string& target, const status& why) {
  return {kExitDaemon, "the daemon at " + at.authority() + " sent a malformed answer to GET " +
                           target + ": " + utf8::repair(why.message())};
}

outcome<std::string> show_detail(const inspect_options& o, const http_address& at,
                                 const std::string& swarm) {
  const std::string target = "/api/swarms/" + percent_encode(swarm);
  auto body = fetch(o, at, target);
  if (!body) return body.error();
  auto detail = parse_swarm_detail(*body);
  if (!detail) return malformed(at, target, detail.error());
  return o.json ? json_input::dump(detail->document) + "\n" : swarm_text(detail->view);
}

// Without --swarm: the table of swarms, and when there is exactly one, its detail below.
outcome<std::string> show_list(const inspect_options& o, const http_address& at) {
  const std::string target = "/api/swarms";
  auto body = fetch(o, at, target);
  if (!body) return body.error();
  auto list = parse_swarm_list(*body);
  if (!list) return malformed(at, target, list.error());
  if (o.json) return json_input::dump(list->document) + "\n";
  const std::vector<swarm_summary_view> swarms = std::move(list->view);
  std::string out = swarms_text(swarms);
  if (swarms.size() == 1) {
    auto detail = show_detail(o, at, swarms.front().swarm);
    if (!detail) return detail.error();
    out += "\n" + *detail;
  }
  return out;
}

// One daemon of several: how inspect names it (its server name in a cluster file, else its
// host:port) and where it is.
struct target {
  std::string label;
  http_address at;
};

result<std::vector<target>> targets_of(const inspect_options& o) {
  std::vector<target> out;
  for (const auto& url : o.urls) {
    auto at = parse_http_address(url);
    if (!at) return at.error().with_context("--daemon: ");
    out.push_back({at->authority(), *at});
  }
  if (!o.cluster_file.empty()) {
    auto ring = cluster::load_ring(o.cluster_file);
    if (!ring) return ring.error().with_context("--cluster: ");
    for (const auto& server : ring->servers) {
      auto at = parse_http_address("http://" + server.address);
      if (!at) return at.error().with_context("--cluster: " + server.name + ": ");
      out.push_back({server.name, *at});
    }
  }
  if (out.empty()) return status::error("give --daemon URL (repeatable) or --cluster FILE");
  return out;
}

void report(const failure& f) {
  std::cerr << "loopguard inspect: " << f.message << '\n';
}

outcome<parsed_answer<std::vector<swarm_summary_view>>> read_list(const inspect_options& o,
                                                                  const http_address& at) {
  auto body = fetch(o, at, "/api/swarms");
  if (!body) return body.error();
  auto list = parse_swarm_list(*body);
  if (!list) return malformed(at, "/api/swarms", list.error());
  return std::move(*list);
}

// Several daemons, no --swarm: every daemon's swarms in one table with the daemon holding each;
// a daemon that cannot be read is reported on stderr (exit 3) and the others are still shown.
int list_many(const inspect_options& o, const std::vector<target>& targets) {
  std::vector<swarm_summary_view> all;
  nlohmann::json swarms = nlohmann::json::array(), unreachable = nlohmann::json::array();
  std::vector<failure> failed;
  for (const auto& t : targets) {
    auto list = read_list(o, t.at);
    if (!list) {
      failed.push_back(list.error());
      unreachable.push_back({{"daemon", t.label}, {"error", list.error().message}});
      continue;
    }
    for (auto& v : list->view) {
      v.daemon = t.label;
      all.push_back(std::move(v));
    }
    for (auto& j : list->document["swarms"]) {
      j["daemon"] = t.label;
      swarms.push_back(std::move(j));
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.swarm < b.swarm; });
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (all[i].swarm == all[i - 1].swarm) {
      report({0, "swarm " + json_quoted(all[i].swarm) + " is on " + all[i - 1].daemon + " and " +
                     all[i].daemon + " (a swarm should have one owner: docs/scaling.md)"});
    }
  }
  if (o.json) {
    std::cout << json_input::dump(nlohmann::json{{"swarms", swarms}, {"unreachable", unreachable}})
              << '\n';
  } else {
    std::cout << swarms_text(all);
  }
  std::cout << std::flush;
  for (const auto& f : failed) report(f);
  return failed.empty() ? 0 : kExitDaemon;
}

// Several daemons, --swarm S: the swarm on whichever daemon has it (the first, in the order
// given; another copy is reported as a split). Unreadable daemons are reported on stderr.
int detail_many(const inspect_options& o, const std::vector<target>& targets) {
  const std::string path = "/api/swarms/" + percent_encode(o.swarm);
  std::vector<failure> failed;
  std::vector<std::pair<const target*, parsed_answer<swarm_detail_view>>> found;
  for (const auto& t : targets) {
    auto body = fetch(o, t.at, path);
    if (!body) {
      if (body.error().exit != kExitNoSwarm) failed.push_back(body.error());
      continue;
    }
    auto detail = parse_swarm_detail(*body);
    if (!detail) {
      failed.push_back(malformed(t.at, path, detail.error()));
      continue;
    }
    found.emplace_back(&t, std::move(*detail));
  }
  for (const auto& f : failed) report(f);
  if (found.empty()) {
    report({0, "no swarm " + json_quoted(o.swarm) + " on " +
                   (failed.empty() ? "any of the " : "the ") +
                   std::to_string(targets.size() - failed.size()) + " daemons" +
                   (failed.empty() ? "" : " that answered")});
    return failed.empty() ? kExitNoSwarm : kExitDaemon;
  }
  for (std::size_t i = 1; i < found.size(); ++i) {
    report({0, "swarm " + json_quoted(o.swarm) + " is also on " + found[i].first->label +
                   " (a swarm should have one owner: docs/scaling.md); showing " +
                   found.front().first->label});
  }
  auto& [where, detail] = found.front();
  if (o.json) {
    detail.document["daemon"] = where->label;
    std::cout << json_input::dump(detail.document) << '\n';
  } else {
    std::cout << "daemon " << where->label << "\n" << swarm_text(detail.view);
  }
  std::cout << std::flush;
  return 0;
}

int run_inspect(const inspect_options& o) {
  const auto targets = targets_of(o);
  const status checked = targets ? check_options(o) : targets.error();
  if (!checked.ok()) {
    std::cerr << "loopguard inspect: " << utf8::repair(checked.message()) << '\n';
    return kExitBadInput;
  }
  if (targets->size() > 1 || !o.cluster_file.empty()) {
    return o.swarm_given ? detail_many(o, *targets) : list_many(o, *targets);
  }
  const http_address& at = targets->front().at;
  const auto text = o.swarm_given ? show_detail(o, at, o.swarm) : show_list(o, at);
  if (!text) {
    report(text.error());
    return text.error().exit;
  }
  std::cout << *text << std::flush;
  return 0;
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto o = std::make_shared<inspect_options>();
  auto* cmd = app.add_subcommand(
      "inspect", "What a running loopguardd knows: swarms, workers, top fingerprints, verdicts");
  cmd->add_option("--daemon", o->urls,
                  "http://HOST:PORT of the loopguardd, https:// when it serves TLS (ws://, wss:// "
                  "are taken too); repeat it for several daemons (their views merged)");
  cmd->add_option("--cluster", o->cluster_file,
                  "A cluster file (docs/scaling.md): read every daemon in it, merge their views");
  cmd->add_option("--ca-file", o->ca_file,
                  "PEM CA certificate(s) to verify the daemon's TLS certificate with (default: "
                  "the system's)")
      ->envname("LOOPGUARD_CA_FILE");
  cmd->add_option("--token", o->token, "The daemon's token, sent as Authorization: Bearer");
  auto* s = cmd->add_option("--swarm", o->swarm,
                            "One swarm: its workers, top fingerprints and active verdicts");
  cmd->add_flag("--json", o->json, "Print the daemon's JSON (one document) instead of tables");
  cmd->add_option("--timeout", o->timeout_seconds,
                  "Seconds to wait for each answer of the daemon (default 10)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->footer(
      "Exit status: 0 ok; 1 no such swarm (--swarm); 2 bad options; 3 the daemon (with several: "
      "one of them) could not be reached, refused the token or sent an answer that is not its "
      "API's.");
  cmd->callback([o, s] {
    o->swarm_given = s->count() > 0;
    if (int rc = run_inspect(*o); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace loopguard::cli
