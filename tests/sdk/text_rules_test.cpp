// Rules 7-9: output similarity across turns, content loops inside one text, summary loops.
#include <algorithm>
#include <string>
#include <vector>

#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::detector_id;
using loopguard::severity;

TEST_SUITE("output_similarity") {
  TEST_CASE("a near-duplicate of one of the last five outputs warns") {
    ExecutionEconomicsManager m;
    CHECK(m.on_text("Processing the user data... step 1 of 3 done.").allowed());
    CHECK(m.on_text("Creating the database schema for the orders table.").allowed());
    const verdict v = m.on_text("Processing the user data... step 1 of 3 done!");
    REQUIRE(fired(v, detector_id::output_similarity));
    CHECK(v.level == severity::warn);
    CHECK(get(v, detector_id::output_similarity).loop_start == 0);
  }

  TEST_CASE("the seed's 'about 91%' pair scores 87.2 and does not fire at 90") {
    ExecutionEconomicsManager m;
    m.on_text("Let me check the database for user information...");
    m.on_text("I'll query the database to find the user data...");
    CHECK_FALSE(fired(m.on_text("Checking the database for user information..."),
                      detector_id::output_similarity));
  }

  TEST_CASE("only the last five outputs are remembered") {
    ExecutionEconomicsManager m;
    m.on_text("Starting database connection and initializing schema");
    const char* others[] = {"Parsing configuration from YAML file successfully",
                            "Downloading dependencies from remote repository",
                            "Compiling TypeScript source files to JavaScript",
                            "Running integration tests against staging server",
                            "Deploying application to production cluster now"};
    for (const char* o : others) m.on_text(o);
    CHECK_FALSE(fired(m.on_text("Starting database connection and initializing schema"),
                      detector_id::output_similarity));
  }

  TEST_CASE("empty output is never a repeat") {
    ExecutionEconomicsManager m;
    m.on_text("");
    CHECK_FALSE(fired(m.on_text(""), detector_id::output_similarity));
  }
}

TEST_SUITE("content") {
  const std::string sentence = "This is a unique sentence, id=1. ";

  TEST_CASE("a passage chanted over and over in one stream fires") {
    ExecutionEconomicsManager m;
    bool any = false;
    for (int i = 0; i < 30 && !any; ++i)
      any = fired(m.on_text_chunk(sentence), detector_id::content);
    CHECK(any);
  }

  TEST_CASE("the result does not depend on how the stream was split") {
    std::string text;
    for (int i = 0; i < 40; ++i) text += sentence;
    ExecutionEconomicsManager whole;
    const bool at_once = fired(whole.on_text(text), detector_id::content);
    ExecutionEconomicsManager split;
    bool chunked = false;
    for (std::size_t i = 0; i < text.size(); i += 7) {
      chunked = chunked || fired(split.on_text_chunk(text.substr(i, 7)), detector_id::content);
    }
    CHECK(at_once);
    CHECK(chunked == at_once);
  }

  TEST_CASE("how often it fires does not depend on the chunking either") {
    std::string text;
    for (int i = 0; i < 60; ++i) text += sentence;
    const auto highest = [](const std::vector<verdict>& vs) {
      std::uint32_t best = 0;
      for (const auto& v : vs) {
        for (const auto& d : v.detections) {
          if (d.detector == detector_id::content) best = std::max(best, d.count);
        }
      }
      return best;
    };
    ExecutionEconomicsManager whole;
    const std::uint32_t at_once = highest({whole.on_text(text)});
    CHECK(at_once >= 2);
    for (std::size_t piece : {1u, 3u, 7u, 50u, 333u}) {
      CAPTURE(piece);
      ExecutionEconomicsManager split;
      std::vector<verdict> vs;
      for (std::size_t i = 0; i < text.size(); i += piece) {
        vs.push_back(split.on_text_chunk(text.substr(i, piece)));
      }
      vs.push_back(split.on_text(text));
      CHECK(highest(vs) == at_once);
    }
  }

  TEST_CASE("a huge single-line text is bounded by max_history (regression: index overflow)") {
    std::string text;
    for (int i = 0; i < 4000; ++i) text += "word" + std::to_string(i * 7919 % 10007) + " ";
    ExecutionEconomicsManager m;
    CHECK_FALSE(fired(m.on_text(text), detector_id::content));
  }

  TEST_CASE("repeated text inside a code fence is skipped") {
    std::string text = "Here is the config:\n```\n";
    for (int i = 0; i < 40; ++i) text += "server.port = 8080 # default port for the service\n";
    text += "```\nDone.";
    ExecutionEconomicsManager m;
    CHECK_FALSE(fired(m.on_text(text), detector_id::content));
  }

  TEST_CASE("a long list with a shared prefix does not fire") {
    std::string text;
    for (int i = 0; i < 40; ++i) {
      text += "- projects/my-google-cloud-project-12345/locations/us-central1/services/" +
              std::to_string(i) + "\n";
    }
    ExecutionEconomicsManager m;
    CHECK_FALSE(fired(m.on_text(text), detector_id::content));
  }

  TEST_CASE("prose lines with a shared prefix but different periods do not fire") {
    std::string text;
    for (int i = 0; i < 40; ++i) {
      text +=
          "The service at projects/my-google-cloud-project-12345/locations/us-central1 has id " +
          std::to_string(i * 7919) + "\n";
    }
    ExecutionEconomicsManager m;
    CHECK_FALSE(fired(m.on_text(text), detector_id::content));
  }

  TEST_CASE("table rows and headings do not fire") {
    std::string text = "| name | value |\n|---|---|\n";
    for (int i = 0; i < 40; ++i) text += "| same cell contents here | same value here too |\n";
    for (int i = 0; i < 20; ++i) text += "## The same heading repeated over and over again\n";
    ExecutionEconomicsManager m;
    CHECK_FALSE(fired(m.on_text(text), detector_id::content));
  }
}

TEST_SUITE("summary") {
  TEST_CASE("three text-only turns in a row") {
    ExecutionEconomicsManager m;
    CHECK(m.on_text("Summary so far: parser and lexer read.").allowed());
    CHECK(m.on_text("To summarize: the tokenizer needs a fix.").allowed());
    const verdict v = m.on_text("In summary, next I will fix the tokenizer.");
    REQUIRE(fired(v, detector_id::summary));
    CHECK(get(v, detector_id::summary).count == 3);
  }

  TEST_CASE("a tool call resets the count") {
    ExecutionEconomicsManager m;
    m.on_text("one");
    m.on_text("two");
    step(m, "read_file", R"({"path":"x"})", true, "x");
    CHECK_FALSE(fired(m.on_text("three"), detector_id::summary));
  }
}
