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
# Installs what is missing (scripts/setup.sh), starts PostgreSQL and NATS until the calling
# script exits (scripts/services.sh), and exports their addresses. Services that were already
# running (started by hand, or by another script that is still running) are left running;
# those a script started and was killed before it could stop them (SIGKILL, a closed terminal's
# SIGHUP) are taken over and stopped at exit. `$STATE/services.owner` holds the pid of the
# script that started them.
with_services() {
  step "$ROOT/scripts/setup.sh"
  local before owner=""
  before="$("$ROOT/scripts/services.sh" status 2>/dev/null || true)"
  [ -f "$STATE/services.owner" ] && owner="$(cat "$STATE/services.owner")"
  if [[ "$before" == *"server is running"* && "$before" == *"nats-server running"* ]] \
    && ! { [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; }; then
    say "PostgreSQL and NATS were already running: they are left running at exit"
  else
    if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null \
      && [[ "$before" == *"running (pid"* || "$before" == *"server is running"* ]]; then
      say "PostgreSQL and NATS were left running by an earlier script that was killed (pid $owner): this one stops them at exit"
    fi
    # Set before the start, so that a signal during it stops what was half started.
    trap '"$ROOT/scripts/services.sh" stop; rm -f "$STATE/services.owner"' EXIT
    echo "$$" >"$STATE/services.owner"
  fi
  step "$ROOT/scripts/services.sh" start
  # shellcheck source=/dev/null
  . "$STATE/env"
}
