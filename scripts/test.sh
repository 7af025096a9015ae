#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs the local tools (scripts/setup.sh:
# PostgreSQL + pgvector, nats-server, the local model), then `cargo test`. The tests start
# their own PostgreSQL cluster and nats-servers on free ports and stop them when they end.
#
#   scripts/test.sh [extra cargo test arguments]
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$ROOT/scripts/setup.sh"
# shellcheck source=/dev/null
. "$STATE/tools.env"

say "running the tests (the first build takes several minutes)"
cd "$ROOT"
# Doc tests are left out: the doc comments hold JSON examples, not Rust.
cargo test --locked --lib --bins --tests "$@"
