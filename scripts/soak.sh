#!/usr/bin/env bash
# Soak (docs/operations.md, "Soak"): a real loopguardd (fresh database in a temporary directory,
# a free loopback port) under C concurrent SDK workers (loopguard_soak_load) for S seconds, the
# workers leaving and coming back as new incarnations all along. Reports every R seconds the
# acknowledged events/s, the daemon's resident memory (VmRSS) and open descriptors; at the end
# requires every event acknowledged, no error, and memory and descriptors within 10% of their
# values after the warm-up. Prints PASS or FAIL; exit status 1 on FAIL, 2 on a usage or build
# error or an open-file limit too low for C connections.
#   scripts/soak.sh [--seconds S] [--connections C] [--rate E] [--lifetime L] [--report R]
#                   [--compact-log-mb M]
#     --seconds S      how long the workers send (default 600)
#     --connections C  concurrent worker connections (default 1000)
#     --rate E         events/s per connection (default 5)
#     --lifetime L     mean life of an incarnation in seconds, uniform in L/2..3L/2 (default 60)
#     --report R       seconds between report lines (default 10)
#     --incarnation-idle I  the daemon's retention.incarnation_idle_s (default: L): a worker
#                      that left is forgotten after I s idle, its id remembered for 3L s more,
#                      so what the daemon holds stays bounded however many incarnations come
#                      and go (the report's "held" and "expired" columns); 0 turns it off
#     --compact-log-mb M  the daemon's compaction threshold (default 4, the daemon's own 64): the
#                      database, and SQLite's page cache of it, grow until the log is compacted,
#                      so a run must see compactions before its warm-up ends
#   LOOPGUARD_BUILD_DIR   build directory (default: build; configured by scripts/setup.sh)
#   LOOPGUARD_SOAK_CONFIG a daemon config file to run with (e.g. retention settings)
# Builds loopguardd and loopguard_soak_load if needed (no lock of its own). Every process it
# starts is killed by PID on exit; the load is bounded by S + 120 s.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=600 connections=1000 rate=5 lifetime=60 report=10 compact=4 idle=""
usage() {
  echo "usage: scripts/soak.sh [--seconds S] [--connections C] [--rate E] [--lifetime L]" \
    "[--report R] [--incarnation-idle I] [--compact-log-mb M]" >&2
  exit 2
}
while (($#)); do
  [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || usage
  case $1 in
  --seconds) seconds=$2 ;;
  --connections) connections=$2 ;;
  --rate) rate=$2 ;;
  --lifetime) lifetime=$2 ;;
  --report) report=$2 ;;
  --compact-log-mb) compact=$2 ;;
  --incarnation-idle) idle=$2 ;;
  *) usage ;;
  esac
  shift 2
done
((seconds >= 10 && connections >= 1 && rate >= 1 && lifetime >= 1 && report >= 1 && compact >= 1)) ||
  usage

# Descriptors: the daemon holds one per connection plus ~128 (it raises its own soft limit to
# the hard one at start); the load, in this shell's limit, one per connection plus a few. Both
# inherit this shell's limits, so raise the soft limit to the hard one here.
need=$((connections + 256))
hard=$(ulimit -Hn)
if [[ $hard != unlimited ]] && ((hard < need)); then
  echo "soak: $connections connections need about $need open files, but the hard limit is" \
    "$hard; raise it (ulimit -Hn as root, or LimitNOFILE=) or use fewer --connections" >&2
  exit 2
fi
if ! ulimit -Sn "$hard" 2>/dev/null && ! ulimit -Sn "$need" 2>/dev/null; then
  echo "soak: cannot raise the open-file limit from $(ulimit -Sn) to $need (hard: $hard)" >&2
  exit 2
fi
echo "soak: open-file limit $(ulimit -Sn) (hard $hard)"

build=${LOOPGUARD_BUILD_DIR:-build}
if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "soak: $build is not configured; run scripts/setup.sh first" >&2
  exit 2
fi
if ! cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" \
  --target loopguardd loopguard_soak_load >"$build/soak-build.log" 2>&1; then
  grep -vE '^\[ *[0-9]+(%|/[0-9]+)\]' "$build/soak-build.log" >&2 || true
  echo "soak: build failed (full log: $build/soak-build.log)" >&2
  exit 2
fi

work=$(mktemp -d /tmp/loopguard-soak.XXXXXX)
dpid="" lpid=""
cleanup() {
  for p in $lpid $dpid; do
    kill -KILL "$p" 2>/dev/null || true
    { wait "$p" || true; } 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
  echo "soak: $*" >&2
  echo "soak: last daemon log lines:" >&2
  tail -n 20 "$work/daemon.log" >&2 || true
  echo "FAIL"
  exit 1
}

# The daemon's connection limit: room for all of them and the replacements whose predecessors are
# still closing.
config=${LOOPGUARD_SOAK_CONFIG:-$work/loopguardd.json}
idle=${idle:-$lifetime}
[[ -n ${LOOPGUARD_SOAK_CONFIG:-} ]] ||
  echo "{\"limits\": {\"max_connections\": $((connections + 64))}," \
    "\"swarm\": {\"window_seconds\": 10}," \
    "\"retention\": {\"incarnation_idle_s\": $idle, \"expired_kept_s\": $((3 * lifetime))," \
    "\"sweep_interval_ms\": 1000}}" >"$config"
env -u LOOPGUARD_CONFIG -u LOOPGUARD_TOKEN_FILE -u LOOPGUARD_METRICS_TOKEN_FILE \
  "$build/loopguardd" --listen 127.0.0.1:0 --db "$work/lg.db" --port-file "$work/port" \
  --config "$config" --compact-log-mb "$compact" >"$work/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 200); do
  [[ -s $work/port ]] && break
  kill -0 "$dpid" 2>/dev/null || break
  sleep 0.05
done
[[ -s $work/port ]] || fail "loopguardd did not start"
port=$(cat "$work/port")
if grep -q "lowered max_connections" "$work/daemon.log"; then
  fail "the daemon cannot take $connections connections: $(grep -m1 'lowered max_connections' "$work/daemon.log")"
fi
echo "soak: loopguardd pid $dpid on 127.0.0.1:$port"

"$build/loopguard_soak_load" --port "$port" --daemon-pid "$dpid" --connections "$connections" \
  --seconds "$seconds" --rate "$rate" --lifetime "$lifetime" --report "$report" &
lpid=$!
deadline=$((SECONDS + seconds + 120))
while kill -0 "$lpid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
if kill -0 "$lpid" 2>/dev/null; then
  kill -KILL "$lpid"
  { wait "$lpid" || true; } 2>/dev/null
  lpid=""
  fail "the load did not finish within $((seconds + 120)) s"
fi
wait "$lpid" && load_code=0 || load_code=$?
lpid=""
kill -0 "$dpid" 2>/dev/null || fail "loopguardd exited during the soak"
kill -TERM "$dpid"
for _ in $(seq 150); do
  kill -0 "$dpid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$dpid" 2>/dev/null && fail "loopguardd did not stop within 15 s of SIGTERM"
wait "$dpid" && code=0 || code=$?
dpid=""
((code == 0)) || fail "loopguardd did not stop cleanly (status $code)"
# The load printed its own PASS or FAIL last.
exit "$load_code"
