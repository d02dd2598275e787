#!/usr/bin/env bash
# clang-tidy with the project's checks (.clang-tidy: no function over 60 lines) over every
# source file of shared/, worker-sdk/, daemon/ and cli/ and of the tools under scripts/ that the
# build compiles (benchmarks, load, chaos), or over the files given.
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
    args, skip = [], False
    for a in shlex.split(unit["command"]):
        if skip:
            skip = False
        elif a in ("-include", "-o", "-c"):
            skip = True  # the precompiled header, the object, the unit
        elif a != "-Winvalid-pch":
            args.append(a)
    for source in re.findall(r'#include "([^"]+)"', open(unit["file"]).read()):
        command = unit["command"].replace(unit["file"], source)
        entries.append(dict(unit, file=source, command=command))
        alone.append((source, shlex.join(args + ["-w", "-fsyntax-only", source])))
json.dump(entries, open(sys.argv[2], "w"), indent=1)
with open(sys.argv[3], "w") as f:
    for source, command in alone:
        f.write(f"{source}\t{command}\n")
PY
if [[ ${#given[@]} -gt 0 ]]; then
  files=("${given[@]}")
else
  mapfile -t files < <(git ls-files 'shared/*.cpp' 'worker-sdk/*.cpp' 'daemon/*.cpp' 'cli/*.cpp')
  while IFS= read -r f; do
    if grep -qF "\"file\": \"$PWD/$f\"" "$db/compile_commands.json"; then files+=("$f"); fi
  done < <(git ls-files 'scripts/*.cpp')
fi
# Two at a time (this is a two-core machine); each file's findings print as they come.
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc 2>/dev/null || echo 2)" -n 4 "$tidy" -p "$db" --quiet 2>/dev/null
echo "lint: ${#files[@]} files clean" >&2

# The unity sources alone: every one (tests included) on a full run, the given ones otherwise.
alone=()
while IFS=$'\t' read -r source command; do
  if [[ ${#given[@]} -eq 0 || " ${given[*]} " == *" $source "* ]]; then alone+=("$command"); fi
done < "$db/units.txt"
if [[ ${#alone[@]} -gt 0 ]]; then
  printf '%s\n' "${alone[@]}" > "$db/alone.txt"
  if ! (cd "$build_dir" && xargs -P "$(nproc 2>/dev/null || echo 2)" -d '\n' -I{} sh -c '{}' \
    < "$db/alone.txt"); then
    echo "lint: a source of a unity build does not compile on its own (above); include what it uses" >&2
    exit 1
  fi
  echo "lint: ${#alone[@]} unity sources compile on their own" >&2
fi
