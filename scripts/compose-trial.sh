#!/usr/bin/env bash
# Runs docker-compose.yml for real and checks it, as DEPLOYMENT.md's install does: builds the
# image, brings the stack up on empty volumes, waits for codesearch to be healthy, checks
# /ready, that this checkout got indexed, that a search over NATS finds something and that
# NATS's monitoring answers; then takes the stack down with its volumes. Prints how long each
# step took.
#
#   scripts/compose-trial.sh                                # Docker Hub's images
#   eval "$(scripts/compose-standins.sh)" && scripts/compose-trial.sh   # without Docker Hub
#
# Needs a running Docker daemon and Debian's docker-compose (or `docker compose`). It runs as
# project `codesearch-trial` on ports of its own (NATS 14222, monitoring 18222, HTTP 19090;
# NATS_PORT, NATS_MONITOR_PORT, HTTP_PORT override), so a local stack on the usual ports is
# left alone. A database password is made in secrets/ when there is none. Not part of the
# test command: it needs root's Docker and ~10 minutes (the image build).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

if command -v docker-compose >/dev/null; then
  compose() { docker-compose -p codesearch-trial "$@"; }
elif docker compose version >/dev/null 2>&1; then
  compose() { docker compose -p codesearch-trial "$@"; }
else
  die "neither docker-compose nor \`docker compose\` is installed"
fi
docker info >/dev/null 2>&1 || die "the Docker daemon does not answer (start it: dockerd &)"
export NATS_PORT="${NATS_PORT:-14222}" NATS_MONITOR_PORT="${NATS_MONITOR_PORT:-18222}" \
  HTTP_PORT="${HTTP_PORT:-19090}"

if [ ! -s secrets/postgres_password ]; then
  say "making a database password in secrets/postgres_password"
  mkdir -p -m 700 secrets
  openssl rand -hex 24 > secrets/postgres_password
  chmod 644 secrets/postgres_password
fi

started=$SECONDS
lap() { # what: prints the seconds since the last lap
  echo "  $1: $((SECONDS - started)) s" >&2
  started=$SECONDS
}
cleanup() {
  say "taking the stack down with its volumes"
  compose down -v >/dev/null 2>&1 || true
}
trap cleanup EXIT

say "building the image (docker-compose build codesearch)"
compose build codesearch >&2 || die "the image did not build"
lap "build"

say "bringing the stack up on empty volumes"
compose down -v >/dev/null 2>&1 || true
compose up -d >&2 || die "the stack did not come up; see: docker-compose -p codesearch-trial logs"
healthy=""
for _ in $(seq 1 150); do
  id="$(compose ps -q codesearch)"
  state="$(docker inspect -f '{{.State.Health.Status}}' "$id" 2>/dev/null || true)"
  if [ "$state" = healthy ]; then
    healthy=1
    break
  fi
  sleep 2
done
[ -n "$healthy" ] || { compose logs --tail=40 codesearch >&2; die "codesearch never became healthy"; }
lap "up to healthy"

say "checking /ready, the first index pass, a search over NATS, NATS's monitoring"
ready="$(curl -fsS "http://127.0.0.1:$HTTP_PORT/ready")" || die "/ready did not answer 200: $ready"
echo "  /ready: $ready" >&2
passed=""
for _ in $(seq 1 150); do
  if compose logs codesearch 2>&1 | grep -q "index pass complete"; then
    passed=1
    break
  fi
  sleep 2
done
[ -n "$passed" ] || die "no index pass completed; see: docker-compose -p codesearch-trial logs codesearch"
compose logs codesearch 2>&1 | grep -m1 "index pass complete" | sed 's/.*INFO/ /' >&2
lap "first pass"
out="$(compose exec -T codesearch codesearch search "where is the configuration loaded" -n 3)" \
  || die "a search over NATS failed"
grep -q '^1\. ' <<<"$out" || die "a search over NATS found nothing: $out"
echo "$out" | grep '^[0-9]\.' | cut -c1-100 | sed 's/^/  /' >&2
curl -fsS "http://127.0.0.1:$NATS_MONITOR_PORT/healthz" >/dev/null || die "NATS monitoring did not answer"
say "the compose stack works"
