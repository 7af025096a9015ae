# Shared by the scripts in this directory (sourced, not run): paths and messages.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CODESEARCH_STATE_DIR:-$ROOT/.codesearch}"
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
# Installs what is missing (scripts/setup.sh), starts PostgreSQL and NATS until the calling
# script exits (scripts/services.sh), and exports their addresses. Services that were already
# running (started by hand, or by another script) are left running.
with_services() {
  "$ROOT/scripts/setup.sh"
  local before
  before="$("$ROOT/scripts/services.sh" status 2>/dev/null || true)"
  "$ROOT/scripts/services.sh" start
  if [[ "$before" == *"server is running"* && "$before" == *"nats-server running"* ]]; then
    say "PostgreSQL and NATS were already running: they are left running at exit"
  else
    trap '"$ROOT/scripts/services.sh" stop' EXIT
  fi
  # shellcheck source=/dev/null
  . "$STATE/env"
}
