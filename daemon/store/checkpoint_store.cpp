#include "loopguard/daemon/checkpoint_store.hpp"

namespace loopguard::daemon {

store_status write_checkpoint(checkpoint_store& store, const checkpoint& c) {
  store_status s = store.begin();
  if (!s.ok()) return s;
  const auto each = [&](const auto& rows, auto&& put) {
    for (const auto& r : rows) {
      if (!s.ok()) return;
      s = put(r);
    }
  };
  each(c.state.cleared_swarms, [&](const std::string& r) { return store.clear_swarm(r); });
  each(c.state.swarms, [&](const swarm_row& r) { return store.put_swarm(r); });
  each(c.state.workers, [&](const worker_row& r) { return store.put_worker(r); });
  each(c.state.fingerprints, [&](const fingerprint_row& r) { return store.put_fingerprint(r); });
  each(c.state.erased, [&](const fingerprint_ref& r) { return store.erase_fingerprint(r); });
  each(c.sequences, [&](const sequence_row& r) { return store.put_sequence(r); });
  if (s.ok()) s = store.commit();
  if (!s.ok()) store.rollback();
  return s;
}

}  // namespace loopguard::daemon
