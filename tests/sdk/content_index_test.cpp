// The content rule's chunk index against a plain reference of gemini-cli's algorithm: every
// chunk at every offset looked up in a map of all the chunks seen since the last reset. The
// detector samples its index (docs/detectors.md, "[content]"); these tests check that it still
// fires at exactly the same bytes, with the same count and passage, for random, periodic and
// list-like prose under several rules, fed in several chunkings.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "detectors/content_loop.hpp"
#include "loopguard/utf8.hpp"

namespace {

using loopguard::content_rule;
using loopguard::sdk::content_loop_detector;
using loopguard::sdk::finding;

struct firing {
  std::size_t byte;  // the byte of the text that completed the detected chunk
  std::uint32_t count;
  std::string detail;
};

// gemini-cli's algorithm as plainly as it can be written: the text is prose only (no markdown
// structure, no code fences), so every byte enters the history.
std::vector<firing> reference(std::string_view text, const content_rule& rule) {
  const std::size_t n = rule.chunk_size;
  const std::size_t k = rule.occurrences;
  std::vector<firing> out;
  std::string history;
  std::unordered_map<std::string, std::vector<std::size_t>> seen;  // chunk -> positions
  std::size_t scanned = 0;
  for (std::size_t b = 0; b < text.size(); ++b) {
    if (history.size() >= rule.max_history) {  // keep the newer half, index it again
      history = history.substr(history.size() - rule.max_history / 2);
      seen.clear();
      scanned = 0;
    }
    history += text[b];
    while (scanned + n <= history.size()) {
      const std::size_t pos = scanned++;
      const std::string chunk = history.substr(pos, n);
      std::vector<std::size_t>& at = seen[chunk];
      at.push_back(pos);
      if (at.size() < k) continue;
      const std::vector<std::size_t> where(at.rbegin(), at.rbegin() + static_cast<long>(k));
      const double avg = static_cast<double>(pos - where[k - 1]) / static_cast<double>(k - 1);
      if (avg > static_cast<double>(rule.max_distance)) continue;
      std::vector<std::string> periods;
      for (std::size_t j = 0; j + 1 < k; ++j) {
        std::string period = history.substr(where[j + 1], where[j] - where[j + 1]);
        if (std::find(periods.begin(), periods.end(), period) == periods.end()) {
          periods.push_back(std::move(period));
        }
      }
      if (periods.size() > k / 2) continue;
      out.push_back({b, static_cast<std::uint32_t>(out.size() + 1),
                     std::string(loopguard::utf8::whole_code_points(chunk))});
      history = history.substr(pos + n);  // tracking restarts after the detected chunk
      seen.clear();
      scanned = 0;
    }
  }
  return out;
}

// When the detector sees byte `b`: a line's first 8 bytes wait until its kind is known (its 8th
// byte or its end); text.size() stands for finish().
std::vector<std::size_t> release_points(std::string_view text) {
  std::vector<std::size_t> at(text.size(), text.size());
  std::size_t line = 0;
  for (std::size_t b = 0; b <= text.size(); ++b) {
    const bool end = b == text.size() || text[b] == '\n';
    if (b < text.size() && !end && b - line >= 8) at[b] = b;
    if (b < text.size() && !end && b - line == 7) {
      for (std::size_t j = line; j <= b; ++j) at[j] = b;
    }
    if (end) {
      if (b - line < 8) {
        for (std::size_t j = line; j < b; ++j) at[j] = b;
      }
      if (b < text.size()) at[b] = b;
      line = b + 1;
    }
  }
  return at;
}

// Feeds `text` in pieces ending at `cuts` (increasing, the last is text.size()) and checks each
// piece's result against the reference firings whose bytes the detector sees in that piece:
// none, no finding; some, a finding that is one of them (the count names which). A piece with
// several reports one, so the total is compared only when no piece had more than one.
void check_against_reference(std::string_view text, const content_rule& rule,
                             const std::vector<firing>& expected,
                             const std::vector<std::size_t>& cuts) {
  const std::vector<std::size_t> seen_at = release_points(text);
  content_loop_detector detector(rule);
  std::size_t from = 0;
  std::uint32_t highest = 0;
  bool one_per_piece = true;
  for (std::size_t piece = 0; piece <= cuts.size(); ++piece) {
    // The last step is finish(): it sees what waited for the line's kind.
    const bool last = piece == cuts.size();
    const std::size_t to = last ? text.size() + 1 : cuts[piece];
    const std::optional<finding> got =
        last ? detector.finish(piece) : detector.feed(text.substr(from, to - from), piece);
    std::vector<const firing*> here;
    for (const firing& f : expected) {
      if (seen_at[f.byte] >= from && seen_at[f.byte] < to) here.push_back(&f);
    }
    // Asserted only when wrong: millions of passing assertions would dominate a sanitizer run.
    const bool agree = got.has_value() == !here.empty();
    const auto same = [&](const firing* f) {
      return f->count == got->count && f->detail == got->detail;
    };
    const bool one_of_them = !got || std::any_of(here.begin(), here.end(), same);
    if (!agree || !one_of_them) {
      CAPTURE(piece);
      CAPTURE(from);
      REQUIRE(agree);
      CHECK(one_of_them);
    }
    one_per_piece = one_per_piece && here.size() <= 1;
    if (got) highest = std::max(highest, got->count);
    from = to;
  }
  CHECK(highest <= expected.size());
  if (one_per_piece) CHECK(highest == expected.size());
}

std::vector<std::size_t> cuts_every(std::size_t size, std::size_t piece) {
  std::vector<std::size_t> cuts;
  for (std::size_t at = piece; at < size; at += piece) cuts.push_back(at);
  cuts.push_back(size);
  return cuts;
}

std::vector<std::size_t> cuts_random(std::size_t size, std::mt19937_64& rng) {
  std::vector<std::size_t> cuts;
  for (std::size_t at = 1 + rng() % 90; at < size; at += 1 + rng() % 90) cuts.push_back(at);
  cuts.push_back(size);
  return cuts;
}

// Prose only: no character that can start markdown structure or a code fence.
constexpr std::string_view kLetters = "etaoinshrdlucmfwyp";

std::string random_text(std::mt19937_64& rng, std::size_t size, std::string_view alphabet) {
  std::string out;
  while (out.size() < size) out += alphabet[rng() % alphabet.size()];
  return out;
}

std::string words(std::mt19937_64& rng, std::size_t size) {
  static const char* kWords[] = {"the",   "parser", "returns", "token", "error",  "line",
                                 "café",  "loader", "value",   "über",  "test",   "failed",
                                 "build", "cache",  "request", "retry", "schema", "I will"};
  std::string out;
  while (out.size() < size) {
    out += kWords[rng() % std::size(kWords)];
    out += rng() % 13 == 0 ? ".\n" : (rng() % 7 == 0 ? ", " : " ");
  }
  return out;
}

// A unit repeated, each copy mutated in a few places at random, between filler.
std::string periodic(std::mt19937_64& rng) {
  const std::string alphabet =
      rng() % 3 == 0 ? "ab" : (rng() % 2 ? "abc \n" : std::string(kLetters) + " .,\n");
  const std::size_t unit_size = 1 + rng() % (rng() % 4 == 0 ? 300 : 60);
  const std::string unit =
      rng() % 2 ? random_text(rng, unit_size, alphabet) : words(rng, unit_size);
  const std::size_t copies = 2 + rng() % 40;
  const std::size_t mutate = rng() % 4 == 0 ? 0 : 1 + rng() % 200;  // one byte in `mutate`
  std::string out = words(rng, rng() % 200);
  for (std::size_t c = 0; c < copies; ++c) {
    std::string copy = unit;
    for (char& ch : copy) {
      if (mutate != 0 && rng() % mutate == 0) ch = alphabet[rng() % alphabet.size()];
    }
    out += copy;
    if (rng() % 6 == 0) out += words(rng, rng() % 120);
  }
  return out + words(rng, rng() % 200);
}

// Lines that share a long prefix and differ after it: many repeats, few loops.
std::string shared_prefix_lines(std::mt19937_64& rng) {
  const std::string prefix = "  The next step of the plan is to look at " + words(rng, rng() % 40);
  std::string out;
  const std::size_t lines = 5 + rng() % 60;
  for (std::size_t i = 0; i < lines; ++i) {
    out += prefix +
           (rng() % 5 == 0 ? std::string("again") : random_text(rng, 1 + rng() % 30, kLetters)) +
           "\n";
  }
  return out;
}

content_rule random_rule(std::mt19937_64& rng) {
  content_rule r;
  r.chunk_size = static_cast<std::uint32_t>(4 + rng() % 60);
  r.occurrences = static_cast<std::uint32_t>(2 + rng() % 14);
  r.max_distance = static_cast<std::uint32_t>(1 + rng() % 400);
  r.max_history = static_cast<std::uint32_t>(2 * r.chunk_size + rng() % 700);
  return r;
}

}  // namespace

TEST_SUITE("content") {
  TEST_CASE("the reference fires a chanted sentence during its 11th copy") {
    std::string text;
    for (int i = 0; i < 12; ++i) text += "This is a unique sentence, id=1. ";
    const std::vector<firing> f = reference(text, content_rule{});
    REQUIRE(f.size() == 1);
    CHECK(f[0].byte / 33 == 10);
    check_against_reference(text, content_rule{}, f, cuts_every(text.size(), 1));
  }

  TEST_CASE("the sampled index fires where the reference does, in any chunking") {
    std::mt19937_64 rng(20261126);
    const content_rule gemini{true, {1, 0}, 50, 10, 250, 5000};  // the gemini-cli preset's rule
    content_rule aggressive;
    aggressive.occurrences = 6;
    content_rule conservative;
    conservative.occurrences = 15;
    std::size_t firings = 0;
    for (int round = 0; round < 400; ++round) {
      CAPTURE(round);
      std::string text;
      switch (round % 5) {
        case 0:
          text = periodic(rng);
          break;
        case 1:
          text = words(rng, 500 + rng() % 6000);
          break;
        case 2:
          text = random_text(rng, 200 + rng() % 3000, rng() % 2 ? "ab" : "abc ");
          break;
        case 3:
          text = shared_prefix_lines(rng);
          break;
        default:
          text = periodic(rng) + shared_prefix_lines(rng) + periodic(rng);
          break;
      }
      const content_rule rules[] = {gemini, aggressive, conservative, random_rule(rng)};
      for (const content_rule& rule : rules) {
        CAPTURE(rule.chunk_size);
        CAPTURE(rule.occurrences);
        CAPTURE(rule.max_distance);
        CAPTURE(rule.max_history);
        const std::vector<firing> expected = reference(text, rule);
        firings += expected.size();
        for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{50}, text.size()}) {
          CAPTURE(piece);
          check_against_reference(text, rule, expected, cuts_every(text.size(), piece));
        }
        check_against_reference(text, rule, expected, cuts_random(text.size(), rng));
      }
    }
    CHECK(firings > 300);  // the texts do loop, and often
  }
}
