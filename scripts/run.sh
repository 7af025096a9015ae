#!/usr/bin/env bash
# The main job, on a fresh machine: install the local tools (scripts/setup.sh), start
# PostgreSQL + pgvector and nats-server (scripts/services.sh), build codesearch (release),
# index the given directories (default: this repository) and serve searches on NATS until
# Ctrl-C, when the services are stopped again.
#
#   scripts/run.sh [PATH...]
#
# Ports: CODESEARCH_PG_PORT (default 54329), CODESEARCH_NATS_PORT (default 4222).
# Everything else is codesearch's own configuration (docs/CONFIGURATION.md), e.g.
# CODESEARCH_EMBEDDER=ollama OLLAMA_URL=http://gpu-box:11434 scripts/run.sh ~/src/app
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

with_services

say "building codesearch (release; the first build takes several minutes)"
cargo build --release --locked --manifest-path "$ROOT/Cargo.toml" --bin codesearch >&2
BIN="$ROOT/target/release/codesearch"

if [ "$#" -eq 0 ]; then set -- "$ROOT"; fi
say "indexing and serving: $* (Ctrl-C stops)"
say "search from another terminal:  . $STATE/env && $BIN search \"where is the config loaded\""
"$BIN" serve "$@"
