#!/usr/bin/env bash
# Measures indexing and search on real code (see benches/pipeline.rs) against the local
# services, which it starts and stops. The benchmark empties the `codesearch` database of the
# local stack (.codesearch/pgdata); its figures go in docs/BENCHMARKS.md.
#
#   scripts/bench.sh [REPO_DIR...]      (default: crate sources from the cargo registry)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CODESEARCH_STATE_DIR:-$ROOT/.codesearch}"

"$ROOT/scripts/setup.sh"
"$ROOT/scripts/services.sh" start
trap '"$ROOT/scripts/services.sh" stop' EXIT
# shellcheck source=/dev/null
. "$STATE/env"
cd "$ROOT"
cargo bench --locked --bench pipeline -- "$@"
