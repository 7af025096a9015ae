#!/usr/bin/env bash
# Checks the TypeScript host-listener example (examples/host-listener) for real: installs the
# official `nats` npm client and TypeScript into a temporary directory, compiles the example,
# asks the running daemon for a context block, then asks a nats-server with no daemon behind it
# and expects the "spawn without context" answer (exit 3).
#
# Needs: node and npm; a running daemon (scripts/run.sh) reachable at $NATS_URL (default
# nats://127.0.0.1:4222); nats-server from scripts/setup.sh for the no-daemon check.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"; [[ -n "${nats_pid:-}" ]] && kill "$nats_pid" 2>/dev/null || true' EXIT
cp "$root"/examples/host-listener/{getCodebaseContext.ts,package.json,tsconfig.json} "$work"
cd "$work"
say "installing nats and typescript from the npm registry into $work"
npm install --no-audit --no-fund --loglevel=error >/dev/null
say "compiling the example with tsc"
npx tsc
say "asking the daemon at ${NATS_URL:-nats://127.0.0.1:4222} for a 1000-token block"
out="$(node dist/getCodebaseContext.js "${1:-where is the configuration loaded}" 1000)"
head -n 1 <<<"$out" | grep -qx "RELEVANT CODEBASE CONTEXT" || { echo "unexpected block: $out" >&2; exit 1; }
printf '%s\n' "$out" | head -n 5
# shellcheck disable=SC1091
. "$root/.codesearch/tools.env"
port=$((20000 + RANDOM % 20000))
"$CODESEARCH_NATS_SERVER" -a 127.0.0.1 -p "$port" >/dev/null 2>&1 &
nats_pid=$!
sleep 0.5
say "asking a nats-server with no daemon (port $port): expect exit 3"
set +e
NATS_URL="nats://127.0.0.1:$port" node dist/getCodebaseContext.js "anything" 2>/dev/null
rc=$?
set -e
[[ $rc -eq 3 ]] || { echo "expected exit 3 with no daemon, got $rc" >&2; exit 1; }
say "the host-listener example works with the official nats client"
