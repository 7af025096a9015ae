#!/usr/bin/env bash
# The main job, on a fresh machine: install the local tools (scripts/setup.sh), start
# PostgreSQL + pgvector and nats-server in .codesearch/, build codesearch (release), index the
# given directories (default: this repository) and serve searches on NATS until Ctrl-C, when
# the services are stopped again.
#
#   scripts/run.sh [PATH...]
#
# Ports: CODESEARCH_PG_PORT (default 54329), CODESEARCH_NATS_PORT (default 4222).
# Everything else is codesearch's own configuration (docs/CONFIGURATION.md), e.g.
# CODESEARCH_EMBEDDER=ollama OLLAMA_URL=http://gpu-box:11434 scripts/run.sh ~/src/app
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CODESEARCH_STATE_DIR:-$ROOT/.codesearch}"
PG_PORT="${CODESEARCH_PG_PORT:-54329}"
NATS_PORT="${CODESEARCH_NATS_PORT:-4222}"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

"$ROOT/scripts/setup.sh"
# shellcheck source=/dev/null
. "$STATE/tools.env"

as_pg() { # run a PostgreSQL tool as the unprivileged user when we are root
  if [ -n "$CODESEARCH_PG_USER" ]; then
    setpriv --reuid="$CODESEARCH_PG_USER" --regid="$CODESEARCH_PG_USER" --init-groups "$@"
  else
    "$@"
  fi
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# --- PostgreSQL ---
PGDATA="$STATE/pgdata"
PGRUN="$STATE/pgrun"
mkdir -p "$PGRUN"
[ -n "$CODESEARCH_PG_USER" ] && chown "$CODESEARCH_PG_USER" "$PGRUN"
if [ ! -f "$PGDATA/PG_VERSION" ]; then
  say "initialising a PostgreSQL cluster in $PGDATA"
  mkdir -p "$PGDATA"
  [ -n "$CODESEARCH_PG_USER" ] && chown "$CODESEARCH_PG_USER" "$PGDATA"
  as_pg "$CODESEARCH_PG_BIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 >"$STATE/initdb.log" 2>&1 \
    || die "initdb failed; see $STATE/initdb.log"
fi
if as_pg "$CODESEARCH_PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
  say "PostgreSQL already running from $PGDATA"
else
  port_busy "$PG_PORT" && die "port $PG_PORT is taken; set CODESEARCH_PG_PORT to a free port"
  say "starting PostgreSQL on 127.0.0.1:$PG_PORT (log: $STATE/postgres.log)"
  touch "$STATE/postgres.log"
  [ -n "$CODESEARCH_PG_USER" ] && chown "$CODESEARCH_PG_USER" "$STATE/postgres.log"
  as_pg "$CODESEARCH_PG_BIN/pg_ctl" -D "$PGDATA" -l "$STATE/postgres.log" -w \
    -o "-p $PG_PORT -k $PGRUN -c listen_addresses=127.0.0.1" start >/dev/null \
    || die "PostgreSQL did not start; see $STATE/postgres.log"
fi
"$CODESEARCH_PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tAc \
  "SELECT 1 FROM pg_database WHERE datname = 'codesearch'" | grep -q 1 \
  || "$CODESEARCH_PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -qc "CREATE DATABASE codesearch"

# --- NATS ---
NATS_PID=""
if port_busy "$NATS_PORT"; then
  say "something already listens on 127.0.0.1:$NATS_PORT; using it as NATS"
else
  say "starting nats-server on 127.0.0.1:$NATS_PORT (log: $STATE/nats.log)"
  "$CODESEARCH_NATS_SERVER" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$STATE/jetstream" >"$STATE/nats.log" 2>&1 &
  NATS_PID=$!
  for _ in $(seq 50); do port_busy "$NATS_PORT" && break; sleep 0.1; done
  port_busy "$NATS_PORT" || die "nats-server did not start; see $STATE/nats.log"
fi

stop_services() {
  say "stopping the services"
  [ -n "$NATS_PID" ] && kill "$NATS_PID" 2>/dev/null || true
  as_pg "$CODESEARCH_PG_BIN/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null 2>&1 || true
}
trap stop_services EXIT

export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/codesearch"
export NATS_URL="nats://127.0.0.1:$NATS_PORT"
export CODESEARCH_MODEL_DIR
cat > "$STATE/env" <<ENV
# Source this to talk to the stack started by scripts/run.sh.
export DATABASE_URL="$DATABASE_URL"
export NATS_URL="$NATS_URL"
export CODESEARCH_MODEL_DIR="$CODESEARCH_MODEL_DIR"
ENV

say "building codesearch (release; the first build takes several minutes)"
cargo build --release --manifest-path "$ROOT/Cargo.toml" --bin codesearch >&2
BIN="$ROOT/target/release/codesearch"

if [ "$#" -eq 0 ]; then set -- "$ROOT"; fi
say "indexing and serving: $* (Ctrl-C stops)"
say "search from another terminal:  . $STATE/env && $BIN search \"where is the config loaded\""
"$BIN" serve "$@"
