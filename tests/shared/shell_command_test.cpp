#include <doctest/doctest.h>

#include "loopguard/shell_command.hpp"

namespace shell = loopguard::shell;

TEST_SUITE("shell_command") {
  TEST_CASE("whitespace is normalized outside quotes only") {
    CHECK(shell::normalize_whitespace("  ls   -la\t src ") == "ls -la src");
    CHECK(shell::normalize_whitespace("echo 'a   b'  \"c  d\"") == "echo 'a   b' \"c  d\"");
    CHECK(shell::normalize_whitespace("make \\\n  test") == "make test");
    CHECK(shell::normalize_whitespace("a  \n  b") == "a\nb");
  }

  TEST_CASE("compound commands are recognized") {
    CHECK(shell::is_compound("cat a | grep x"));
    CHECK(shell::is_compound("cat a > b"));
    CHECK(shell::is_compound("cat < a"));
    CHECK(shell::is_compound("cd x; cat a"));
    CHECK(shell::is_compound("make && cat a"));
    CHECK(shell::is_compound("false || cat a"));
    CHECK(shell::is_compound("cat $(ls)"));
    CHECK(shell::is_compound("cat `ls`"));
    CHECK(shell::is_compound("cat \"$(ls)\""));
    CHECK_FALSE(shell::is_compound("cat 'a|b'"));
    CHECK_FALSE(shell::is_compound("cat \"a;b\""));
    CHECK_FALSE(shell::is_compound("cat a\\|b"));
  }

  TEST_CASE("plain reads of one file are normalized to the path") {
    const char* same[] = {
        "cat foo.ts",         "head foo.ts",         "tail foo.ts",           "head -n 50 foo.ts",
        "tail -n50 foo.ts",   "tail -f foo.ts",      "less foo.ts",           "more foo.ts",
        "wc -l foo.ts",       "nl -ba foo.ts",       "nl -b a foo.ts",        "bat foo.ts",
        "bat -r 1:20 foo.ts", "sed -n 1,5p foo.ts",  "sed -n '10,$p' foo.ts", "cat ./foo.ts",
        "/bin/cat foo.ts",    "cat -- foo.ts",       "head -20 foo.ts",       "cat 'foo.ts'",
        "sed -ne 5p foo.ts",  "sed -n -e 2p foo.ts", "cat -n foo.ts",         "  cat   foo.ts "};
    for (const char* cmd : same) {
      CAPTURE(cmd);
      const auto target = shell::file_read_target(cmd);
      REQUIRE(target.has_value());
      CHECK(*target == "foo.ts");
    }
    CHECK(shell::file_read_target("cat 'my file.txt'") == "my file.txt");
    CHECK(shell::file_read_target("cat src//a.py") == "src/a.py");
  }

  TEST_CASE("anything else is not a file read") {
    const char* others[] = {"cat a b",
                            "cat",
                            "cat -",
                            "cat a | head",
                            "cat a > b",
                            "cat a; ls",
                            "cat a && ls",
                            "cat $(ls)",
                            "cat `ls`",
                            "cat *.ts",
                            "cat $FILE",
                            "sed 5p a",
                            "sed -n s/a/b/p a",
                            "sed -i -n 1p a",
                            "grep x a",
                            "ls",
                            "head -n",
                            "echo x > /ro/file",
                            "FOO=1 cat a",
                            "cat 'unbalanced",
                            "cat ''",
                            "bat -- ''",
                            "python etl.py"};
    for (const char* cmd : others) {
      CAPTURE(cmd);
      CHECK_FALSE(shell::file_read_target(cmd).has_value());
    }
  }

  TEST_CASE("a lone backslash at the end is a backslash, as bash reads it") {
    // Found by the fuzzer: `bat -- \` used to give an empty operand, an empty path.
    const auto words = shell::split_words("bat -- \\");
    REQUIRE(words.has_value());
    CHECK(*words == std::vector<std::string>{"bat", "--", "\\"});
    CHECK(shell::file_read_target("bat -- \\") == "\\");
    CHECK(shell::split_words("echo a\\ b") == std::vector<std::string>{"echo", "a b"});
  }

  TEST_CASE("command name") {
    CHECK(shell::command_name("ctest --output-on-failure") == "ctest");
    CHECK(shell::command_name("/usr/bin/python3 -m pytest") == "python3");
    CHECK(shell::command_name("CI=1 npm test") == "npm");
    CHECK(shell::command_name("cat a | grep b") == "cat");
    CHECK(shell::command_name("") == "");
  }
}
