#!/usr/bin/env bash
# A smoke run of a benchmark script (ctest label `bench`, CMakeLists.txt): runs COMMAND and
# passes when it exits 0 and its output has a line matching REGEX (grep -E), i.e. it still runs
# and still prints its table. Measures nothing.
#   tests/bench_smoke.sh REGEX COMMAND [ARG...]
set -uo pipefail
regex=$1
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
if ((status != 0)); then
  echo "bench smoke: '$*' exited with $status" >&2
  exit 1
fi
if ! grep -qE -- "$regex" <<<"$out"; then
  echo "bench smoke: no line of '$*' matches: $regex" >&2
  exit 1
fi
