# shellcheck shell=bash
# Shared by the scripts in this directory (sourced, not run): paths and messages.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CODESEARCH_STATE_DIR:-$ROOT/.codesearch}"
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
# A long step (setup, service start-up, a build) run in the background and waited for, so that
# a signal trapped by the calling script is acted on at once, not when the step ends (bash
# defers traps until a foreground child exits). STEP holds its pid meanwhile, for stop_step.
STEP=""
step() {
  "$@" &
  STEP=$!
  local rc=0
  wait "$STEP" || rc=$?
  STEP=""
  return "$rc"
}
# A trap for TERM and INT during steps: stops the step in hand, its own children too (pip,
# cargo's rustc), as Ctrl-C at a terminal would, and exits; EXIT traps then run.
stop_step() {
  if [ -n "$STEP" ]; then
    pkill -TERM -P "$STEP" 2>/dev/null || true
    kill -TERM "$STEP" 2>/dev/null || true
  fi
  exit 143
}
# The build both README commands share: the dev profile in ${CARGO_TARGET_DIR:-target}, this
# crate compiled by clippy's driver (RUSTC_WORKSPACE_WRAPPER), so that test.sh's lints come out
# of the build the tests need. `cargo clippy` would check every dependency a second time, in a
# mode of its own: 3.7 minutes of a fresh clone's 13.6 on two cores. The driver is rustc with
# the lints added; dependencies are compiled by rustc as before. run.sh must build with the
# same compiler, or cargo compiles this crate again for it. `shared_build lints` (test.sh)
# requires clippy; run.sh builds without it when it is not installed.
shared_build() {
  if clippy-driver -V >/dev/null 2>&1; then
    export RUSTC_WORKSPACE_WRAPPER=clippy-driver
  elif [ "${1:-}" = lints ]; then
    die "clippy is not installed for this toolchain: \`rustup component add clippy\`"
  else
    say "clippy is not installed (\`rustup component add clippy\`): building with rustc alone, a build scripts/test.sh cannot share"
  fi
}
# Installs what is missing (scripts/setup.sh), starts PostgreSQL and NATS until the calling
# script exits (scripts/services.sh), and exports their addresses. `$STATE/services.owner`
# lists the scripts (pids) using services a script started: the last of them to exit stops
# them, so run.sh and bench.sh can share them. Services started by hand (running, no such
# list) are left running. Services whose scripts were all killed before they could stop them
# (SIGKILL, a closed terminal's SIGHUP) are taken over. OWN_SERVICES says whether this script
# is among the services' users (false when they were started by hand).
OWN_SERVICES=false
with_services() {
  step "$ROOT/scripts/setup.sh"
  local before owners
  before="$("$ROOT/scripts/services.sh" status 2>/dev/null || true)"
  owners="$(live_owners)"
  local both_up=false some_up=false
  [[ "$before" == *"server is running"* && "$before" == *"nats-server running"* ]] && both_up=true
  [[ "$before" == *"running (pid"* || "$before" == *"server is running"* ]] && some_up=true
  if $both_up && [ ! -f "$STATE/services.owner" ]; then
    say "PostgreSQL and NATS were already running: they are left running at exit"
  else
    if $both_up && [ -n "$owners" ]; then
      say "PostgreSQL and NATS were started by a script still running (pid$owners): they are shared, and stopped when the last of the two exits"
    elif $some_up && [ -f "$STATE/services.owner" ] && [ -z "$owners" ]; then
      say "PostgreSQL and NATS were left running by an earlier script that was killed: this one stops them at exit"
    fi
    # Registered before the start, so that a signal during it stops what was half started.
    echo "$owners $$" | tr ' ' '\n' | grep . >"$STATE/services.owner"
    OWN_SERVICES=true
    trap release_services EXIT
  fi
  step "$ROOT/scripts/services.sh" start
  # shellcheck source=/dev/null
  . "$STATE/env"
}
# The pids listed in `$STATE/services.owner` that are still running, but $1, each after a space.
live_owners() {
  [ -f "$STATE/services.owner" ] || return 0
  local pid
  while read -r pid; do
    if [ -n "$pid" ] && [ "$pid" != "${1:-}" ] && kill -0 "$pid" 2>/dev/null; then
      printf ' %s' "$pid"
    fi
  done <"$STATE/services.owner"
}
# The EXIT trap of with_services: this script leaves the list of the services' users, and the
# last one stops them.
release_services() {
  local rest
  rest="$(live_owners "$$")"
  if [ -n "$rest" ]; then
    echo "$rest" | tr ' ' '\n' | grep . >"$STATE/services.owner"
    say "PostgreSQL and NATS are left running for the script still using them (pid$rest)"
  else
    "$ROOT/scripts/services.sh" stop
    rm -f "$STATE/services.owner"
  fi
}
