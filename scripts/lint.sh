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
if [[ ${#given[@]} -gt 0 ]]; then
  files=("${given[@]}")
else
  mapfile -t files < <(git ls-files 'shared/*.cpp' 'worker-sdk/*.cpp' 'daemon/*.cpp' 'cli/*.cpp')
  while IFS= read -r f; do
    if grep -qF "\"file\": \"$PWD/$f\"" "$build_dir/compile_commands.json"; then files+=("$f"); fi
  done < <(git ls-files 'scripts/*.cpp')
fi
# Two at a time (this is a two-core machine); each file's findings print as they come.
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc 2>/dev/null || echo 2)" -n 4 "$tidy" -p "$build_dir" --quiet 2>/dev/null
echo "lint: ${#files[@]} files clean" >&2
