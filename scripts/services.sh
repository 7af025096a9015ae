#!/usr/bin/env bash
# Starts or stops the local PostgreSQL + pgvector and nats-server used by scripts/run.sh and
# scripts/bench.sh (tests start their own). Needs scripts/setup.sh to have run.
#
#   scripts/services.sh start|stop|status|up
#
# `up` exits 0 when PostgreSQL's server process is alive and something answers on the NATS
# port, and otherwise says which is down and exits 1: scripts/run.sh's watch over the services.
#
# State lives in $CODESEARCH_STATE_DIR (default .codesearch/): pgdata/, postgres.log, nats.log,
# and `env`, which exports DATABASE_URL and NATS_URL for codesearch.
# Ports: CODESEARCH_PG_PORT (default 54329), CODESEARCH_NATS_PORT (default 4222).
# PostgreSQL's shared_buffers: CODESEARCH_PG_SHARED_BUFFERS (default a quarter of the memory,
# between 128MB and 4096MB; docs/DEPLOYMENT.md, "Sizing").
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PG_PORT="${CODESEARCH_PG_PORT:-54329}"
NATS_PORT="${CODESEARCH_NATS_PORT:-4222}"
PGDATA="$STATE/pgdata"
PGRUN="$STATE/pgrun"

[ -f "$STATE/tools.env" ] || die "run scripts/setup.sh first"
# shellcheck source=/dev/null
. "$STATE/tools.env"

as_pg() { # a PostgreSQL tool, as the unprivileged user when we are root
  if [ -n "$CODESEARCH_PG_USER" ]; then
    setpriv --reuid="$CODESEARCH_PG_USER" --regid="$CODESEARCH_PG_USER" --init-groups "$@"
  else
    "$@"
  fi
}
own() { [ -n "$CODESEARCH_PG_USER" ] && chown "$CODESEARCH_PG_USER" "$@"; return 0; }
# Whether the nats-server this script started runs: the pid it wrote down, still a nats-server
# (after a crash or a reboot the pid may be another process's, which stop must not kill), and
# not a dead one waiting to be reaped (a zombie, state Z, keeps its name for a while).
nats_running() {
  local pid stat
  pid=$(cat "$STATE/nats.pid" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = nats-server ] \
    && stat=$(cat "/proc/$pid/stat" 2>/dev/null) && [[ "${stat##*) }" != Z* ]]
}
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# PostgreSQL also loads pg_prewarm, whose worker writes down which pages its buffers hold
# (every 5 minutes and at shutdown) and reads them back after a start: the first searches after
# a restart do not wait for the index's pages one by one.
# A quarter of the memory this machine (or its cgroup's limit) has, between 128 MB and 4 GB:
# searches walk the HNSW index, about 1.2 KiB a chunk, and pages held by PostgreSQL itself
# are cheaper to read than copies from the kernel's cache (docs/BENCHMARKS.md).
shared_buffers() {
  if [ -n "${CODESEARCH_PG_SHARED_BUFFERS:-}" ]; then
    echo "$CODESEARCH_PG_SHARED_BUFFERS"
    return
  fi
  local mb limit
  mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo 2>/dev/null || echo 0)
  limit=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || echo max)
  if [[ "$limit" =~ ^[0-9]+$ ]] && (( limit / 1048576 < mb )); then mb=$(( limit / 1048576 )); fi
  mb=$(( mb / 4 ))
  (( mb < 128 )) && mb=128
  (( mb > 4096 )) && mb=4096
  echo "${mb}MB"
}

start() {
  mkdir -p "$PGRUN"; own "$PGRUN"
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    say "initialising a PostgreSQL cluster in $PGDATA"
    # Into pgdata.partial, renamed when whole: an interrupted initdb leaves no cluster that the
    # next start would take for a finished one.
    rm -rf "$PGDATA" "$PGDATA.partial"
    mkdir -p "$PGDATA.partial"; own "$PGDATA.partial"
    as_pg "$CODESEARCH_PG_BIN/initdb" -D "$PGDATA.partial" -U postgres --auth=trust -E UTF8 >"$STATE/initdb.log" 2>&1 \
      || die "initdb failed; see $STATE/initdb.log"
    mv "$PGDATA.partial" "$PGDATA"
  fi
  local psql=("$CODESEARCH_PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tAq)
  # After a crash (or a reboot) the pid in postmaster.pid may name another process since:
  # PostgreSQL would take it for a server still running and refuse to start.
  local pid comm
  pid=$(head -1 "$PGDATA/postmaster.pid" 2>/dev/null || true)
  if [[ "$pid" =~ ^[0-9]+$ ]] && comm=$(cat "/proc/$pid/comm" 2>/dev/null) && [ "$comm" != postgres ]; then
    say "removing a stale $PGDATA/postmaster.pid (pid $pid is now \`$comm\`, not PostgreSQL)"
    rm -f "$PGDATA/postmaster.pid"
  elif [[ "$pid" =~ ^[0-9]+$ ]] && [ ! -e "/proc/$pid" ]; then
    say "PostgreSQL stopped without shutting down (a crash, a kill, a power cut): it replays its write-ahead log as it starts (pg_ctl may say another server might be running: it is not)"
  fi
  if as_pg "$CODESEARCH_PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    say "PostgreSQL already running from $PGDATA"
    # It may still be starting (a crash recovery takes a while).
    local waited=0
    until "${psql[@]}" -c "SELECT 1" >/dev/null 2>&1; do
      if (( waited >= 60 )); then
        die "PostgreSQL's pid file ($PGDATA/postmaster.pid) names a live process (pid $(head -1 "$PGDATA/postmaster.pid")), but nothing answers on 127.0.0.1:$PG_PORT after 60 s; see $STATE/postgres.log. If that process is not this PostgreSQL, delete the pid file and start again"
      fi
      (( waited == 0 )) && say "waiting for it to accept connections (log: $STATE/postgres.log)"
      sleep 1; waited=$(( waited + 1 ))
    done
    # Started by an older version of this script, or with another size: say how to apply it.
    local running wanted
    running=$("${psql[@]}" -c "SELECT setting::int8 * 8 / 1024 FROM pg_settings WHERE name = 'shared_buffers'" \
      2>/dev/null || true)
    wanted=$(shared_buffers)
    case "$wanted" in
      *MB) wanted=${wanted%MB} ;;
      *GB) wanted=$(( ${wanted%GB} * 1024 )) ;;
      *) wanted="" ;;
    esac
    if [ -n "$running" ] && [ -n "$wanted" ] && [ "$running" != "$wanted" ]; then
      say "it runs with shared_buffers ${running}MB, not ${wanted}MB: scripts/services.sh stop, then start, applies it"
    fi
  else
    port_busy "$PG_PORT" && die "port $PG_PORT is taken; set CODESEARCH_PG_PORT to a free port"
    local buffers; buffers=$(shared_buffers)
    say "starting PostgreSQL 18 + pgvector on 127.0.0.1:$PG_PORT, shared_buffers $buffers (log: $STATE/postgres.log)"
    touch "$STATE/postgres.log"; own "$STATE/postgres.log"
    as_pg "$CODESEARCH_PG_BIN/pg_ctl" -D "$PGDATA" -l "$STATE/postgres.log" -w \
      -o "-p $PG_PORT -k $PGRUN -c listen_addresses=127.0.0.1 -c shared_buffers=$buffers -c shared_preload_libraries=pg_prewarm" start >/dev/null \
      || die "PostgreSQL did not start; see $STATE/postgres.log"
  fi
  "${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'codesearch'" | grep -q 1 \
    || "${psql[@]}" -c "CREATE DATABASE codesearch"

  if nats_running; then
    say "nats-server already running (pid $(cat "$STATE/nats.pid"))"
  elif port_busy "$NATS_PORT"; then
    say "something already listens on 127.0.0.1:$NATS_PORT; using it as NATS"
  else
    say "starting nats-server on 127.0.0.1:$NATS_PORT (log: $STATE/nats.log)"
    # setsid: a Ctrl-C meant for codesearch must not stop NATS before codesearch drains.
    setsid nohup "$CODESEARCH_NATS_SERVER" -a 127.0.0.1 -p "$NATS_PORT" >"$STATE/nats.log" 2>&1 &
    echo $! >"$STATE/nats.pid"
    for _ in $(seq 50); do port_busy "$NATS_PORT" && break; sleep 0.1; done
    port_busy "$NATS_PORT" || die "nats-server did not start; see $STATE/nats.log"
  fi
  cat >"$STATE/env" <<ENV
# Written by scripts/services.sh: source it to talk to the local stack.
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/codesearch"
export NATS_URL="nats://127.0.0.1:$NATS_PORT"
export CODESEARCH_MODEL_DIR="$CODESEARCH_MODEL_DIR"
export CODESEARCH_ONNXRUNTIME="$CODESEARCH_ONNXRUNTIME"
ENV
}

stop() {
  if nats_running; then
    say "stopping nats-server"
    kill "$(cat "$STATE/nats.pid")" 2>/dev/null || true
  fi
  rm -f "$STATE/nats.pid"
  if [ -f "$PGDATA/PG_VERSION" ] && as_pg "$CODESEARCH_PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    say "stopping PostgreSQL"
    as_pg "$CODESEARCH_PG_BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  fi
}

# Whether both services are up (see the top); the first one down is said on stdout.
up() {
  if ! as_pg "$CODESEARCH_PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    echo "PostgreSQL is not running (its log: $STATE/postgres.log)"
    return 1
  fi
  if ! port_busy "$NATS_PORT"; then
    echo "nothing answers on the NATS port, $NATS_PORT (nats-server's log: $STATE/nats.log)"
    return 1
  fi
}

case "${1:-}" in
  start) start ;;
  up) up ;;
  stop) stop ;;
  status)
    as_pg "$CODESEARCH_PG_BIN/pg_ctl" -D "$PGDATA" status || true
    if nats_running; then echo "nats-server running (pid $(cat "$STATE/nats.pid"))"
    else echo "nats-server not running"; fi ;;
  *) die "usage: scripts/services.sh start|stop|status|up" ;;
esac
