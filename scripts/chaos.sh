#!/usr/bin/env bash
# Crash loop under load (docs/operations.md, "Crash loops"): SDK workers (loopguard_chaos_load)
# stream events while loopguardd is killed with SIGKILL at random moments N times and restarted
# each time on the same port with the same database. At the end, after a drain, every event sent
# must be acknowledged and each swarm's digest must equal the one computed from every event
# sent: zero lost, zero counted twice. Prints the figures and PASS or FAIL; exit status 1 on
# FAIL, 2 on a usage or build error.
#   scripts/chaos.sh [--kills N] [--workers W] [--seconds S] [--rate R] [--seed X]
#     --kills N     SIGKILLs (default 20)
#     --workers W   SDK workers, spread over 2 swarms (default 16)
#     --seconds S   how long the workers send (default: 1.5 s per kill, at least 10)
#     --rate R      events/s per worker (default 100)
#     --seed X      seed of the kill times (default: random; printed)
#   LOOPGUARD_BUILD_DIR   build directory (default: build; configured by scripts/setup.sh)
# Builds loopguardd and loopguard_chaos_load if needed (no lock of its own). Every process it
# starts is killed by PID on exit. Each restart waits at most ~30 s for the daemon; after the
# kills, the load's end and drain are bounded by S + 90 s.
set -euo pipefail
cd "$(dirname "$0")/.."

kills=20 workers=16 seconds="" rate=100 seed=$((RANDOM * 32768 + RANDOM))
usage() {
  echo "usage: scripts/chaos.sh [--kills N] [--workers W] [--seconds S] [--rate R] [--seed X]" >&2
  exit 2
}
while (($#)); do
  [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || usage
  case $1 in
  --kills) kills=$2 ;;
  --workers) workers=$2 ;;
  --seconds) seconds=$2 ;;
  --rate) rate=$2 ;;
  --seed) seed=$2 ;;
  *) usage ;;
  esac
  shift 2
done
((kills >= 1 && workers >= 1 && rate >= 1)) || usage
[[ -n $seconds ]] || seconds=$((kills * 3 / 2 > 10 ? kills * 3 / 2 : 10))
((seconds >= 2)) || usage

build=${LOOPGUARD_BUILD_DIR:-build}
if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "chaos: $build is not configured; run scripts/setup.sh first" >&2
  exit 2
fi
if ! cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" \
  --target loopguardd loopguard_chaos_load >"$build/chaos-build.log" 2>&1; then
  grep -vE '^\[ *[0-9]+(%|/[0-9]+)\]' "$build/chaos-build.log" >&2 || true
  echo "chaos: build failed (full log: $build/chaos-build.log)" >&2
  exit 2
fi

work=$(mktemp -d /tmp/loopguard-chaos.XXXXXX)
dpid="" lpid=""
cleanup() {
  for p in $dpid $lpid; do
    kill -KILL "$p" 2>/dev/null || true
    { wait "$p" || true; } 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
  echo "chaos: $*" >&2
  echo "chaos: last daemon log lines:" >&2
  tail -n 20 "$work/daemon.log" >&2 || true
  echo "FAIL"
  exit 1
}

# Starts loopguardd on $1 (0: a free port, then kept) with the run's database; sets dpid, port.
# The environment's daemon settings are dropped: the load computes digests with default rules.
start_daemon() {
  rm -f "$work/port"
  for _ in 1 2 3; do
    env -u LOOPGUARD_CONFIG -u LOOPGUARD_TOKEN_FILE -u LOOPGUARD_METRICS_TOKEN_FILE \
      "$build/loopguardd" --listen "127.0.0.1:$1" --db "$work/lg.db" --port-file "$work/port" \
      --compact-log-mb 1 >>"$work/daemon.log" 2>&1 &
    dpid=$!
    for _ in $(seq 200); do
      [[ -s $work/port ]] && break
      kill -0 "$dpid" 2>/dev/null || break
      sleep 0.05
    done
    if [[ -s $work/port ]]; then
      port=$(cat "$work/port")
      return 0
    fi
    kill -KILL "$dpid" 2>/dev/null || true
    { wait "$dpid" || true; } 2>/dev/null
    dpid=""
    sleep 0.5
  done
  fail "loopguardd did not start on 127.0.0.1:$1 (3 attempts)"
}

# Adds the daemon's duplicate and compaction counters to the run's totals (a scrape just before
# each kill and at the end, so a lifetime's last moments may be missed: at least these many).
duplicates=0 compactions=0
scrape() {
  local m
  m=$(curl -s --max-time 2 "http://127.0.0.1:$port/metrics" 2>/dev/null) || return 0
  duplicates=$((duplicates + $(awk '$1 == "loopguard_events_duplicate_total" { print $2 + 0 }' <<<"$m")))
  compactions=$((compactions + $(awk '$1 == "loopguard_compactions_total" { print $2 + 0 }' <<<"$m")))
}

# N sorted kill times (seconds after the load starts), in [0.5, S - 0.5].
kill_times=$(awk -v n="$kills" -v s="$seconds" -v seed="$seed" 'BEGIN {
  srand(seed); for (i = 0; i < n; i++) printf "%.3f\n", 0.5 + rand() * (s - 1) }' | sort -n)

echo "chaos: $kills kills, $workers workers, $seconds s at $rate events/s each, seed $seed"
start_daemon 0
"$build/loopguard_chaos_load" --port "$port" --workers "$workers" --seconds "$seconds" \
  --rate "$rate" --drain-seconds 60 >"$work/load.out" 2>"$work/load.err" &
lpid=$!
t0=$(date +%s.%N)
done_kills=0
for at in $kill_times; do
  # Until the planned moment, but at least 0.2 s after the restart: the workers reconnect.
  wait_s=$(awk -v at="$at" -v t0="$t0" -v now="$(date +%s.%N)" \
    'BEGIN { w = at - (now - t0); printf "%.3f", w < 0.2 ? 0.2 : w }')
  sleep "$wait_s"
  kill -0 "$lpid" 2>/dev/null || fail "the load ended after $done_kills of $kills kills"
  if ! kill -0 "$dpid" 2>/dev/null; then
    wait "$dpid" && code=0 || code=$?
    fail "loopguardd exited by itself (status $code) before kill $((done_kills + 1))"
  fi
  scrape
  kill -KILL "$dpid" 2>/dev/null || true  # it may die on its own in between: the status says
  { wait "$dpid" && code=0 || code=$?; } 2>/dev/null
  ((code == 137)) || fail "kill $((done_kills + 1)): loopguardd exited with $code, not 137"
  dpid=""
  done_kills=$((done_kills + 1))
  start_daemon "$port"
done

# The load sends until S, then drains (at most 60 s): bounded by S + 90 s from its start.
deadline=$((SECONDS + seconds + 90))
while kill -0 "$lpid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
if kill -0 "$lpid" 2>/dev/null; then
  kill -KILL "$lpid"
  wait "$lpid" || true
  lpid=""
  cat "$work/load.out" "$work/load.err" >&2
  fail "the load did not finish in time"
fi
wait "$lpid" && load_code=0 || load_code=$?
lpid=""

echo "kills                $done_kills"
grep -vxE 'PASS|FAIL' "$work/load.out" || true
cat "$work/load.err" >&2
scrape
echo "duplicates skipped   $duplicates (daemon; at least)"
echo "compactions          $compactions (daemon; at least)"
((load_code == 0)) || fail "events lost or counted twice, or not all acknowledged (figures above)"
kill -TERM "$dpid"
for _ in $(seq 150); do
  kill -0 "$dpid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$dpid" 2>/dev/null && fail "loopguardd did not stop within 15 s of SIGTERM after the run"
wait "$dpid" && code=0 || code=$?
dpid=""
((code == 0)) || fail "loopguardd did not stop cleanly after the run (status $code)"
echo "PASS"
