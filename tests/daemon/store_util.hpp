// Helpers shared by the daemon tests that open a store or restore a service from one.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "service/swarm_service.hpp"
#include "store/sqlite_checkpoint_store.hpp"

namespace loopguard::test {

// The daemon's store on `path`, which must open (in memory unless the file is the point).
inline std::unique_ptr<daemon::sqlite_checkpoint_store> open_ok(
    const std::string& path = ":memory:") {
  auto store = daemon::sqlite_checkpoint_store::open(path);
  REQUIRE_MESSAGE(store.has_value(), store.error().message());
  return std::move(*store);
}

// Why `path` is refused (it must be).
inline std::string refusal(const std::string& path) {
  const auto store = daemon::sqlite_checkpoint_store::open(path);
  REQUIRE_FALSE(store.has_value());
  return store.error().message();
}

inline std::uint64_t digest_of(const daemon::swarm_service& svc) {
  return svc.read([](const daemon::shared_economics_state& s) { return s.digest(); });
}

struct loaded {
  std::uint64_t digest = 0;
  std::vector<daemon::sequence_row> sequences;  // sorted by identity
  std::size_t records = 0;                      // log records replayed
};

// What the daemon restores from `store` (swarm_service::restore_from). The log is replayed under
// `rules`: they must be the rules that applied the events.
inline loaded load(daemon::checkpoint_store& store, const daemon::swarm_rules& rules = {}) {
  daemon::swarm_service svc(rules);
  const auto r = svc.restore_from(store);
  REQUIRE_MESSAGE(r.has_value(), r.error().message());
  return {digest_of(svc), svc.sequences(), r->records};
}

}  // namespace loopguard::test
