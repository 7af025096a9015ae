#!/usr/bin/env bash
# The main job, on a fresh machine: install the local tools (scripts/setup.sh), start
# PostgreSQL + pgvector and nats-server (scripts/services.sh), build codesearch (the dev
# profile scripts/test.sh builds too; CODESEARCH_BIN=path skips the build), index the given
# directories (default: this repository) and serve searches on NATS until Ctrl-C or SIGTERM,
# when codesearch and then the services it started are stopped.
#
#   scripts/run.sh [PATH...]
#
# Ports: CODESEARCH_PG_PORT (default 54329), CODESEARCH_NATS_PORT (default 4222).
# Everything else is codesearch's own configuration (docs/CONFIGURATION.md), e.g.
# CODESEARCH_EMBEDDER=ollama OLLAMA_URL=http://gpu-box:11434 scripts/run.sh ~/src/app
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# A signal before serve runs (during setup, the services' start or the build) stops the step in
# hand and exits; the EXIT trap of with_services then stops the services this script started.
trap stop_step TERM INT
with_services

BIN="${CODESEARCH_BIN:-}"
if [ -z "$BIN" ]; then
  # The dev profile, as `scripts/test.sh` builds it: one build serves both commands. The numeric
  # crates (candle, gemm, tokenizers) are optimised in it (Cargo.toml), so the model runs at
  # full speed; `cargo build --release` is for installs.
  say "building codesearch (the first build takes several minutes; scripts/test.sh shares it)"
  step cargo build --locked --manifest-path "$ROOT/Cargo.toml" --bin codesearch >&2
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/codesearch"
fi

if [ "$#" -eq 0 ]; then set -- "$ROOT"; fi
say "indexing and serving: $* (Ctrl-C or SIGTERM stops it, and the services it started)"
say "search from another terminal:  . $STATE/env && $BIN search \"where is the config loaded\""
# serve runs as a child so that a signal to this script reaches it: the script forwards
# SIGTERM and SIGINT, waits for serve's clean stop (it drains NATS and finishes the files in
# hand), then the EXIT trap of with_services stops PostgreSQL and NATS if it started them.
"$BIN" serve "$@" &
SERVE_PID=$!
# Both as SIGTERM: bash starts background children with SIGINT ignored.
trap 'kill -TERM "$SERVE_PID" 2>/dev/null || true' TERM INT
status=0
while kill -0 "$SERVE_PID" 2>/dev/null; do
  # A trapped signal ends `wait` early: wait again until serve has exited.
  if wait "$SERVE_PID"; then status=0; else status=$?; fi
done
exit "$status"
