#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/, docs/fuzzing.md) with clang-14, ASan and UBSan
# into build-fuzz/, checks that each reaches its deep path over its seed corpus, then fuzzes
# each for a while. Exit status non-zero on any finding (the crashing input's path is printed).
#   scripts/fuzz.sh [SECONDS_PER_HARNESS]      default 60
#   LOOPGUARD_FUZZ_DIR      build directory (default: build-fuzz)
#   LOOPGUARD_FUZZ_ONLY     space-separated harness names to run (default: all)
#   LOOPGUARD_BUILD_JOBS    parallel build jobs (default: nproc)
# The repository's seed corpora are never written to: new inputs go to a scratch copy in the
# build directory, findings to BUILD_DIR/artifacts/HARNESS/.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

seconds=${1:-60}
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "usage: scripts/fuzz.sh [SECONDS_PER_HARNESS]" >&2
  exit 2
fi
build_dir=${LOOPGUARD_FUZZ_DIR:-build-fuzz}
[[ $build_dir = /* ]] || build_dir="$repo/$build_dir"
jobs=${LOOPGUARD_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
read -r -a harnesses <<<"${LOOPGUARD_FUZZ_ONLY:-canonical manager protocol_binary protocol_json \
result_mask sdk_config shell_command trace_replay}"

# --- toolchain -------------------------------------------------------------------------------
packages=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "fuzz: installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "fuzz: missing packages and not root; run as root or install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- build -----------------------------------------------------------------------------------
start=$SECONDS
mkdir -p "$build_dir"
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLOOPGUARD_BUILD_FUZZERS=ON -DLOOPGUARD_BUILD_TESTS=OFF -DLOOPGUARD_BUILD_BENCHMARKS=OFF \
    -DLOOPGUARD_ENABLE_ASAN=ON -DLOOPGUARD_ENABLE_UBSAN=ON >"$build_dir/configure.log" 2>&1 || {
    cat "$build_dir/configure.log" >&2
    echo "fuzz: configure failed (is the set of packages of scripts/setup.sh --all installed?)" >&2
    exit 1
  }
fi
log="$build_dir/build.log"
if ! cmake --build "$build_dir" --target loopguard_fuzzers -j "$jobs" >"$log" 2>&1; then
  grep -vE '^\[ *[0-9]+(%|/[0-9]+)\]' "$log" >&2 || true
  echo "fuzz: build failed (full log: $log)" >&2
  exit 1
fi
echo "fuzz: built in $((SECONDS - start)) s"

# --- run -------------------------------------------------------------------------------------
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build_dir/logs"
failures=()
summary=()

# Prints the artifact libFuzzer wrote (and the tail of the log) for a failed run.
report_finding() {
  local name=$1 log=$2
  echo "fuzz: FINDING in $name (log: $log)" >&2
  grep -E 'ERROR: |runtime error: |fuzz contract broken|^SUMMARY: ' "$log" | head -n 5 >&2 || true
  grep -E 'Test unit written to' "$log" | sed 's/^.*Test unit written to /fuzz: crashing input: /' >&2 ||
    true
}

for name in "${harnesses[@]}"; do
  bin="$build_dir/tests/fuzz/${name}_fuzz"
  seeds="$repo/tests/fuzz/corpus/$name"
  scratch="$build_dir/corpus/$name"
  artifacts="$build_dir/artifacts/$name"
  if [[ ! -x $bin || ! -d $seeds ]]; then
    echo "fuzz: no harness or seed corpus for \"$name\"" >&2
    exit 2
  fi
  mkdir -p "$scratch" "$artifacts"
  for f in "$seeds"/*; do [[ -e $scratch/${f##*/} ]] || cp "$f" "$scratch/"; done
  t0=$SECONDS

  # 1. Once over the seeds: no finding, and every counter non-zero (the deep path is reached).
  seed_log="$build_dir/logs/$name.seeds.log"
  if ! "$bin" -runs=0 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$artifacts/" "$seeds" \
    >"$seed_log" 2>&1; then
    report_finding "$name (seed corpus)" "$seed_log"
    failures+=("$name")
    summary+=("$name: FINDING on the seed corpus")
    continue
  fi
  counters=$(grep -E '^fuzz-counters ' "$seed_log" | tail -n 1 || true)
  echo "fuzz: seeds  $counters"
  if [[ -z $counters ]] || grep -qE '=0( |$)' <<<"$counters"; then
    echo "fuzz: $name: a counter is zero (or none printed) over the seed corpus: deep path not reached" >&2
    failures+=("$name")
    summary+=("$name: deep path not reached by the seeds")
    continue
  fi

  # 2. Fuzz for the given time on the scratch corpus.
  run_log="$build_dir/logs/$name.fuzz.log"
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$scratch" >"$run_log" 2>&1; then
    report_finding "$name" "$run_log"
    failures+=("$name")
    summary+=("$name: FINDING after $((SECONDS - t0)) s")
    continue
  fi
  execs=$(grep -E '^stat::number_of_executed_units' "$run_log" | awk '{print $2}' || true)
  counters=$(grep -E '^fuzz-counters ' "$run_log" | tail -n 1 || true)
  echo "fuzz: fuzzed $counters"
  summary+=("$name: ok, ${execs:-?} runs, corpus $(find "$scratch" -type f | wc -l) files, $((SECONDS - t0)) s")
done

echo "fuzz: summary"
for line in "${summary[@]}"; do echo "  $line"; done
if ((${#failures[@]})); then
  echo "fuzz: FAILED (${failures[*]}) after $((SECONDS - start)) s; artifacts under $build_dir/artifacts/" >&2
  exit 1
fi
echo "fuzz: all ${#harnesses[@]} harnesses passed, $seconds s each, $((SECONDS - start)) s in all"
