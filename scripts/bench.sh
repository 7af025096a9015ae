#!/usr/bin/env bash
# Benchmarks on real code against the local services, which it starts (and stops, if it started
# them). Figures go in docs/BENCHMARKS.md. The `codesearch` database that scripts/run.sh serves
# is not touched.
#
#   scripts/bench.sh [pipeline] [REPO_DIR...]
#       indexing and search speed (benches/pipeline.rs) in the database `codesearch_bench`,
#       emptied at each run; default corpus: crate sources from the cargo registry
#   scripts/bench.sh relevance
#       Recall@5/10 and MRR of lexical, vector and hybrid search on labelled queries
#       (benches/relevance.rs) in the database `codesearch_relevance`, kept between runs so
#       that only changed files are embedded again
#   scripts/bench.sh live [REPO_DIR]
#       the live daemon with the local model (benches/live.rs): embeddings requested by a
#       one-function edit, save-to-searchable latency, a 1,000-file burst; in the database
#       `codesearch_live`, emptied at each run
#   scripts/bench.sh context
#       the context pre-fetch on labelled tasks (benches/context.rs): share of the files a task
#       needs in a 4,000-token block against a keyword-only block, time to build a block, and
#       MCP spawn-per-call beside NATS, in the database `codesearch_context`, kept between runs
#   scripts/bench.sh scale [CHUNKS]
#       search latency per mode and recall@10 of the HNSW index against exact search at an
#       index of CHUNKS chunks (default 100000; benches/scale.rs), built from the cargo
#       registry's crates in the database `codesearch_scale_CHUNKS`, kept between runs
#   scripts/bench.sh embed
#       the local model alone on each engine (benches/embed.rs): query embedding p50/p95,
#       document chunks per second, and the agreement of the engines' vectors; no services
#   scripts/bench.sh fleet
#       search throughput over NATS with 1, 2 and 3 `codesearch serve` processes on one index
#       (benches/fleet.rs), requests per second at p95 <= 50 ms, in the database
#       `codesearch_fleet`, kept between runs; BENCH_CRATES, BENCH_DAEMONS, BENCH_CLIENTS,
#       BENCH_DAEMON_LOG, BENCH_CODESEARCH (another build, to compare) and BENCH_BURST=N (N
#       searches at once: what admission control answers under a flood) are described there
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The model alone needs no services.
if [ "${1:-}" = embed ]; then
  "$ROOT/scripts/setup.sh"
  # shellcheck source=/dev/null
  . "$STATE/tools.env"
  cd "$ROOT"
  shift
  exec cargo bench --locked --bench embed -- "$@"
fi

# Ctrl-C or SIGTERM during setup or the services' start stops that step and the services.
trap stop_step TERM INT
with_services
trap - TERM INT
# shellcheck source=/dev/null
. "$STATE/tools.env"
# A database of its own: the benchmark empties it, and its vectors must never reach the
# `codesearch` database that scripts/run.sh serves.
BENCH=pipeline
case "${1:-}" in
  pipeline | relevance | live | context | scale | fleet | embed) BENCH=$1; shift ;;
esac
DB="codesearch_bench"
[ "$BENCH" = relevance ] && DB="codesearch_relevance"
[ "$BENCH" = live ] && DB="codesearch_live"
[ "$BENCH" = context ] && DB="codesearch_context"
[ "$BENCH" = fleet ] && DB="codesearch_fleet"
[ "$BENCH" = scale ] && DB="codesearch_scale_${1:-100000}"
PSQL=("$CODESEARCH_PG_BIN/psql" "$DATABASE_URL" -tAq)
"${PSQL[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 \
  || "${PSQL[@]}" -c "CREATE DATABASE $DB"
export DATABASE_URL="${DATABASE_URL%/*}/$DB"
cd "$ROOT"
cargo bench --locked --bench "$BENCH" -- "$@"
