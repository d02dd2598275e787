// The one doctest main for every test binary. ctest runs each test case alone by name
// (--test-case=NAME, doctest_discover_tests); a name that selects nothing would pass without
// running anything (ctest cuts a name at ';', for one), so a run filtered by --test-case that
// started no test case fails.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <string_view>

namespace {

std::atomic<int> started{0};

struct start_counter : doctest::IReporter {
  explicit start_counter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++started; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("start_counter", 1, start_counter);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int code = context.run();
  if (context.shouldExit()) return code;  // --help, --list-test-cases, ...
  bool by_name = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    by_name = by_name || a.starts_with("--test-case=") || a.starts_with("-tc=");
  }
  if (code == 0 && by_name && started == 0) {
    std::fprintf(stderr, "no test case matched the --test-case filter: nothing ran\n");
    return 1;
  }
  return code;
}
