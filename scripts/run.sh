#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: loopguardd on 127.0.0.1:7070 with its
# embedded SQLite database ./loopguard.db, in the foreground (Ctrl-C stops it cleanly: it drains,
# writes a final checkpoint and exits 0). Those are loopguardd's defaults, so LOOPGUARD_* variables
# and a config file (LOOPGUARD_CONFIG) apply as documented (docs/operations.md, "Configuration").
# Extra arguments go to loopguardd, e.g.
#   ./scripts/run.sh --listen 127.0.0.1:7171 --db /var/lib/loopguard/loopguard.db
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build_dir=${LOOPGUARD_BUILD_DIR:-build}
listen=$("$build_dir/loopguardd" --print-config "$@" | sed -n 's/^  "listen": "\(.*\)",$/\1/p')
echo "loopguardd: dashboard http://$listen/, workers ws://$listen/ws; Ctrl-C stops" >&2
exec "$build_dir/loopguardd" "$@"
