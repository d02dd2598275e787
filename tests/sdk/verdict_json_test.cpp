// verdict_json: the one JSON form of a verdict (docs/sdk.md, "Verdict JSON"), as the C API
// returns it.
#include "loopguard/verdict_json.hpp"

#include <limits>

#include "loopguard/json_input.hpp"
#include "sdk_test_util.hpp"

using loopguard::action;
using loopguard::detection;
using loopguard::detector_id;
using loopguard::severity;
using loopguard::verdict;
using loopguard::verdict_json;

TEST_CASE("verdict_json: an allow verdict without detections") {
  verdict v;
  v.event_index = 7;
  CHECK(verdict_json(v) == R"({"action":"allow","level":"none","event_index":7,"detections":[]})");
}

TEST_CASE("verdict_json: every field of every detection, in order") {
  verdict v;
  v.action = action::reject;
  v.level = severity::critical;
  v.event_index = 10;
  detection d;
  d.detector = detector_id::similar_args;
  d.level = severity::critical;
  d.count = 6;
  d.confidence = 0.875;
  d.loop_start = 2;
  d.occurrence = 3;
  d.tool = "read_file";
  d.message = "line 1\n\"quoted\" \\ tab\t";
  d.suggestion = "Try another file.";
  v.detections = {d, d};
  v.detections[1].detector = detector_id::exact;
  v.detections[1].confidence = 1;
  const std::string one =
      R"({"detector":"similar_args","level":"critical","count":6,"confidence":0.875,)"
      R"("loop_start":2,"occurrence":3,"tool":"read_file",)"
      R"("message":"line 1\n\"quoted\" \\ tab\t","suggestion":"Try another file."})";
  std::string two = one;
  two.replace(two.find("similar_args"), 12, "exact");
  two.replace(two.find("0.875"), 5, "1");
  CHECK(verdict_json(v) == R"({"action":"reject","level":"critical","event_index":10,)"
                           R"("detections":[)" +
                               one + "," + two + "]}");
}

TEST_CASE("verdict_json: valid UTF-8 and valid JSON whatever the strings hold") {
  verdict v;
  v.action = action::nudge;
  v.level = severity::warn;
  detection d;
  d.tool = "bad\xff\xfe";
  d.message = std::string("nul \0 and \x01", 12);
  d.confidence = std::numeric_limits<double>::quiet_NaN();  // JSON has no NaN: written 0
  v.detections = {d};
  const std::string text = verdict_json(v);
  const auto doc = loopguard::json_input::parse(text);
  REQUIRE(doc.has_value());
  CHECK(doc->repairs == 0);
  CHECK(doc->value["detections"][0]["tool"] == "bad\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(doc->value["detections"][0]["message"] == std::string("nul \0 and \x01", 12));
  CHECK(doc->value["detections"][0]["confidence"] == 0);
}

TEST_CASE("verdict_json: what a manager returns reads back field by field") {
  lgtest::ExecutionEconomicsManager m;
  verdict last;
  for (int i = 0; i < 3; ++i) last = lgtest::step(m, "read_file", R"({"path":"a"})", true, "x");
  REQUIRE(last.action == action::nudge);
  const auto doc = loopguard::json_input::parse(verdict_json(last));
  REQUIRE(doc.has_value());
  const auto& j = doc->value;
  CHECK(j["action"] == "nudge");
  CHECK(j["level"] == "warn");
  CHECK(j["event_index"] == last.event_index);
  REQUIRE(j["detections"].size() == last.detections.size());
  CHECK(j["detections"][0]["detector"] == "exact");
  CHECK(j["detections"][0]["message"] == last.strongest().message);
  CHECK(j["detections"][0]["suggestion"] == last.strongest().suggestion);
  CHECK(j["detections"][0]["count"] == last.strongest().count);
}
