#include "stats_json.hpp"

namespace loopguard {

nlohmann::ordered_json to_json(const manager_stats& s) {
  nlohmann::ordered_json detections = nlohmann::ordered_json::object();
  for (std::size_t d = 0; d < kDetectorCount; ++d) {
    nlohmann::ordered_json& by_level =
        detections[std::string(to_string(static_cast<detector_id>(d)))];
    for (severity level : {severity::warn, severity::critical, severity::terminate}) {
      by_level[std::string(to_string(level))] = s.detections[d][static_cast<std::size_t>(level)];
    }
  }
  return {{"checks", s.checks},
          {"tool_calls", s.tool_calls},
          {"tool_results", s.tool_results},
          {"texts", s.texts},
          {"text_chunks", s.text_chunks},
          {"user_messages", s.user_messages},
          {"resumes", s.resumes},
          {"turns", s.turns},
          {"rejected", s.rejected},
          {"terminated", s.terminated},
          {"judge_checks", s.judge_checks},
          {"judge_errors", s.judge_errors},
          {"judge_cost", s.judge_cost},
          {"detections", std::move(detections)}};
}

nlohmann::ordered_json to_json(const recording_stats& s) {
  return {{"path", s.path},
          {"detections_path", s.detections_path},
          {"events", s.events},
          {"detection_lines", s.detection_lines},
          {"error", s.error}};
}

nlohmann::ordered_json to_json(const client_stats& s) {
  return {{"sent", s.sent},
          {"acknowledged", s.acknowledged},
          {"resent", s.resent},
          {"overflow_dropped", s.overflow_dropped},
          {"refused_dropped", s.refused_dropped},
          {"gaps_sent", s.gaps_sent},
          {"connects", s.connects},
          {"disconnects", s.disconnects},
          {"verdicts", s.verdicts},
          {"detections_sent", s.detections_sent},
          {"outbox", s.outbox},
          {"connected", s.connected},
          {"features", s.features},
          {"last_error", s.last_error},
          {"fatal", s.fatal}};
}

}  // namespace loopguard
