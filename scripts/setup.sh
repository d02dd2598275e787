#!/usr/bin/env bash
# Installs whatever is missing (Debian packages only), then configures and builds Release into
# build/. Idempotent and quiet when everything is already there.
#   scripts/setup.sh         what building and running Loopguard needs (scripts/run.sh)
#   scripts/setup.sh --all   that, and the tools the whole suite, the fuzzers, lint and the
#                            benchmarks run: a browser, HAProxy, Redis, Prometheus's promtool, clang
#                            (scripts/test.sh, and so .ci/run)
#   LOOPGUARD_BUILD_DIR   build directory (default: build)
#   LOOPGUARD_CMAKE_ARGS  extra arguments for the configure step
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "") all=0 ;;
  --all) all=1 ;;
  *)
    echo "setup: unknown argument '$1' (usage: scripts/setup.sh [--all])" >&2
    exit 2
    ;;
esac

packages=(build-essential cmake pkg-config libboost1.81-dev nlohmann-json3-dev libxxhash-dev
  ninja-build                   # the build (README.md, "Building by hand")
  libssl-dev                    # TLS (wss://, https://)
  libsqlitecpp-dev libsqlite3-dev doctest-dev libcli11-dev libspdlog-dev libbenchmark-dev
  libjemalloc-dev)              # loopguardd's allocator (docs/performance.md, "The allocator")
if ((all)); then
  packages+=(
    openssl                     # the openssl command: the Python TLS test's certificates
    clang-14 libclang-rt-14-dev # clang: the libFuzzer harnesses (scripts/fuzz.sh)
    clang-tidy                  # scripts/lint.sh (.ci/run's lint stage)
    python3                     # the Python module's tests (worker-sdk/python)
    chromium chromium-driver    # the dashboard's browser test (tests/e2e/dashboard_browser.py)
    prometheus                  # promtool check metrics (tests/e2e)
    haproxy                     # the cluster test (tests/e2e/cluster_test.cpp, scripts/cluster.sh)
    redis-server redis-tools    # scripts/bench/daemon's peer, and its smoke runs (label bench)
    systemd dpkg-dev)           # systemd-analyze verify, dpkg-deb (packaging tests)
fi

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
  # On a machine booted with systemd, these packages start a service of their own on install
  # (Redis on 6379, Prometheus on 9090 of every interface). The tests and benchmarks start
  # their own servers on loopback ports; the packages' services are stopped and disabled, and
  # only those of packages installed just now: one the machine had before is left alone.
  if [[ -d /run/systemd/system ]]; then
    for p in "${missing[@]}"; do
      case $p in
        redis-server | prometheus | haproxy)
          if systemctl disable --now "$p.service" >/dev/null 2>&1; then
            echo "setup: stopped and disabled $p.service (installed for the tests, which run" \
              "their own)" >&2
          fi
          ;;
      esac
    done
  fi
fi

build_dir=${LOOPGUARD_BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  # Ninja: it schedules single compilations across targets, where make waits for a whole target
  # (README.md, "Building by hand").
  # shellcheck disable=SC2086
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${LOOPGUARD_CMAKE_ARGS:-} \
    >/dev/null
elif ((${#missing[@]})) || {
  ((all)) && grep -q '^LOOPGUARD_[A-Z0-9_]*:FILEPATH=.*-NOTFOUND$' "$build_dir/CMakeCache.txt"
}; then
  # Configured again (its settings kept): the suite registers some tests only where their tool
  # is found (python3, systemd-analyze, dpkg-deb), and a build configured before they were
  # installed (by scripts/run.sh, or before another install) would otherwise leave them out.
  cmake -S . -B "$build_dir" >/dev/null
fi
log="$build_dir/build.log"
if ! cmake --build "$build_dir" -j "$jobs" >"$log" 2>&1; then
  grep -vE '^\[ *[0-9]+(%|/[0-9]+)\]' "$log" >&2 || true
  echo "setup: build failed (full log: $log)" >&2
  exit 1
fi
