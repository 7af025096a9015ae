#!/usr/bin/env bash
# Measures indexing and search on real code (see benches/pipeline.rs) against the local
# services, which it starts and stops, in the database `codesearch_bench` of the local stack
# (emptied at each run; the `codesearch` database is not touched). Figures go in
# docs/BENCHMARKS.md.
#
#   scripts/bench.sh [REPO_DIR...]      (default: crate sources from the cargo registry)
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$ROOT/scripts/setup.sh"
"$ROOT/scripts/services.sh" start
trap '"$ROOT/scripts/services.sh" stop' EXIT
# shellcheck source=/dev/null
. "$STATE/env"
# shellcheck source=/dev/null
. "$STATE/tools.env"
# A database of its own: the benchmark empties it, and its vectors must never reach the
# `codesearch` database that scripts/run.sh serves.
PSQL=("$CODESEARCH_PG_BIN/psql" "$DATABASE_URL" -tAq)
"${PSQL[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'codesearch_bench'" | grep -q 1 \
  || "${PSQL[@]}" -c "CREATE DATABASE codesearch_bench"
export DATABASE_URL="${DATABASE_URL%/*}/codesearch_bench"
cd "$ROOT"
cargo bench --locked --bench pipeline -- "$@"
