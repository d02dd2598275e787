#!/usr/bin/env bash
# Runs a cluster of loopguardd daemons behind HAProxy on loopback (docs/scaling.md): each swarm
# lives on exactly one daemon, the one the ring in the cluster file gives it, and HAProxy routes
# /ws?swarm=S there by the bucket map the same ring produced. Prints the one address workers use,
# then serves until Ctrl-C; every process it started is stopped by PID on exit.
#
#   scripts/cluster.sh [--daemons N] [--port P] [--daemon-ports P1,P2,...] [--buckets B]
#                      [--weights W1,W2,...] [--dir DIR] [--write-only]
#
#   --daemons N       daemons d1..dN (default 2)
#   --port P          HAProxy's port for workers (default 7070)
#   --daemon-ports L  the daemons' ports (default P+1 .. P+N)
#   --buckets B       buckets of the ring (default 1024)
#   --weights L       the daemons' weights, 1..1000 each (default 1 each)
#   --dir DIR         where the files, databases and logs go (default: a new /tmp directory)
#   --write-only      write DIR/cluster.json, DIR/haproxy.map and DIR/haproxy.cfg, and exit
#
#   scripts/cluster.sh rebalance OLD_CLUSTER_FILE NEW_CLUSTER_FILE [--dir DIR]
#
#   With every daemon stopped, moves each swarm whose owner differs under NEW_CLUSTER_FILE to
#   its new owner's database (docs/scaling.md, "Adding or removing a daemon"): the databases are
#   DIR/NAME.db for each server NAME (DIR: OLD_CLUSTER_FILE's directory by default), each swarm
#   is exported (DIR/moves.TIME.XXXX/OWNER/), imported, then removed from its old database. Stops at
#   the first refusal (a running daemon holds its file; the new owner already counts the swarm).
#
#   LOOPGUARD_BUILD_DIR  build directory (default: build)
#   LOOPGUARDD           the daemon binary (default: $LOOPGUARD_BUILD_DIR/loopguardd)
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."

die() { echo "cluster.sh: $*" >&2; exit 2; }
fail() { echo "cluster.sh: $*" >&2; exit 1; }
# An argument's path as the caller meant it (this script runs from the repository's root).
from_caller() { if [[ $1 == /* ]]; then echo "$1"; else echo "$here/$1"; fi; }

build=${LOOPGUARD_BUILD_DIR:-build}
loopguardd=${LOOPGUARDD:-$build/loopguardd}

# The server names of a cluster file (names are [A-Za-z0-9_.-]: no JSON escapes to undo).
server_names() {
  grep -o '"name"[[:space:]]*:[[:space:]]*"[A-Za-z0-9_.-]*"' "$1" | sed 's/.*"\([^"]*\)"$/\1/'
}

rebalance() {
  (($# >= 2)) || die "rebalance needs OLD_CLUSTER_FILE NEW_CLUSTER_FILE (see --help)"
  local old new dir=''
  old=$(from_caller "$1")
  new=$(from_caller "$2")
  shift 2
  while (($#)); do
    case $1 in
      --dir) dir=$(from_caller "${2:?--dir needs a directory}"); shift 2 ;;
      *) die "rebalance: unknown argument \"$1\" (see --help)" ;;
    esac
  done
  [[ -x $loopguardd ]] || die "$loopguardd is not built (scripts/setup.sh builds it)"
  local f
  for f in "$old" "$new"; do
    "$loopguardd" --cluster "$f" --print-haproxy-map >/dev/null || die "$f is not a valid cluster file"
  done
  [[ -n $dir ]] || dir=$(dirname "$old")
  local moves
  moves=$(mktemp -d "$dir/moves.$(date -u +%Y%m%dT%H%M%SZ).XXXX")
  local name db
  for name in $(server_names "$old"); do
    db="$dir/$name.db"
    if [[ ! -f $db ]]; then
      echo "cluster.sh: $db does not exist: nothing to move from $name"
      continue
    fi
    "$loopguardd" --db "$db" --cluster "$new" --cluster-self "$name" --export-moved "$moves" ||
      fail "exporting from $db failed; nothing was imported or removed"
  done
  local n=0 owner source base
  shopt -s nullglob
  for f in "$moves"/*/*.lgswarm; do
    owner=$(basename "$(dirname "$f")")
    base=$(basename "$f" .lgswarm)
    source=${base%-*}
    "$loopguardd" --db "$dir/$owner.db" --import-swarm "$f" ||
      fail "importing $f into $dir/$owner.db failed; $dir/$source.db still holds the swarm"
    "$loopguardd" --db "$dir/$source.db" --remove-exported "$f" ||
      fail "removing $f from $dir/$source.db failed after it was imported into $dir/$owner.db"
    n=$((n + 1))
  done
  echo "cluster.sh: moved $n swarms to their owners under $new (exports kept in $moves)"
}

if [[ ${1:-} == rebalance ]]; then
  shift
  rebalance "$@"
  exit 0
fi

daemons=2 port=7070 daemon_ports='' buckets=1024 weights='' dir='' write_only=0
while (($#)); do
  case $1 in
    --daemons) daemons=${2:?--daemons needs a number}; shift 2 ;;
    --port) port=${2:?--port needs a number}; shift 2 ;;
    --daemon-ports) daemon_ports=${2:?--daemon-ports needs a list}; shift 2 ;;
    --buckets) buckets=${2:?--buckets needs a number}; shift 2 ;;
    --weights) weights=${2:?--weights needs a list}; shift 2 ;;
    --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
    --write-only) write_only=1; shift ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument \"$1\" (see --help)" ;;
  esac
done
if ! [[ $daemons =~ ^[0-9]+$ ]] || ((daemons < 1 || daemons > 64)); then
  die "--daemons: expected 1..64, got \"$daemons\""
fi
if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
  die "--port: expected 1..65535, got \"$port\""
fi
if ! [[ $buckets =~ ^[0-9]+$ ]]; then die "--buckets: expected 1..65536, got \"$buckets\""; fi

IFS=, read -r -a ports <<<"$daemon_ports"
if ((${#ports[@]} == 0)); then
  for ((i = 1; i <= daemons; i++)); do ports+=($((port + i))); done
fi
((${#ports[@]} == daemons)) || die "--daemon-ports: expected $daemons ports, got \"$daemon_ports\""
IFS=, read -r -a weight_list <<<"$weights"
if ((${#weight_list[@]} == 0)); then
  for ((i = 1; i <= daemons; i++)); do weight_list+=(1); done
fi
((${#weight_list[@]} == daemons)) || die "--weights: expected $daemons weights, got \"$weights\""

[[ -x $loopguardd ]] || die "$loopguardd is not built (scripts/setup.sh builds it)"
if [[ -z $dir ]]; then
  dir=$(mktemp -d /tmp/loopguard-cluster.XXXXXX)
else
  mkdir -p "$dir"
fi
dir=$(cd "$dir" && pwd)

# The one cluster file: the daemons read it (--cluster), and the map HAProxy routes by comes
# from it through the same function (loopguardd --print-haproxy-map).
{
  printf '{\n  "buckets": %s,\n  "servers": [\n' "$buckets"
  for ((i = 0; i < daemons; i++)); do
    printf '    {"name": "d%d", "address": "127.0.0.1:%s", "weight": %s}%s\n' $((i + 1)) \
      "${ports[i]}" "${weight_list[i]}" "$([[ $((i + 1)) -lt $daemons ]] && echo ,)"
  done
  printf '  ]\n}\n'
} >"$dir/cluster.json"
"$loopguardd" --cluster "$dir/cluster.json" --print-haproxy-map >"$dir/haproxy.map"

# Routing: the bucket is crc32(url_dec(swarm)) mod B, exactly what the daemons compute; the map
# names the owner's backend. HAProxy ends a parameter at '&', ';' or '?' and url_dec turns '+'
# into a space after a raw '?', where the daemons split at '&' only and keep '+': a query holding
# a raw '?' or ';' is refused (clients percent-encode them; the SDK encodes every reserved byte).
# No health checks and one server per backend: a down daemon's swarms wait for it (no failover,
# so a swarm never has two owners). timeout tunnel covers an upgraded WebSocket: above the
# daemons' idle timeout (120 s), so that theirs, with its reason, fires first.
{
  cat <<EOF
# Written by scripts/cluster.sh from $dir/cluster.json (docs/scaling.md).
global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout http-request 10s
    timeout client 150s
    timeout server 150s
    timeout tunnel 150s
    timeout client-fin 5s
    # A down daemon: 503 at once (the SDK backs off and retries by itself), no retry here.
    retries 0

frontend workers
    bind 127.0.0.1:$port
    http-request return status 404 content-type text/plain string "workers connect to /ws?swarm=S; read each daemon's API at its own address" unless { path /ws }
    http-request return status 400 content-type text/plain string "a raw '?' or ';' in the query: percent-encode them (%3F, %3B)" if { query -m sub ? ; }
    http-request set-var(txn.bucket) url_param(swarm),url_dec,crc32,mod($buckets)
    http-request return status 400 content-type text/plain string "no swarm in the URL (/ws?swarm=S), or a malformed one" unless { url_param(swarm) -m found } { var(txn.bucket) -m found }
    use_backend %[var(txn.bucket),map_int($dir/haproxy.map)]
EOF
  for ((i = 0; i < daemons; i++)); do
    printf '\nbackend d%d\n    server d%d 127.0.0.1:%s\n' $((i + 1)) $((i + 1)) "${ports[i]}"
  done
} >"$dir/haproxy.cfg"

if ((write_only)); then
  echo "cluster.sh: wrote $dir/cluster.json, $dir/haproxy.map, $dir/haproxy.cfg"
  exit 0
fi

command -v haproxy >/dev/null ||
  die "haproxy is not installed (apt-get install -y haproxy, or scripts/setup.sh --all)"
haproxy -c -q -f "$dir/haproxy.cfg" || die "haproxy refused $dir/haproxy.cfg"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ((i = 0; i < daemons; i++)); do
  name=d$((i + 1))
  rm -f "$dir/$name.port"
  "$loopguardd" --listen "127.0.0.1:${ports[i]}" --db "$dir/$name.db" \
    --cluster "$dir/cluster.json" --cluster-self "$name" --port-file "$dir/$name.port" \
    >/dev/null 2>>"$dir/$name.log" &
  pids+=($!)
done
for ((i = 0; i < daemons; i++)); do
  name=d$((i + 1))
  for _ in $(seq 100); do [[ -s $dir/$name.port ]] && break; sleep 0.05; done
  [[ -s $dir/$name.port ]] || { cat "$dir/$name.log" >&2; die "$name did not start"; }
done
haproxy -db -f "$dir/haproxy.cfg" >>"$dir/haproxy.log" 2>&1 &
pids+=($!)

echo "cluster: $daemons daemons behind HAProxy (files, databases and logs in $dir)"
for ((i = 0; i < daemons; i++)); do
  echo "  d$((i + 1)): http://127.0.0.1:${ports[i]}/ (weight ${weight_list[i]}, pid ${pids[i]})"
done
echo "workers connect to ws://127.0.0.1:$port (the swarm goes in the URL: /ws?swarm=S)"
echo "Ctrl-C stops everything (a daemon killed meanwhile is not restarted: its swarms wait for it)"
wait
