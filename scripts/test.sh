#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: checks formatting (`cargo fmt --check`), the
# configuration docs (scripts/gen-config-doc.py --check) and the deployment files
# (scripts/check-deploy.sh), installs the local tools (scripts/setup.sh:
# PostgreSQL + pgvector, nats-server, the local model), runs the lints (`cargo clippy --all-targets -- -D warnings`), then `cargo test`. The
# tests start their own PostgreSQL cluster and nats-servers on free ports and stop them when
# they end. Clippy and the tests share one build profile (dev), so the tree is built once.
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

say "lints (cargo clippy --all-targets -- -D warnings; the first build takes several minutes)"
cargo clippy --locked --all-targets -- -D warnings

say "running the tests"
# Doc tests are left out: the doc comments hold JSON examples, not Rust.
cargo test --locked --lib --bins --tests "$@"
