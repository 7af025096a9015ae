#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: checks formatting (`cargo fmt --check`), the
# configuration docs (scripts/gen-config-doc.py --check) and the deployment files
# (scripts/check-deploy.sh), installs the local tools (scripts/setup.sh:
# PostgreSQL + pgvector, nats-server, the local model), builds the tests and benches with
# clippy's lints denying warnings (what `cargo clippy --all-targets -- -D warnings` checks, in
# the same build as the tests: see shared_build in scripts/lib.sh), then runs `cargo test`. The
# tests start their own PostgreSQL cluster and nats-servers on free ports and stop them when
# they end. scripts/run.sh builds the same units, so the tree is built once for both.
# One test installs the official MCP and NATS clients (PyPI `mcp`, npm
# `@modelcontextprotocol/inspector`, `nats`, `typescript`) into temporary directories and runs
# them against a test daemon: it needs node and npm (Debian's are installed when missing).
#
#   scripts/test.sh [extra cargo test arguments]
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$ROOT/scripts/setup.sh"
# shellcheck source=/dev/null
. "$STATE/tools.env"

# The secure-connection tests make their certificates with the openssl command.
if ! command -v openssl >/dev/null; then
  say "installing Debian's openssl (apt-get), for the TLS tests' certificates"
  apt-get update -qq && apt-get install -y -qq openssl >&2 || die "could not install openssl"
fi

# The official-clients test runs the MCP Inspector and the TypeScript host example.
if ! command -v npm >/dev/null; then
  say "installing Debian's nodejs and npm (apt-get), for the official-clients test"
  apt-get update -qq && apt-get install -y -qq nodejs npm >&2 || die "could not install nodejs and npm"
fi

cd "$ROOT"
say "checking formatting (cargo fmt --check)"
cargo fmt --check || die "formatting differs: run \`cargo fmt\`"

say "checking docs/CONFIGURATION.md's key table against config/default.toml"
python3 "$ROOT/scripts/gen-config-doc.py" --check || die "the configuration docs are stale"

# docker-compose.yml and the Kubernetes manifests, checked without an engine or a cluster.
"$ROOT/scripts/check-deploy.sh"

shared_build lints
say "building the tests and benches, with clippy's lints (the first build takes several minutes; scripts/run.sh shares it)"
# Diagnostics in colour at a terminal, plain in a log.
format=json
[ -t 2 ] && format=json-diagnostic-rendered-ansi
cargo test --locked --no-run --lib --bins --tests --benches --message-format="$format" |
  python3 "$ROOT/scripts/cargo-warnings.py" "$ROOT/Cargo.toml" ||
  die "the build failed, or the lints found warnings (above)"

say "running the tests"
# Doc tests are left out: the doc comments hold JSON examples, not Rust.
cargo test --locked --lib --bins --tests "$@"
