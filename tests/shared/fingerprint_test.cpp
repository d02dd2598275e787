#include <doctest/doctest.h>

#include "loopguard/fingerprint.hpp"
#include "loopguard/hex.hpp"

using loopguard::fingerprinter;
using nlohmann::json;

namespace {
const fingerprinter& fp() {
  static const fingerprinter f;
  return f;
}
}  // namespace

TEST_SUITE("fingerprint") {
  TEST_CASE("exact: key order, formatting and number spelling do not matter") {
    const auto a =
        fp().of_call_text("search", R"({"query":"foo","limit":10,"opts":{"a":1,"b":2}})");
    const auto b =
        fp().of_call_text("search", R"({ "opts":{"b":2.0,"a":1}, "limit":1e1,"query":"foo" })");
    CHECK(a.exact == b.exact);
    CHECK(a.structural == b.structural);
  }

  TEST_CASE("exact: any meaningful change changes it") {
    const auto base = fp().of_call_text("search", R"({"query":"foo","limit":10})");
    CHECK(fp().of_call_text("search", R"({"query":"fo0","limit":10})").exact != base.exact);
    CHECK(fp().of_call_text("search", R"({"query":"foo","limit":11})").exact != base.exact);
    CHECK(fp().of_call_text("search", R"({"query":"foo"})").exact != base.exact);
    CHECK(fp().of_call_text("grep", R"({"query":"foo","limit":10})").exact != base.exact);
    CHECK(fp().of_call_text("search", R"({"query":"foo","limit":"10"})").exact != base.exact);
  }

  TEST_CASE("volatile fields are stripped before hashing") {
    const auto a =
        fp().of_call_text("write", R"({"path":"a","task_progress":"1/3","timestamp":1})");
    const auto b =
        fp().of_call_text("write", R"({"path":"a","task_progress":"2/3","request_id":"x"})");
    CHECK(a.exact == b.exact);
    loopguard::fingerprint_options opts;
    opts.volatile_keys = {"nonce"};
    const fingerprinter custom(opts);
    CHECK(custom.of_call_text("t", R"({"a":1,"nonce":1})").exact ==
          custom.of_call_text("t", R"({"a":1,"nonce":2})").exact);
    CHECK(custom.of_call_text("t", R"({"a":1,"timestamp":1})").exact !=
          custom.of_call_text("t", R"({"a":1,"timestamp":2})").exact);
  }

  TEST_CASE("structural: only primary keys count") {
    const auto a = fp().of_call_text("read_file", R"({"path":"src/a.py","encoding":"utf8"})");
    const auto b = fp().of_call_text("read_file", R"({"path":"src/a.py","encoding":"latin1"})");
    CHECK(a.exact != b.exact);
    CHECK(a.structural == b.structural);
    CHECK(a.normalized == R"(read_file:{"path":"src/a.py"})");
    const auto c = fp().of_call_text("read_file", R"({"path":"src/b.py","encoding":"utf8"})");
    CHECK(c.structural != a.structural);
    loopguard::fingerprint_options opts;
    opts.primary_keys = {"encoding"};
    const fingerprinter custom(opts);
    CHECK(custom.of_call_text("read_file", R"({"path":"x","encoding":"utf8"})").structural ==
          custom.of_call_text("read_file", R"({"path":"y","encoding":"utf8"})").structural);
  }

  TEST_CASE("structural: without any primary key every argument counts") {
    const auto a = fp().of_call_text("run_sql", R"({"sql":"select 1"})");
    const auto b = fp().of_call_text("run_sql", R"({"sql":"select 2"})");
    CHECK(a.structural != b.structural);
    CHECK(a.normalized == R"(run_sql:{"sql":"select 1"})");
    CHECK(fp().of_call_text("run_tests", "{}").normalized == "run_tests:{}");
  }

  TEST_CASE("shell: file reads share one structural fingerprint") {
    const auto cat = fp().of_call_text("bash", R"({"command":"cat foo.ts"})");
    const auto head = fp().of_call_text("bash", R"({"command":"head -n 50 foo.ts"})");
    const auto sed = fp().of_call_text("Bash", R"({"command":"sed -n 1,5p ./foo.ts"})");
    CHECK(cat.normalized == "bash:file_read:foo.ts");
    CHECK(cat.structural == head.structural);
    CHECK(cat.structural == sed.structural);
    CHECK(cat.exact != head.exact);
    const auto piped = fp().of_call_text("bash", R"({"command":"cat foo.ts | head"})");
    CHECK(piped.structural != cat.structural);
    CHECK(piped.normalized == R"(bash:{"command":"cat foo.ts | head"})");
    // A non-shell tool with a `command` argument is not shell-normalized.
    const auto other = fp().of_call_text("notes", R"({"command":"cat foo.ts"})");
    CHECK(other.normalized == R"(notes:{"command":"cat foo.ts"})");
  }

  TEST_CASE("shell: whitespace inside commands does not matter, quoted text does") {
    const auto a = fp().of_call_text("bash", R"({"command":"ls   -la  src"})");
    const auto b = fp().of_call_text("bash", R"({"command":" ls -la src\n"})");
    CHECK(a.exact == b.exact);
    CHECK(a.shell_command == "ls -la src");
    CHECK(fp().of_call_text("bash", R"({"command":"echo 'a  b'"})").exact !=
          fp().of_call_text("bash", R"({"command":"echo 'a b'"})").exact);
  }

  TEST_CASE("the three kinds never collide") {
    const auto c = fp().of_call_text("read_file", R"({"path":"a"})");
    CHECK(c.exact != c.structural);  // same text, different seeds
  }

  TEST_CASE("result: volatile substrings masked, plain numbers and ok flag kept") {
    CHECK(fp().of_result(true, "done in 12ms at 2026-11-22T10:00:00Z") ==
          fp().of_result(true, "done in 3.4s at 2026-11-23T09:59:59Z"));
    CHECK(fp().of_result(true, "10 tests passed") != fp().of_result(true, "11 tests passed"));
    CHECK(fp().of_result(true, "x") != fp().of_result(false, "x"));
    CHECK(fp().of_result(false, "segfault at 0xdeadbeef pid 12") ==
          fp().of_result(false, "segfault at 0x7fff0000 pid 99"));
  }

  TEST_CASE("result_volatile_keys: a JSON result compared without them, at every depth") {
    loopguard::fingerprint_options o;
    o.result_volatile_keys = {"durationMs", "cwd"};
    const loopguard::fingerprinter f(o);
    CHECK(f.of_result(true, R"({"exitCode":0,"durationMs":101,"cwd":"/tmp/a","out":"Loki"})") ==
          f.of_result(true, R"( {"cwd":"/tmp/b","out":"Loki","exitCode":0,"durationMs":7})"));
    CHECK(f.of_result(true, R"([{"d":{"durationMs":1}},2])") ==
          f.of_result(true, R"([{"d":{"durationMs":2}},2])"));
    CHECK(f.of_result(true, R"({"exitCode":0,"out":"Loki"})") !=
          f.of_result(true, R"({"exitCode":1,"out":"Loki"})"));
    // Not JSON, or broken JSON: compared as text, so the keys' values still count.
    CHECK(f.of_result(true, R"({"durationMs":1,)") != f.of_result(true, R"({"durationMs":2,)"));
    CHECK(f.of_result(true, "durationMs=1") != f.of_result(true, "durationMs=2"));
    // Without the option nothing changes: the default compares the whole text.
    CHECK(fp().of_result(true, R"({"durationMs":1})") !=
          fp().of_result(true, R"({"durationMs":2})"));
  }

  TEST_CASE("fingerprints are stable across versions (wire contract)") {
    // These values are sent to the daemon and stored; changing them splits every swarm's counts.
    const auto c = fp().of_call_text("bash", R"({"command":"cat foo.ts"})");
    CHECK(loopguard::to_hex(c.exact) == "9ef49db37fe7ed93");
    CHECK(loopguard::to_hex(c.structural) == "9274d24837dab69a");
  }

  TEST_CASE("text that is not JSON is fingerprinted as one string argument, never thrown") {
    CHECK(fp().of_call_text("t", "{nope").exact == fp().of_call("t", json("{nope")).exact);
    CHECK_FALSE(fp().try_of_call_text("t", "{nope"));
  }

  TEST_CASE("regression: numbers beyond a double's range and deep nesting never throw") {
    const auto big = fp().of_call_text("t", R"({"a":1e400})");
    CHECK(big.exact == fp().of_call("t", json(R"({"a":1e400})")).exact);
    const std::string deep = std::string(20000, '[') + std::string(20000, ']');
    CHECK(fp().of_call_text("t", deep).exact == fp().of_call("t", json(deep)).exact);
    // A document built in code may be deeper than any parser accepts: a marker stands for it.
    json doc = json::array();
    for (int i = 0; i < 300; ++i) doc = json::array({std::move(doc)});
    CHECK(fp().of_call("t", doc).canonical_args.find("[nested too deep]") != std::string::npos);
  }

  TEST_CASE("invalid UTF-8 is repaired before fingerprinting: the same bytes, the same print") {
    const auto a = fp().of_call_text(
        "re\xff"
        "ad",
        R"({"path":"a\udcff"})");
    const auto b = fp().of_call_text(
        "re\xEF\xBF\xBD"
        "ad",
        "{\"path\":\"a\xEF\xBF\xBD\"}");
    CHECK(a.exact == b.exact);
    CHECK(a.structural == b.structural);
    CHECK(fp().of_result(false, "bad \xc3 byte") == fp().of_result(false, "bad \xEF\xBF\xBD byte"));
    json args = {{"path", "a\xff"}};
    CHECK(fp().of_call("read", args).exact ==
          fp().of_call_text("read", R"({"path":"a\ufffd"})").exact);
    // A shell command in a json built in code: its command line is repaired too (fuzz finding:
    // a bash_cascade nudge quoted it raw).
    const auto shell = fp().of_call("bash", json{{"command", "cat\xedm\x80  x"}});
    CHECK(shell.shell_command == "cat\xEF\xBF\xBDm\xEF\xBF\xBD x");
    CHECK(shell.exact == fp().of_call_text("bash", R"({"command":"cat\ufffdm\ufffd x"})").exact);
  }

  TEST_CASE("hex round trip") {
    CHECK(loopguard::to_hex(0) == "0000000000000000");
    CHECK(loopguard::from_hex("00000000000000ff") == 255u);
    CHECK(loopguard::from_hex(loopguard::to_hex(0x0123456789abcdefULL)) == 0x0123456789abcdefULL);
    CHECK_FALSE(loopguard::from_hex("xyz").has_value());
    CHECK_FALSE(loopguard::from_hex("000000000000000g").has_value());
  }
}
