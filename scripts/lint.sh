#!/usr/bin/env bash
# clang-tidy with the project's checks (.clang-tidy: no function over 60 lines) over every
# source file of shared/, worker-sdk/, daemon/ and cli/ and of the tools under scripts/ that the
# build compiles (benchmarks, load, chaos), or over the files given; then every source of a unity
# build (the CLI's, the tests'), or the given ones, compiled alone (syntax only).
# Needs a configured build directory (compile_commands.json); LOOPGUARD_BUILD_DIR, default build.
set -euo pipefail
given=()
for f in "$@"; do given+=("$(realpath "$f")"); done
cd "$(dirname "$0")/.."
build_dir=${LOOPGUARD_BUILD_DIR:-build}
if [[ ! -f "$build_dir/compile_commands.json" ]]; then
  echo "lint: no $build_dir/compile_commands.json; run ./scripts/test.sh (or cmake) first" >&2
  exit 2
fi
tidy=$(command -v clang-tidy || command -v clang-tidy-14 || true)
if [[ -z "$tidy" ]]; then
  echo "lint: clang-tidy is not installed (apt-get install clang-tidy)" >&2
  exit 2
fi
# A source compiled in a unity build (the `loopguard` command's and the test executables':
# CMake's Unity/unity_N_cxx.cxx includes it) has no entry of its own in the build's database: it
# is linted with its unit's command, from a copy of the database that lists it. Such a source
# must also compile on its own (LOOPGUARD_UNITY=OFF, or another unit's order), not only after
# the sources before it in its unit: each is checked alone, syntax only, without the unit's
# precompiled header (units.txt: one command per source).
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - "$build_dir/compile_commands.json" "$db/compile_commands.json" "$db/units.txt" <<'PY'
import json, re, shlex, sys
entries = json.load(open(sys.argv[1]))
alone = []
for unit in [e for e in entries if "/Unity/unity_" in e["file"]]:
    # Without the object, the unit and the precompiled header (GCC: -include H; clang:
    # -Xclang -include-pch -Xclang P -Xclang -include -Xclang H).
    given, args, i = shlex.split(unit["command"]), [], 0
    while i < len(given):
        a = given[i]
        if a in ("-o", "-c", "-include"):
            i += 2
        elif a == "-Xclang" and i + 1 < len(given) and given[i + 1] in ("-include", "-include-pch"):
            i += 4
        else:
            if a != "-Winvalid-pch":
                args.append(a)
            i += 1
    for source in re.findall(r'#include "([^"]+)"', open(unit["file"]).read()):
        command = unit["command"].replace(unit["file"], source)
        entries.append(dict(unit, file=source, command=command))
        check = shlex.join(args + ["-w", "-fsyntax-only", source])
        alone.append((source, shlex.join(["cd", unit["directory"]]) + " && " + check))
json.dump(entries, open(sys.argv[2], "w"), indent=1)
with open(sys.argv[3], "w") as f:
    for source, command in alone:
        f.write(f"{source}\t{command}\n")
PY
if [[ ${#given[@]} -gt 0 ]]; then
  files=()
  # Tests only compile alone (below): clang-tidy cannot read their GCC precompiled headers.
  for f in "${given[@]}"; do [[ "$f" == "$PWD/tests/"* ]] || files+=("$f"); done
else
  mapfile -t files < <(git ls-files 'shared/*.cpp' 'worker-sdk/*.cpp' 'daemon/*.cpp' 'cli/*.cpp')
  while IFS= read -r f; do
    if grep -qF "\"file\": \"$PWD/$f\"" "$db/compile_commands.json"; then files+=("$f"); fi
  done < <(git ls-files 'scripts/*.cpp')
fi
# Two at a time (this is a two-core machine); each file's findings print as they come.
if [[ ${#files[@]} -gt 0 ]]; then
  printf '%s\n' "${files[@]}" |
    xargs -P "$(nproc 2>/dev/null || echo 2)" -n 4 "$tidy" -p "$db" --quiet 2>/dev/null
  echo "lint: ${#files[@]} files clean" >&2
fi

# The unity sources alone: every one (tests included) on a full run, the given ones otherwise.
alone=()
while IFS=$'\t' read -r source command; do
  if [[ ${#given[@]} -eq 0 || " ${given[*]} " == *" ""$source"" "* ]]; then
    alone+=("$command")
  fi
done < "$db/units.txt"
if [[ ${#alone[@]} -gt 0 ]]; then
  printf '%s\n' "${alone[@]}" > "$db/alone.txt"
  if ! xargs -P "$(nproc 2>/dev/null || echo 2)" -d '\n' -I{} sh -c '{}' <"$db/alone.txt"; then
    echo "lint: a unity source does not compile on its own (above): include what it uses" >&2
    exit 1
  fi
  echo "lint: ${#alone[@]} unity sources compile on their own" >&2
fi
