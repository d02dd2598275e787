#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main program built so far:
# the fingerprints of every bundled example trace.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build_dir=${LOOPGUARD_BUILD_DIR:-build}
for trace in tests/data/traces/*.jsonl; do
  "$build_dir/loopguard" fingerprint "$trace"
done
