#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main program built so far: `loopguard replay`
# over the bundled example traces (what Loopguard would have told each agent, as JSON Lines),
# then the same with --expect (each example checked against its own expectation).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build_dir=${LOOPGUARD_BUILD_DIR:-build}
"$build_dir/loopguard" replay tests/data/traces/*.jsonl
"$build_dir/loopguard" replay --expect tests/data/traces/*.jsonl
