#include "service/swarm_move.hpp"

#include <algorithm>
#include <set>

#include "loopguard/hex.hpp"

namespace loopguard::daemon {
namespace {

std::string shown(std::string_view s) {
  std::string out(1, '"');
  out.append(s);
  out.push_back('"');
  return out;
}

status restore(checkpoint_store& store, swarm_service& service, std::string_view db) {
  const auto restored = service.restore_from(store);
  if (!restored) {
    return status::error("refusing " + std::string(db) + ": " + restored.error().message() +
                         "; the file was not modified");
  }
  return {};
}

// A compaction of everything the restore replayed (the daemon's own), then `swarm` cleared: its
// rows, sequence numbers, expired incarnations and last activity are deleted, and nothing the
// compaction took of it is written.
checkpoint folded_without(swarm_service& service, const std::string& swarm,
                          const swarm_export* existing) {
  checkpoint c = service.take_checkpoint(true);
  state_changes cleared;
  cleared.cleared_swarms.push_back(swarm);
  c.state.merge_newer(std::move(cleared));
  std::erase_if(c.sequences, [&](const sequence_row& r) { return r.id.swarm == swarm; });
  auto& ret = c.retention;
  const auto of_swarm = [&](const auto& r) { return r.id.swarm == swarm; };
  std::erase_if(ret.dropped, [&](const worker_identity& id) { return id.swarm == swarm; });
  std::erase_if(ret.seen, of_swarm);
  std::erase_if(ret.expired, of_swarm);
  std::erase_if(ret.forgotten, [&](const worker_identity& id) { return id.swarm == swarm; });
  std::erase_if(ret.swarms_seen, [&](const swarm_seen_row& r) { return r.swarm == swarm; });
  std::erase_if(ret.swarms_dropped, [&](const std::string& s) { return s == swarm; });
  for (const auto& r : service.sequences()) {
    if (r.id.swarm == swarm) ret.dropped.push_back(r.id);
  }
  if (existing) {
    for (const auto& r : existing->expired) ret.forgotten.push_back(r.id);
  }
  ret.swarms_dropped.push_back(swarm);
  return c;
}

}  // namespace

bool holds_counts(const swarm_export& e) {
  const auto any = [](const protocol::cost& c) { return c.tokens != 0 || c.amount != 0; };
  return !e.fingerprints.empty() || !e.workers.empty() || any(e.swarm.spent) ||
         any(e.swarm.wasted) || !e.swarm.handoffs.empty() || !e.expired.empty() ||
         std::any_of(e.sequences.begin(), e.sequences.end(),
                     [](const sequence_row& r) { return r.seq > 0; });
}

std::vector<std::string> swarm_names(const swarm_service& service) {
  std::vector<std::string> out;
  for (const auto& s : service.read([](const shared_economics_state& st) { return st.swarms(); })) {
    out.push_back(s.swarm);
  }
  std::sort(out.begin(), out.end());
  return out;
}

result<swarm_export> export_swarm(checkpoint_store& store, swarm_service& service,
                                  std::string_view swarm, std::string_view db) {
  if (auto s = restore(store, service, db); !s.ok()) return s;
  auto e = service.export_swarm(swarm);
  if (!e) {
    return status::error(std::string(db) + " holds no swarm " + shown(swarm) +
                         " (neither live nor a tombstone)");
  }
  return std::move(*e);
}

status import_swarm(checkpoint_store& store, swarm_service& service, const swarm_export& e,
                    std::string_view db) {
  if (auto s = restore(store, service, db); !s.ok()) return s;
  const std::string& name = e.swarm.swarm;
  const auto existing = service.export_swarm(name);
  std::size_t counted_incarnations = 0;
  for (const auto& r : service.sequences()) {
    if (r.id.swarm == name && r.seq > 0) ++counted_incarnations;
  }
  if ((existing && holds_counts(*existing)) || counted_incarnations > 0) {
    return status::error(
        std::string(db) + " already holds swarm " + shown(name) + " (" +
        std::to_string(existing ? existing->fingerprints.size() : 0) + " fingerprints, " +
        std::to_string(existing ? existing->workers.size() : 0) + " workers, " +
        std::to_string(counted_incarnations) +
        " incarnations with sequence numbers): refusing to replace it; nothing was written");
  }
  checkpoint c = folded_without(service, name, existing ? &*existing : nullptr);
  state_changes rows;
  rows.swarms.push_back(e.swarm);
  rows.workers = e.workers;
  rows.fingerprints = e.fingerprints;
  c.state.merge_newer(std::move(rows));
  // The cleared swarm's sequence rows are deleted after the sequences are written (retention
  // steps come last): keep only the drops of identities the import does not write.
  std::set<worker_identity> written;
  for (const auto& r : e.sequences) written.insert(r.id);
  std::erase_if(c.retention.dropped,
                [&](const worker_identity& id) { return written.contains(id); });
  for (const auto& r : e.sequences) c.sequences.push_back(r);
  std::set<worker_identity> remembered;
  for (const auto& r : e.expired) remembered.insert(r.id);
  std::erase_if(c.retention.forgotten,
                [&](const worker_identity& id) { return remembered.contains(id); });
  for (const auto& r : e.expired) c.retention.expired.push_back(r);
  std::erase_if(c.retention.swarms_dropped, [&](const std::string& s) { return s == name; });
  if (e.seen > 0) c.retention.swarms_seen.push_back({name, e.seen});
  if (auto s = write_checkpoint(store, c); !s.ok()) {
    return s.with_context("importing swarm " + shown(name) + " into " + std::string(db) +
                          " (nothing of it was made current): ");
  }
  return {};
}

status remove_swarm(checkpoint_store& store, swarm_service& service, const swarm_export& e,
                    std::string_view db) {
  if (auto s = restore(store, service, db); !s.ok()) return s;
  const std::string& name = e.swarm.swarm;
  const auto current = service.export_swarm(name);
  if (!current) {
    return status::error(std::string(db) + " holds no swarm " + shown(name) +
                         " (removed already?); nothing was written");
  }
  if (encode_swarm_payload(*current) != encode_swarm_payload(e)) {
    return status::error(std::string(db) + " holds swarm " + shown(name) +
                         " in another state than the export (it changed since: digest " +
                         to_hex(current->digest) + " there, " + to_hex(e.digest) +
                         " exported); export it again; nothing was written");
  }
  const checkpoint c = folded_without(service, name, &*current);
  if (auto s = write_checkpoint(store, c); !s.ok()) {
    return s.with_context("removing swarm " + shown(name) + " from " + std::string(db) +
                          " (nothing of it was made current): ");
  }
  return {};
}

}  // namespace loopguard::daemon
