#!/usr/bin/env bash
# scripts/setup.sh's choices, without installing anything: a copy of the script runs with
# dpkg-query, apt-get, systemctl, cmake and id replaced by recorders on PATH (a real apt-get
# would need the network and change the machine), and with its "booted with systemd" check
# pointed at a directory the test creates or not. Checks: the packages each mode installs, the
# services stopped after an install (only those of packages installed just now, only under
# systemd), when the build is configured again, and a bad argument.
#   tests/scripts/setup_test.sh            (ctest: scripts.setup)
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/loopguard-setup-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

mkdir -p "$work/repo/scripts" "$work/bin"
sed "s|/run/systemd/system|$work/systemd|" "$repo/scripts/setup.sh" >"$work/repo/scripts/setup.sh"
chmod +x "$work/repo/scripts/setup.sh"
grep -q "$work/systemd" "$work/repo/scripts/setup.sh" ||
  fail "setup.sh no longer checks /run/systemd/system"

# dpkg-query: a package is installed unless it is listed in $work/missing.
cat >"$work/bin/dpkg-query" <<EOF
#!/usr/bin/env bash
grep -qxF -- "\${!#}" "$work/missing" && exit 1
printf 'install ok installed'
EOF
for tool in apt-get systemctl cmake; do
  printf '#!/usr/bin/env bash\necho "%s $*" >>"%s/calls"\n' "$tool" "$work" >"$work/bin/$tool"
done
printf '#!/usr/bin/env bash\necho 0\n' >"$work/bin/id"
chmod +x "$work/bin/"*

# run MISSING SYSTEMD(yes|no) CACHE(yes|no) [ARG]: runs the copy; its calls land in $work/calls.
run() {
  tr ' ' '\n' <<<"$1" >"$work/missing"
  rm -rf "$work/systemd" "$work/repo/build" "$work/calls"
  touch "$work/calls"
  [[ $2 == yes ]] && mkdir "$work/systemd"
  mkdir -p "$work/repo/build"
  [[ $3 == yes ]] && touch "$work/repo/build/CMakeCache.txt"
  copy "${@:4}"
}
# The copy, with the recorders first on PATH and none of the caller's settings (the sanitizer
# stage runs the suite with LOOPGUARD_BUILD_DIR set).
copy() {
  env -u LOOPGUARD_BUILD_DIR -u LOOPGUARD_CMAKE_ARGS PATH="$work/bin:$PATH" \
    "$work/repo/scripts/setup.sh" "$@" >"$work/out" 2>&1
}
called() { grep -qE -- "$1" "$work/calls"; }

# A bad argument: exit 2, naming it, nothing installed.
run "redis-server" yes yes --everything
status=$?
((status == 2)) || fail "an unknown argument exited with $status, not 2"
grep -q "unknown argument '--everything'" "$work/out" || fail "the error does not name the argument"
called . && fail "an unknown argument still did: $(cat "$work/calls")"

# Nothing missing, configured: no install, no configure, a build.
run "" yes yes
called "^apt-get" && fail "installed with nothing missing"
called "^cmake -S" && fail "configured again with nothing installed"
called "^cmake --build build" || fail "did not build"

# The build set (scripts/run.sh): a tool only the suite uses is not installed.
suite_only="python3 chromium chromium-driver prometheus haproxy redis-server redis-tools clang-tidy"
run "cmake $suite_only" yes yes
called "^apt-get install .* cmake$" ||
  fail "the build set did not install cmake: $(cat "$work/calls")"
for p in $suite_only; do
  called "^apt-get install .* $p( |$)" && fail "the build set installed $p"
done
called "^systemctl" && fail "the build set touched a service"
called "^cmake -S \. -B build$" || fail "not configured again after an install (its settings kept)"

# --all (scripts/test.sh): the suite's tools too; the services of the packages just installed
# are stopped and disabled, a package the machine already had keeps its service.
run "chromium prometheus haproxy" yes yes --all
for p in chromium prometheus haproxy; do
  called "^apt-get install .* $p( |$)" || fail "--all did not install $p"
done
called "^systemctl disable --now prometheus.service$" || fail "prometheus.service left running"
called "^systemctl disable --now haproxy.service$" || fail "haproxy.service left running"
called "^systemctl disable --now redis-server.service$" &&
  fail "redis-server.service disabled though redis-server was installed before"
run "redis-server" yes yes --all
called "^systemctl disable --now redis-server.service$" || fail "redis-server.service left running"
called "^systemctl disable --now chromium" && fail "a service disabled for chromium"

# Without systemd (a container), no systemctl at all.
run "redis-server" no yes --all
called "^apt-get install .* redis-server" || fail "--all did not install redis-server"
called "^systemctl" && fail "systemctl called without systemd"

# --all, nothing missing, but a tool the configure step looked for was not there then (installed
# since by other means): configured again. The build set leaves that to scripts/test.sh.
run "" no yes --all
echo "LOOPGUARD_PYTHON3:FILEPATH=LOOPGUARD_PYTHON3-NOTFOUND" >"$work/repo/build/CMakeCache.txt"
copy --all
called "^cmake -S \. -B build$" || fail "not configured again with a tool NOTFOUND in the cache"
: >"$work/calls"
copy
called "^cmake -S" && fail "the build set configured again for a NOTFOUND tool"

# Not configured yet: configured with Ninja, Release.
run "" no no
called "^cmake -S \. -B build -G Ninja -DCMAKE_BUILD_TYPE=Release" ||
  fail "a fresh build is not configured"

if ((failures)); then
  echo "setup test: $failures failure(s)" >&2
  exit 1
fi
echo "setup test: passed"
