// What a shell command line says about itself (worker-sdk/src/command_kinds.cpp; docs/detectors.md,
// "What counts as progress"): code given to an interpreter on the command line, commands on
// separate lines, here-documents, file operations.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>

#include "command_kinds.hpp"

using loopguard::sdk::is_file_op_command;
using loopguard::sdk::is_mutating_command;
using loopguard::sdk::is_test_command;

TEST_SUITE("command kinds") {
  TEST_CASE("inline code that writes a file is a change") {
    const char* writes[] = {
        R"cmd(python3 -c 'x = open("m.py").readlines(); open("m.py", "w").writelines(x)')cmd",
        R"cmd(python3 -c 'with open("m.py", mode="a") as f: f.write("x")' < m.py)cmd",
        R"cmd(python -c "import pathlib; pathlib.Path('a.py').write_text('')")cmd",
        "python3 - <<'EOF'\nwith open('a.py', 'r+') as f:\n    f.seek(0)\nEOF",
        "cd src\npython3 <<EOF\nopen('a.py', 'w').write('x')\nEOF\nls",
        R"cmd(cd src && python3.11 -c 'import os; os.replace("a", "b")')cmd",
        R"cmd(node -e 'require("fs").writeFileSync("a.js", "")')cmd",
        R"cmd(python3 -c 'import shutil; shutil.copy("a", "b")')cmd",
        R"cmd(python3 -c 'from pathlib import Path; Path("a.py").open("w").close()')cmd",
        R"cmd(python3 -c 'import io; io.open(os.path.join("a", "b.py"), "wt").close()')cmd",
        // A quote escaped inside a double-quoted script.
        R"cmd(python3 -c "f = open(\"m.py\", \"w\"); f.close()")cmd",
    };
    for (const char* c : writes) {
      CAPTURE(c);
      CHECK(is_mutating_command(c));
    }
  }

  TEST_CASE("inline code that only reads or prints is not") {
    const char* reads[] = {
        R"cmd(python3 -c 'print(open("m.py").read())')cmd",
        R"cmd(python3 -c 'print(open("m.py", "r").read()[:200])')cmd",
        R"cmd(python3 -c 'import sys; sys.stdout.write(open("a", encoding="utf-8").read())')cmd",
        R"cmd(python3 -c 'import json; print(json.load(open("a,b.json")))')cmd",
        R"cmd(python3 -c "import os; print(open(os.path.join('src', 'app.py')).read())")cmd",
        R"cmd(python3 -c 'print(open("w").read())')cmd",
        R"cmd(node -e 'console.log(require("fs").readFileSync("a.js", "utf8"))')cmd",
        // Write calls outside inline code: a script's name, an argument.
        "python3 write_text.py",
        "grep -n 'f.write(' src/io.py",
    };
    for (const char* c : reads) {
      CAPTURE(c);
      CHECK_FALSE(is_mutating_command(c));
    }
  }

  TEST_CASE("each line is a command of its own, but a here-document's body and a quoted script") {
    // A test run or a change on a later line.
    CHECK(is_test_command("rm -f /tmp/debug.txt\npytest t.py::test_a\ncat /tmp/debug.txt"));
    CHECK(is_mutating_command("cd src\nsed -i 's/a/b/' m.py"));
    CHECK_FALSE(is_test_command("cd src\nls"));
    // The body of a here-document is data: a line `pytest` or `rm -rf x` in it runs nothing.
    CHECK_FALSE(is_test_command("cat <<'EOF' | wc -l\npytest -q\nEOF\nls"));
    CHECK_FALSE(is_mutating_command("grep -c x <<EOF\nrm -rf build\nEOF"));
    CHECK(is_test_command("python3 - <<'EOF'\nprint(1)\nEOF\npytest -q"));
    CHECK(is_test_command("cat <<-END | wc -l\n\tx\n\tEND\nmake test"));
    // A here-string is not a here-document.
    CHECK(is_test_command("grep x <<< 'a'\npytest"));
    // A backslash escapes the quote after it: no quote is left open to swallow the next line.
    CHECK(is_test_command("echo It\\'s done\npytest -q"));
    CHECK(is_test_command("echo 'it'\\''s'\npytest -q"));
    // In `$((…))` a `<<` is a shift; a quoted delimiter may hold a blank.
    CHECK(is_test_command("echo $((1 << 2))\npytest -q"));
    CHECK_FALSE(is_test_command("cat <<\"END X\"\npytest\nEND X\nls"));
    // Lines inside quotes are one argument: `cp = 1` in a script copies nothing.
    CHECK_FALSE(is_mutating_command("python3 -c 'import sys\ncp = 1\nrm = cp'"));
  }

  TEST_CASE("a file operation is a command that only reads or writes files") {
    CHECK(is_file_op_command("cat missing.txt"));
    CHECK(is_file_op_command("cd src && sed -n 1,5p a.py"));
    CHECK(is_file_op_command("echo x > /ro/file"));
    // A redirection's `&` separates nothing.
    CHECK(is_file_op_command("sed -n 1,5p a.py 2>&1"));
    CHECK(is_file_op_command("cat a.py &>/dev/null"));
    // A file written, then a build that fails: the build failed, not the file operation.
    CHECK_FALSE(is_file_op_command(
        "cat <<'EOF' > conf.py\nx = 1\nEOF\ncd docs\nsphinx-build -b text . _build"));
    CHECK_FALSE(is_file_op_command("cd build && make && cat out.txt"));
  }

  TEST_CASE("a long hostile command line is read in linear time") {
    // 4 MiB of unclosed calls, redirections and separators: each looked at once (bounded), so
    // this returns at once; quadratic reading would take hours.
    std::string c = "python3 -c '";
    while (c.size() < (std::size_t{4} << 20)) c += "open(a, 2>&1 stdout.write(; <<x \\' $((";
    CHECK_FALSE(is_mutating_command(c));
    CHECK_FALSE(is_test_command(c));
    CHECK_FALSE(is_file_op_command(c));
  }
}
