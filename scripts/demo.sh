#!/usr/bin/env bash
# A one-minute tour of swarm mode: loopguardd on a fresh database, a simulated swarm of six
# agents of which four share a dead end, the global verdict reaching them, then kill -9 of the
# daemon mid-run, a restart on the same port, and the counts intact with the agents reconnected.
# Everything runs on loopback in a temporary directory and is cleaned up by PID.
#   LOOPGUARD_BUILD_DIR  build directory (default: build; built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${LOOPGUARD_BUILD_DIR:-build}
[[ -x "$build/loopguardd" && -x "$build/loopguard" ]] || ./scripts/setup.sh
cmake --build "$build" -j2 --target loopguardd loopguard >/dev/null
work=$(mktemp -d /tmp/loopguard-demo.XXXXXX)
dpid= spid=
cleanup() {
  for p in $spid $dpid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
start_daemon() {  # $1: listen address
  rm -f "$work/port"
  "$build/loopguardd" --listen "$1" --db "$work/demo.db" --port-file "$work/port" \
    --config "$work/demo.json" 2>>"$work/daemon.log" >/dev/null &
  dpid=$!
  for _ in $(seq 100); do [[ -s "$work/port" ]] && break; sleep 0.05; done
  [[ -s "$work/port" ]] || { cat "$work/daemon.log" >&2; exit 1; }
}
swarms() { curl -s "http://127.0.0.1:$port/api/swarms"; echo; }

# A small swarm rule so the demo is quick: a warning at 10 counted calls, critical at 20; and a
# $4 budget for the swarm (a warning at 80%), which the agents' reported costs reach.
echo '{"swarm":{"threshold":10,"critical_at":20,"min_workers":2,
  "budget":{"unit":"USD","amount":4,"warn_fraction":0.8}}}' >"$work/demo.json"
say "1. loopguardd on a fresh database"
start_daemon 127.0.0.1:0
port=$(cat "$work/port")
echo "listening on ws://127.0.0.1:$port (database $work/demo.db)"

say "2. six agents, four of them stuck on the same failing call (2 calls/s each, 1.2k tokens and \$0.03 a call)"
"$build/loopguard" simulate --daemon "ws://127.0.0.1:$port" --swarm demo --workers 6 --stuck 4 \
  --rate 2 --duration 12 --tokens 1200 --amount 0.03 >"$work/simulate.out" 2>"$work/simulate.err" &
spid=$!
sleep 5
echo "what the agents were told so far (the dead end, with what it burned):"
grep "told" "$work/simulate.out" | head -4 || true
echo "the daemon's view:"
swarms

say "3. kill -9 the daemon mid-run, restart it on the same port"
kill -9 "$dpid"; wait "$dpid" 2>/dev/null || true
echo "killed pid $dpid; agents keep working locally and queue their events"
sleep 1
start_daemon "127.0.0.1:$port"
echo "restarted as pid $dpid"

say "4. the agents reconnect and resend what was not acknowledged"
wait "$spid" && spid= || { spid=; echo "simulate failed:" >&2; cat "$work/simulate.err" >&2; exit 1; }
tail -n 12 "$work/simulate.out"
echo "the swarm budget warning (every worker, whoever spent it):"
grep "kind=budget" "$work/simulate.out" | head -2 || true
echo "the daemon's view after the crash (nothing lost, nothing counted twice; spent and wasted):"
swarms
curl -s "http://127.0.0.1:$port/metrics" |
  grep -E '^loopguard_(events|events_duplicate|connections)_total|^loopguard_swarm_(wasted_)?cost_total' || true
say "done: docs/sdk.md (Swarm mode) explains what happened"
