#!/usr/bin/env bash
# Installs whatever build dependency is missing (Debian packages only), then configures and
# builds Release into build/. Idempotent and quiet when everything is already there.
#   LOOPGUARD_BUILD_DIR   build directory (default: build)
#   LOOPGUARD_CMAKE_ARGS  extra arguments for the configure step
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libboost1.81-dev nlohmann-json3-dev libxxhash-dev
  ninja-build                   # the build (README.md, "Building by hand")
  libssl-dev openssl            # TLS (wss://, https://); the openssl command: the Python TLS test
  libsqlitecpp-dev libsqlite3-dev doctest-dev libcli11-dev libspdlog-dev libbenchmark-dev
  libjemalloc-dev               # loopguardd's allocator (docs/performance.md, "The allocator")
  clang-14 libclang-rt-14-dev  # clang: the libFuzzer harnesses (scripts/fuzz.sh)
  clang-tidy                    # scripts/lint.sh (.ci/run's lint stage)
  python3                       # the Python module's tests (worker-sdk/python)
  chromium chromium-driver      # the dashboard's browser test (tests/e2e/dashboard_browser.py)
  prometheus                    # promtool check metrics (tests/e2e)
  haproxy                       # the cluster test (tests/e2e/cluster_test.cpp, scripts/cluster.sh)
  redis-server redis-tools      # scripts/bench/daemon's peer, and its smoke runs (label bench)
  systemd dpkg-dev)             # systemd-analyze verify, dpkg-deb (packaging tests)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing packages and not root; run as root or install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir=${LOOPGUARD_BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  # Ninja: it schedules single compilations across targets, where make waits for a whole target
  # (README.md, "Building by hand").
  # shellcheck disable=SC2086
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${LOOPGUARD_CMAKE_ARGS:-} \
    >/dev/null
fi
log="$build_dir/build.log"
if ! cmake --build "$build_dir" -j "$jobs" >"$log" 2>&1; then
  grep -vE '^\[ *[0-9]+(%|/[0-9]+)\]' "$log" >&2 || true
  echo "setup: build failed (full log: $log)" >&2
  exit 1
fi
