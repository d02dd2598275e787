// [intent]: one reply announcing instead of doing. The measures are cline's text-loop check
// (cline/cline pull request #13042, sdk/packages/agents/src/text-loop-detection.ts and its
// tests @ f6a913f); the expected values were computed with that code.
#include <string>

#include "../../worker-sdk/src/detectors/intent.hpp"
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::intent_rule;
using loopguard::severity;
namespace sdk = loopguard::sdk;

namespace {

std::string joined(const std::string& line, int times) {
  std::string s;
  for (int i = 0; i < times; ++i) s += (i ? "\n" : "") + line;
  return s;
}

intent_rule on() {
  intent_rule r;
  r.enabled = true;
  return r;
}

severity level_of(const std::string& text, const intent_rule& rule = on()) {
  const auto f = sdk::check_intent(text, rule, false);
  if (!f) return severity::none;
  return f->steps.critical_at > 0 && f->count >= f->steps.critical_at ? severity::critical
                                                                      : severity::warn;
}

const std::string kLetMe =
    "Let me check the Cline settings and logs now for the tool calling issue.";

}  // namespace

TEST_SUITE("intent") {
  TEST_CASE("normalizeLoopLine trims, folds case and blanks, drops trailing punctuation") {
    CHECK(sdk::normalize_intent_line("  Let me update the themepack.  ") ==
          "let me update the themepack");
    CHECK(sdk::normalize_intent_line("Done!!\xE2\x80\xA6") == "done");
    CHECK(sdk::normalize_intent_line("a \t  b") == "a b");
  }
  TEST_CASE("countLetMe counts whole words in any case") {
    CHECK(sdk::count_phrase("Let me check.\nLet me inspect.\nOkay let me look now.", "let me") ==
          3);
    CHECK(sdk::count_phrase("outlet meter, let meet", "let me") == 0);
    CHECK(sdk::count_phrase("LET ME", "let me") == 1);
  }
  TEST_CASE("detects trailing repeated intent lines as hard") {
    const std::string text = joined(kLetMe, 30);
    CHECK(sdk::trailing_repeated_lines(text) == 30);
    CHECK(sdk::count_phrase(text, "let me") == 30);
    CHECK(level_of(text) == severity::critical);
  }
  TEST_CASE("detects a one-word line repeated as hard") {
    const std::string text = joined("Read.", 50);
    CHECK(sdk::trailing_token_lines(text) == 50);
    CHECK(level_of(text) == severity::critical);
  }
  TEST_CASE("healthy progress text is ok") {
    CHECK(level_of("Batch is queued. Next I will validate the CSV and update the graph.\n"
                   "Validation passed for all 8 candidates.\n"
                   "Graph update completed with AST-only refresh.\n"
                   "Ready for your submit decision.") == severity::none);
  }
  TEST_CASE("soft-flags moderate let-me density") {
    std::string text;
    for (int i = 0; i < 14; ++i) {
      text += (i ? "\n" : "") + std::string("Let me verify step ") + std::to_string(i) +
              " of the pipeline status now.";
    }
    intent_rule r = on();
    r.critical_min_bytes = 50000;
    CHECK(sdk::trailing_repeated_lines(text) == 1);
    CHECK(level_of(text, r) == severity::warn);
    CHECK(level_of(text) == severity::warn);  // 689 bytes: below 1500, so no critical anyway
  }
  TEST_CASE("where each measure starts to fire") {
    CHECK(level_of(joined(kLetMe, 7)) == severity::none);
    CHECK(level_of(joined(kLetMe, 8)) == severity::warn);
    CHECK(level_of(joined(kLetMe, 20)) == severity::warn);      // 1459 bytes
    CHECK(level_of(joined(kLetMe, 21)) == severity::critical);  // 1532 bytes
    CHECK(level_of(joined("Read.", 33)) == severity::none);     // 197 bytes: too short to judge
    CHECK(level_of(joined("Read.", 34)) == severity::warn);
    CHECK(level_of(joined("Read.", 39)) == severity::warn);
    CHECK(level_of(joined("Read.", 40)) == severity::critical);
  }
  TEST_CASE("near copies: a long shared prefix, or the same first six words") {
    std::string text;
    for (int i = 0; i < 8; ++i) {
      text +=
          "I will now run the failing test again to see what happens " + std::to_string(i) + "\n";
    }
    CHECK(sdk::trailing_repeated_lines(text) == 8);
    CHECK(sdk::trailing_repeated_lines("short\nshort\nshort") == 0);  // under 8 bytes
  }
}

TEST_SUITE("intent.manager") {
  TEST_CASE("off in balanced, on in cline") {
    const std::string text = joined(kLetMe, 30);
    ExecutionEconomicsManager balanced;
    CHECK_FALSE(fired(balanced.on_text(text), detector_id::intent));
    ExecutionEconomicsManager cline(preset("cline"));
    const verdict v = cline.on_text(text);
    REQUIRE(fired(v, detector_id::intent));
    CHECK(v.level == severity::critical);
    CHECK(v.strongest().message.find("repeated lines: 30 times") != std::string::npos);
  }
  TEST_CASE("a stream is stopped mid-way only at the hard level") {
    ExecutionEconomicsManager m(preset("cline"));
    int first_hard = -1;
    for (int i = 0; i < 30 && first_hard < 0; ++i) {
      const verdict v = m.on_text_chunk(kLetMe + "\n");
      if (fired(v, detector_id::intent)) {
        CHECK(v.level == severity::critical);
        first_hard = i + 1;
      }
    }
    CHECK(first_hard == 24);  // checked every 400 bytes: the first check past 1500 bytes
  }
  TEST_CASE("the finished reply is judged whole, a tool call starts a new one") {
    ExecutionEconomicsManager m(preset("cline"));
    for (int i = 0; i < 10; ++i) CHECK(m.on_text_chunk(kLetMe + "\n").allowed());
    CHECK(m.on_text(joined(kLetMe, 10)).level == severity::warn);
    m.on_tool_call_json("read_file", R"({"path":"a.ts"})");
    for (int i = 0; i < 10; ++i) CHECK(m.on_text_chunk(kLetMe + "\n").allowed());
  }
  TEST_CASE("configuration: every key, checked") {
    const auto c = loopguard::parse_config(nlohmann::json::parse(R"({"detectors":{"intent":{
        "enabled": true, "warn_at": 5, "critical_at": 9, "phrase_warn_at": 3,
        "phrase_critical_at": 4, "token_warn_at": 6, "token_critical_at": 0,
        "phrase": "I will", "min_bytes": 10, "critical_min_bytes": 20}}})"));
    REQUIRE(c.has_value());
    CHECK(c->intent.enabled);
    CHECK(c->intent.phrase == "I will");
    CHECK(c->intent.phrase_steps.critical_at == 4);
    CHECK(c->intent.token_steps.critical_at == 0);
    CHECK(loopguard::to_json(*loopguard::parse_config(loopguard::to_json(*c))) ==
          loopguard::to_json(*c));
    const auto bad = loopguard::parse_config(
        nlohmann::json::parse(R"({"detectors":{"intent":{"phrase_critical_at": 3}}})"));
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message() ==
          "detectors.intent.phrase_critical_at: expected 0 (never) or at least the warn_at "
          "beside it (12), got 3");
  }
}
