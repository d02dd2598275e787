// The judge hook's side of a run: the bounded recent history it is shown and when it is asked
// (docs/detectors.md, "[judge]"). Pure; the manager calls the caller's judge with what this
// builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>

#include "detectors/finding.hpp"
#include "loopguard/config.hpp"
#include "loopguard/judge.hpp"

namespace loopguard::sdk {

class judge_state {
 public:
  explicit judge_state(const judge_rule& rule) : rule_(rule) {}

  // Remembers an event for the digest (its text cut to the rule's per-event bytes).
  void note(std::size_t index, std::string_view kind, std::string_view tool, std::string_view text,
            bool ok);
  // Whether to ask now, at model turn `turn`, given whether a rule fired on this event; "" no.
  std::string_view due(std::uint64_t turn, bool warned) const;
  judge_digest digest(std::uint64_t turn, std::string_view why,
                      std::vector<std::string> warning) const;
  // The answer (or none) to the question asked at `turn`: a finding above the threshold.
  std::optional<finding> answer(std::uint64_t turn, const std::optional<judge_answer>& a,
                                std::size_t index);
  void clear_streak() { above_ = 0; }

 private:
  judge_rule rule_;
  std::deque<judge_event> events_;
  std::size_t bytes_ = 0;
  std::optional<std::uint64_t> asked_at_;  // the turn of the last question
  std::uint32_t above_ = 0;                // answers above the threshold in a row
  std::size_t first_above_ = 0;
};

}  // namespace loopguard::sdk
