# Shared by the scripts in this directory (sourced, not run): paths and messages.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CODESEARCH_STATE_DIR:-$ROOT/.codesearch}"
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
