// parse_canonical_args (the fingerprint hot path, canonical_args.hpp) against the document
// parsers, on arbitrary text.
//
// Contract checked: it accepts exactly the texts json_input::parse accepts, and then its
// canonical form equals canonical_json() of that document and of make_canonical_args(); where
// nlohmann itself accepts the text (valid UTF-8, no lone surrogates) the same holds against
// nlohmann's document; the canonical form is valid UTF-8, and parsing it again gives it back
// unchanged. Each input is tried without and with a skip set.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "loopguard/canonical_args.hpp"
#include "loopguard/canonical_json.hpp"
#include "loopguard/json_input.hpp"

namespace {

namespace fuzz = loopguard::fuzz;
using loopguard::canonical_args;

enum { inputs, accepted, refused, nlohmann_agreed, repaired, kCounters };
fuzz::counters<kCounters> counters("canonical", {"inputs", "accepted", "refused", "nlohmann_agreed",
                                                 "repaired"});

const loopguard::key_set kSkip{"timestamp", "request_id", "a"};

void check_one(std::string_view text, const loopguard::key_set* skip) {
  canonical_args args;
  const bool ok = loopguard::parse_canonical_args(text, skip, args);
  const auto parsed = loopguard::json_input::parse(text);
  const bool doc_ok = parsed.has_value();
  if (ok != doc_ok) {
    std::fprintf(stderr, "parse_canonical_args: %s; json_input::parse: %s\n",
                 ok ? "accepts" : "refuses", doc_ok ? "accepts" : parsed.error().message().c_str());
  }
  LG_FUZZ_CHECK(ok == doc_ok, "parse_canonical_args and json_input::parse disagree on acceptance");
  if (!ok) {
    counters.add(refused);
    return;
  }
  counters.add(accepted);
  const auto& doc = *parsed;
  if (doc.repairs > 0) counters.add(repaired);
  const std::string canonical = args.canonical();
  LG_FUZZ_CHECK(fuzz::valid_utf8(canonical), "canonical form is not valid UTF-8");
  LG_FUZZ_CHECK(canonical == loopguard::canonical_json(doc.value, skip),
                "canonical form differs from canonical_json(json_input document)");
  LG_FUZZ_CHECK(canonical == loopguard::make_canonical_args(doc.value, skip).canonical(),
                "canonical form differs from make_canonical_args(document)");
  for (const auto& m : args.members) {
    LG_FUZZ_CHECK(fuzz::valid_utf8(m.key) && fuzz::valid_utf8(m.value),
                  "a member's key or value is not valid UTF-8");
    LG_FUZZ_CHECK(!m.text || fuzz::valid_utf8(*m.text), "a member's text is not valid UTF-8");
  }

  const auto theirs = nlohmann::json::parse(text, nullptr, false);
  if (!theirs.is_discarded()) {
    LG_FUZZ_CHECK(canonical == loopguard::canonical_json(theirs, skip),
                  "canonical form differs from canonical_json(nlohmann document)");
    counters.add(nlohmann_agreed);
  }

  canonical_args again;
  LG_FUZZ_CHECK(loopguard::parse_canonical_args(canonical, skip, again),
                "the canonical form does not parse");
  LG_FUZZ_CHECK(again.canonical() == canonical, "canonicalizing is not idempotent");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  counters.add(inputs);
  const std::string_view text = fuzz::as_view(data, size);
  check_one(text, nullptr);
  check_one(text, &kSkip);
  return 0;
}
