#!/usr/bin/env bash
# Builds (installing what is missing) and runs the whole suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --all
build_dir=${LOOPGUARD_BUILD_DIR:-build}
cd "$build_dir"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 300 "$@"
