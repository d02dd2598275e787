#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "state/fingerprint_entry.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

fingerprint_stats called_twice() {
  fingerprint_stats r;
  r.tool = "read_file";
  r.summary = "path=src/a_rather_long_module_name.py";
  r.calls = 2;
  r.counted = 1;
  r.first_seen = 10.5;
  r.last_seen = 12.25;
  r.workers.push_back(0);
  r.workers.push_back(3);
  r.window.push_back({10.5, 0, false});
  r.window.push_back({12.25, 3, true});
  r.results.push_back(77);
  r.wasted = {120, 0.5};
  return r;
}

}  // namespace

TEST_SUITE("fingerprint entry") {
  TEST_CASE("a label keeps its tool and summary, either one empty, and copies deeply") {
    const fingerprint_label none;
    CHECK(none.tool().empty());
    CHECK(none.summary().empty());
    const fingerprint_label tool_only("bash", "");
    CHECK(tool_only.tool() == "bash");
    CHECK(tool_only.summary().empty());
    const fingerprint_label summary_only("", "cmd=ls");
    CHECK(summary_only.tool().empty());
    CHECK(summary_only.summary() == "cmd=ls");
    const std::string long_summary(256, 'x');
    fingerprint_label both("edit_file", long_summary);
    fingerprint_label copy = both;
    both = fingerprint_label("other", "y");
    CHECK(copy.tool() == "edit_file");
    CHECK(copy.summary() == long_summary);
    CHECK(both.tool() == "other");
    CHECK(both.summary() == "y");
  }

  TEST_CASE("a row never declared round-trips without a report block") {
    const fingerprint_stats row = called_twice();
    fingerprint_entry e(fingerprint_stats{row});
    CHECK_FALSE(e.has_report());
    CHECK_FALSE(e.queued());
    CHECK(e.row() == row);
  }

  TEST_CASE("a declared or lifted row round-trips through its report block") {
    fingerprint_stats declared = called_twice();
    declared.level = severity::critical;
    declared.level_t = 12.25;
    declared.level_calls = 5;
    declared.level_workers = 2;
    declared.booked = {100, 0.25};
    fingerprint_entry e(fingerprint_stats{declared});
    CHECK(e.has_report());
    CHECK(e.row() == declared);

    fingerprint_stats lifted = called_twice();  // level none, its lift's report kept
    lifted.level_t = 40;
    lifted.level_calls = 1;
    CHECK(fingerprint_entry(fingerprint_stats{lifted}).row() == lifted);
  }

  TEST_CASE("assigning a row keeps the lift queue's time and clears a report the row has not") {
    fingerprint_stats declared = called_twice();
    declared.level = severity::warn;
    declared.level_t = 3;
    fingerprint_entry e(std::move(declared));
    e.report().queued_t = 99;
    e.in_top = true;
    const fingerprint_stats plain = called_twice();
    e.assign(fingerprint_stats{plain});
    CHECK(e.row() == plain);
    CHECK(e.queued_t() == 99);
    CHECK(e.in_top);
  }
}

namespace {

// A fingerprint called once by worker 4 at t 7.5: with or without a result, in the window or
// left it, counted or not.
fingerprint_stats called_once(bool result, bool in_window, bool counted) {
  fingerprint_stats r;
  r.tool = "search";
  r.summary = "query=config loader";
  r.calls = 1;
  r.counted = counted ? 1 : 0;
  r.first_seen = r.last_seen = 7.5;
  r.workers.push_back(4);
  if (result) r.results.push_back(0xfeedULL);
  if (in_window) r.window.push_back({7.5, 4, counted});
  return r;
}

// The derived fields a full entry rebuilds from its window (shared_economics_state's tally()).
void check_derived(const fingerprint_entry& e) {
  std::uint32_t counted = 0;
  for (const auto& c : e.window) counted += c.counted ? 1 : 0;
  CHECK(e.window_counted == counted);
  CHECK(e.tallies.size() == (e.window.empty() ? 0u : 1u));
  if (!e.window.empty()) {
    CHECK(e.tallies[0].worker == e.window[0].worker);
    CHECK(e.tallies[0].all == 1);
    CHECK(e.tallies[0].counted == counted);
  }
}

}  // namespace

TEST_SUITE("fingerprint entry") {
  TEST_CASE("a fingerprint called once round-trips through the small form, either way") {
    for (const bool result : {false, true}) {
      for (const bool in_window : {false, true}) {
        for (const bool counted : {false, true}) {
          CAPTURE(result);
          CAPTURE(in_window);
          CAPTURE(counted);
          const fingerprint_stats row = called_once(result, in_window, counted);
          REQUIRE(single_call_entry::fits(row));
          const single_call_entry small{fingerprint_stats{row}};
          CHECK(small.row() == row);
          // To the full form (a second call, a charge): the same row, the derived fields built.
          fingerprint_entry full{single_call_entry{small}};
          CHECK(full.row() == row);
          check_derived(full);
          full.in_top = true;
          full.changed = true;
          // And back (touch() shrinks it): the flags kept.
          REQUIRE(single_call_entry::fits(full));
          const single_call_entry again{std::move(full)};
          CHECK(again.row() == row);
          CHECK(again.in_top);
          CHECK(again.changed);
        }
      }
    }
  }

  TEST_CASE("what the small form cannot hold keeps the full form") {
    const auto refused = [](const fingerprint_stats& row) {
      CHECK_FALSE(single_call_entry::fits(row));
      CHECK_FALSE(single_call_entry::fits(fingerprint_entry(fingerprint_stats{row})));
    };
    refused(called_twice());
    fingerprint_stats r = called_once(true, true, true);
    r.workers.push_back(5);  // two workers
    refused(r);
    r = called_once(true, true, true);
    r.results.push_back(1);  // two results
    refused(r);
    r = called_once(true, true, true);
    r.wasted = {10, 0};
    refused(r);
    r = called_once(true, true, true);
    r.booked = {0, 0.5};
    refused(r);
    r = called_once(true, true, true);
    r.level = severity::warn;
    refused(r);
    r = called_once(true, true, true);
    r.level_t = 3;  // a lift's report
    refused(r);
    r = called_once(true, true, true);
    r.last_seen = 8;  // first and last differ
    refused(r);
    // The window's call is not the one call: another time, another worker, or counted where
    // the counts say not.
    for (const window_call other :
         {window_call{7, 4, true}, window_call{7.5, 5, true}, window_call{7.5, 4, true}}) {
      r = called_once(true, false, other.worker != 4 || other.t != 7.5 ? true : false);
      r.window.push_back(other);
      refused(r);
    }
    r = called_once(true, false, false);
    r.counted = 2;
    refused(r);
    // Times and costs are compared bit for bit: -0.0 is not the small form's +0.
    r = called_once(true, false, false);
    r.first_seen = -0.0;
    r.last_seen = 0.0;
    refused(r);
    r = called_once(true, false, false);
    r.wasted = {0, -0.0};
    refused(r);
    r = called_once(true, false, false);
    r.level_t = -0.0;
    CHECK_FALSE(single_call_entry::fits(r));
    // A full entry declared once and lifted keeps its report block.
    fingerprint_entry lifted(called_once(true, true, true));
    lifted.report().level_t = 9;
    CHECK_FALSE(single_call_entry::fits(lifted));
  }
}
