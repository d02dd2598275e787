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
