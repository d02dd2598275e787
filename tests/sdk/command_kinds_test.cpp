// What a shell command line says about itself (worker-sdk/src/command_kinds.cpp; docs/detectors.md,
// "What counts as progress"): here, code given to an interpreter on the command line.
#include <doctest/doctest.h>

#include "command_kinds.hpp"

using loopguard::sdk::is_mutating_command;

TEST_SUITE("command kinds") {
  TEST_CASE("inline code that writes a file is a change") {
    const char* writes[] = {
        R"cmd(python3 -c 'x = open("m.py").readlines(); open("m.py", "w").writelines(x)')cmd",
        R"cmd(python3 -c 'with open("m.py", mode="a") as f: f.write("x")' < m.py)cmd",
        R"cmd(python -c "import pathlib; pathlib.Path('a.py').write_text('')")cmd",
        "python3 - <<'EOF'\nwith open('a.py', 'r+') as f:\n    f.seek(0)\nEOF",
        R"cmd(cd src && python3.11 -c 'import os; os.replace("a", "b")')cmd",
        R"cmd(node -e 'require("fs").writeFileSync("a.js", "")')cmd",
        R"cmd(python3 -c 'import shutil; shutil.copy("a", "b")')cmd",
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
}
