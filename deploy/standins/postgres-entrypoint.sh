#!/bin/sh
# The stand-in PostgreSQL image's entrypoint (scripts/compose-standins.sh): what the official
# image's docker-entrypoint.sh does for docker-compose.yml. On an empty data directory it runs
# initdb with POSTGRES_USER and the password of POSTGRES_PASSWORD_FILE (or POSTGRES_PASSWORD),
# scram-sha-256 over TCP, and creates POSTGRES_DB; then it runs `postgres` with the command's
# arguments, listening on every interface, as user postgres.
set -eu
[ "${1:-}" = postgres ] && shift
PGDATA="${PGDATA:-/var/lib/postgresql/data}"
export PGDATA

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" postgres "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  user="${POSTGRES_USER:-postgres}"
  db="${POSTGRES_DB:-$user}"
  if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
    password="$(cat "$POSTGRES_PASSWORD_FILE")"
  else
    password="${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE}"
  fi
  pwfile="$(mktemp)"
  printf '%s\n' "$password" > "$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -w -o "-c listen_addresses='' -k /var/run/postgresql" start >/dev/null
  if [ "$db" != postgres ]; then
    createdb -h /var/run/postgresql -U "$user" "$db"
  fi
  pg_ctl -w -m fast stop >/dev/null
  echo "stand-in entrypoint: initialised $PGDATA (user $user, database $db)" >&2
fi

exec postgres -c listen_addresses='*' -k /var/run/postgresql "$@"
