#!/usr/bin/env bash
# The main job, on a fresh machine: install the local tools (scripts/setup.sh), start
# PostgreSQL + pgvector and nats-server (scripts/services.sh), build codesearch (the dev
# profile scripts/test.sh builds too; CODESEARCH_BIN=path skips the build), index the given
# directories (default: this repository) and serve searches on NATS until Ctrl-C or SIGTERM,
# when codesearch and then the services it started are stopped.
#
#   scripts/run.sh [PATH | NAME=PATH ...]
#
# Ports: CODESEARCH_PG_PORT (default 54329), CODESEARCH_NATS_PORT (default 4222).
# Everything else is codesearch's own configuration (docs/CONFIGURATION.md), e.g.
# CODESEARCH_EMBEDDER=ollama OLLAMA_URL=http://gpu-box:11434 scripts/run.sh ~/src/app
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# One run at a time per checkout: a second would serve the same index from a second daemon
# that cannot bind the HTTP port. `$STATE/run.pid` and `$STATE/serve.pid` say which run and
# which daemon are this checkout's.
is_running() { # PID WORDS: whether process PID is alive and its command line holds WORDS
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null \
    && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q -- "$2"
}
# A mistyped path is said before minutes of setup and build, not after. A root may be named,
# NAME=PATH, as `codesearch serve` takes it.
for path in "$@"; do
  named="${path#*=}"
  [ -d "$path" ] || [ -d "${named/#\~\//$HOME/}" ] \
    || die "$path is not a directory: scripts/run.sh [PATH | NAME=PATH ...] indexes and serves directories"
done
mkdir -p "$STATE"
if [ -f "$STATE/run.pid" ] && is_running "$(cat "$STATE/run.pid")" "run.sh"; then
  die "scripts/run.sh is already running from this checkout (pid $(cat "$STATE/run.pid")); stop it first (Ctrl-C in its terminal, or kill -TERM $(cat "$STATE/run.pid"))"
fi
echo "$$" >"$STATE/run.pid"
# A daemon whose run was killed (SIGKILL, a closed terminal) keeps running: stop it first.
if [ -f "$STATE/serve.pid" ] && is_running "$(cat "$STATE/serve.pid")" "codesearch serve"; then
  orphan="$(cat "$STATE/serve.pid")"
  say "stopping codesearch serve (pid $orphan), left running by an earlier run that was killed"
  kill -TERM "$orphan" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 "$orphan" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$orphan" 2>/dev/null && die "codesearch serve (pid $orphan) did not stop within 30 s"
fi
rm -f "$STATE/serve.pid"

# A signal before serve runs (during setup, the services' start or the build) stops the step in
# hand and exits; the EXIT trap of with_services then stops the services this script started.
trap stop_step TERM INT
with_services

BIN="${CODESEARCH_BIN:-}"
if [ -z "$BIN" ]; then
  # The dev profile, as `scripts/test.sh` builds it: one build serves both commands. The numeric
  # crates (candle, gemm, tokenizers) are optimised in it (Cargo.toml), so the model runs at
  # full speed; `cargo build --release` is for installs.
  shared_build
  say "building codesearch (the first build takes several minutes; scripts/test.sh shares it)"
  step cargo build --locked --manifest-path "$ROOT/Cargo.toml" --bin codesearch >&2
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/codesearch"
fi

# PostgreSQL or NATS stopping under the daemon (a crash, the OOM killer, a stray kill) is an
# outage the daemon rides out and recovers from (docs/OPERATIONS.md), but only once the service
# is back. Services this run started are started again, as a service manager would: checked
# every 5 s; a start that fails (a full disk, a port taken) is tried again less and less often,
# up to once a minute. Services started by hand are left to whoever started them.
watch_services() { # RUN_PID
  # stop_watching's TERM ends the watcher once its current step is done, quietly.
  trap 'exit 0' TERM
  local pause=5 down
  while sleep "$pause"; do
    kill -0 "$1" 2>/dev/null || exit 0 # the run was killed (SIGKILL): stop watching
    if down="$("$ROOT/scripts/services.sh" up)"; then
      pause=5
      continue
    fi
    say "$down: starting it again"
    if "$ROOT/scripts/services.sh" start; then
      say "PostgreSQL and NATS are up again; codesearch reconnects on its own"
      pause=5
    else
      pause=$(( pause * 2 > 60 ? 60 : pause * 2 ))
      say "could not start them again; trying again in $pause s"
    fi
  done
}
WATCH_PID=""
if $OWN_SERVICES; then
  watch_services "$$" &
  WATCH_PID=$!
fi
stop_watching() {
  [ -n "$WATCH_PID" ] || return 0
  # Its pause is cut short with INT: bash reports a child killed by TERM ("Terminated") on
  # the terminal, as if something had gone wrong. A check under way is let finish.
  kill -TERM "$WATCH_PID" 2>/dev/null || true
  pkill -INT -x sleep -P "$WATCH_PID" 2>/dev/null || true
  wait "$WATCH_PID" 2>/dev/null || true
}

if [ "$#" -eq 0 ]; then set -- "$ROOT"; fi
say "indexing and serving: $* (Ctrl-C or SIGTERM stops it, and the services it started)"
say "search from another terminal:  . $STATE/env && $BIN search \"where is the config loaded\""
# serve runs as a child so that a signal to this script reaches it: the script forwards
# SIGTERM and SIGINT, waits for serve's clean stop (it drains NATS and finishes the files in
# hand), then the EXIT trap of with_services stops PostgreSQL and NATS if it started them.
"$BIN" serve "$@" &
SERVE_PID=$!
echo "$SERVE_PID" >"$STATE/serve.pid"
# Both as SIGTERM: bash starts background children with SIGINT ignored.
trap 'kill -TERM "$SERVE_PID" 2>/dev/null || true' TERM INT
status=0
while kill -0 "$SERVE_PID" 2>/dev/null; do
  # A trapped signal ends `wait` early: wait again until serve has exited.
  if wait "$SERVE_PID"; then status=0; else status=$?; fi
done
# Before the EXIT trap stops the services, so that they are not started again.
stop_watching
rm -f "$STATE/serve.pid" "$STATE/run.pid"
exit "$status"
