// The swarm's verdicts as loopguardd pushed them to one worker (docs/sdk.md, "Swarm verdicts"):
// the active ones per (kind, fingerprint), which judge matching calls at critical, and the
// nudges not yet delivered. Internal to the SDK; pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loopguard/protocol.hpp"
#include "loopguard/severity.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard::sdk {

class global_verdicts {
 public:
  // Active verdicts kept at most; beyond, a verdict of a new fingerprint is ignored until
  // others are lifted (a daemon declares a handful; this bounds a hostile one).
  static constexpr std::size_t kMaxActive = 10000;

  struct key {
    // "exact" | "structural": matches calls with that fingerprint; "budget" (fingerprint 0):
    // matches every call; another kind is kept, but matches no call.
    std::string kind;
    std::uint64_t fingerprint = 0;
    friend bool operator==(const key&, const key&) = default;
  };
  // Level none lifts `k` (its nudge, if still waiting, is dropped); a verdict already active
  // at the same level is not delivered again (a reconnect resends the active ones); any other
  // becomes active and waits for delivery, replacing a waiting nudge of the same fingerprint.
  void record(protocol::verdict v);  // its tool and message already repaired (valid UTF-8)

  bool has_waiting() const { return !waiting_.empty(); }
  // The swarm completed (swarm_complete): every verdict is lifted, waiting nudges dropped.
  void clear() {
    active_.clear();
    waiting_.clear();
    critical_ = 0;
  }
  // The verdict at event `index`: adds to its local `detections` (sorted strongest first; their
  // action `local`) the detection of the verdict the judged call matches, if any (critical_match),
  // and one per waiting nudge, which are then delivered. Returns the verdict's action: the one
  // its first detection calls for. At an equal level the matched verdict goes before the local
  // detections (it rejects when `rejects`: the reject_at_critical setting), the nudges after
  // them (they never reject).
  action merge(std::vector<detection>& detections, std::size_t index, const key* match,
               action local, bool rejects);

  // The verdict a call with these fingerprints runs into: an active one of level critical or
  // above for its exact or its structural fingerprint, or the swarm's budget (the stronger;
  // exact, then structural, on a tie); nullptr
  // when there is none. Valid until the next record(). Costs a comparison when none is active.
  const key* critical_match(std::uint64_t exact, std::uint64_t structural) const {
    return critical_ == 0 ? nullptr : find_critical(exact, structural);
  }
  // The detection of an active verdict, at event `index`.
  detection detection_of(const key& k, std::size_t index) const;

 private:
  struct key_hash {
    std::size_t operator()(const key& k) const noexcept {
      return std::hash<std::uint64_t>()(k.fingerprint) ^ std::hash<std::string>()(k.kind);
    }
  };
  struct entry {
    protocol::verdict verdict;
    bool waiting = false;  // its nudge was not delivered yet
  };
  static bool matches_calls(const key& k, const entry& e);
  // Appends one detection per waiting nudge, in the order they came, and forgets them; the
  // nudge of `except` (the verdict a matching call carries already) is forgotten without one.
  void deliver(std::vector<detection>& out, std::size_t index, const key* except);
  const std::pair<const key, entry>* find(const char* kind, std::uint64_t fingerprint) const;
  const key* find_critical(std::uint64_t exact, std::uint64_t structural) const;
  void lift(const key& k);

  std::unordered_map<key, entry, key_hash> active_;
  std::vector<key> waiting_;  // keys whose nudge waits, in arrival order
  std::size_t critical_ = 0;  // active entries that calls can match (matches_calls)
};

}  // namespace loopguard::sdk
