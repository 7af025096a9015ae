#!/usr/bin/env bash
# Checks `codesearch mcp serve` (stdio) and the daemon's /mcp (streamable HTTP) with the
# official clients: the Python MCP SDK (PyPI `mcp`, in its three modes: handshake, auto and the
# stateless 2026-07-28 revision, over both transports) and the MCP Inspector's CLI mode (npm
# `@modelcontextprotocol/inspector`: tools/list, then tools/call of search and file context).
#
# Needs a running daemon (scripts/run.sh) with something indexed, whose HTTP port is
# $CODESEARCH_HTTP_ADDR (default 127.0.0.1:9090) and whose NATS is $NATS_URL (default
# nats://127.0.0.1:4222); python3 with venv; node and npm. The integration tests run it against
# a daemon of their own (tests/it/mcp_context.rs).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
bin="${CODESEARCH_BIN:-$root/target/debug/codesearch}"
url="http://${CODESEARCH_HTTP_ADDR:-127.0.0.1:9090}/mcp"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

say "installing the Python MCP SDK (mcp==2.3.0) into $work/venv"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet mcp==2.3.0
say "Python SDK: stdio ($bin mcp serve) and streamable HTTP ($url)"
"$work/venv/bin/python" "$root/scripts/mcp-python-check.py" "$bin" "$url" | tee "$work/python.out"
if grep -q FAILED "$work/python.out"; then
  echo "the Python SDK check failed" >&2
  exit 1
fi

say "installing the MCP Inspector (@modelcontextprotocol/inspector@2.12.0) into $work/npm"
mkdir -p "$work/npm" && cd "$work/npm"
npm install --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector@2.12.0 >/dev/null
# Clients start the stdio server with an environment of their own: the address goes in its
# arguments, as an MCP host's configuration would put it.
serve=("$bin" mcp serve)
[[ -n "${NATS_URL:-}" ]] && serve=("$bin" --nats-url "$NATS_URL" mcp serve)
inspect() { npx --no-install mcp-inspector --cli "${serve[@]}" "$@" 2>/dev/null; }
say "Inspector: tools/list"
inspect --method tools/list | python3 -c '
import json, sys
tools = json.load(sys.stdin)["tools"]
for t in tools:
    assert t["inputSchema"]["type"] == "object" and "outputSchema" in t, t["name"]
    print(t["name"], "required:", t["inputSchema"].get("required"))'
say "Inspector: tools/call codesearch_search, then codesearch_file_context on its first result"
first="$(inspect --method tools/call --tool-name codesearch_search --tool-arg "query=${1:-configuration}" --tool-arg limit=1)"
read -r path repo start < <(python3 -c '
import json, sys
r = json.loads(sys.argv[1]); assert not r.get("isError"), r
hit = r["structuredContent"]["results"][0]
print(hit["filePath"], hit["repository"], hit["startLine"])' "$first")
inspect --method tools/call --tool-name codesearch_file_context --tool-arg "path=$path" \
  --tool-arg "repository=$repo" --tool-arg "startLine=$start" --tool-arg "endLine=$((start + 2))" |
  python3 -c '
import json, sys
r = json.load(sys.stdin); assert not r.get("isError"), r
s = r["structuredContent"]
assert s["endLine"] - s["startLine"] <= 2, s
print(s["path"], s["startLine"], s["endLine"], repr(s["content"][:80]))'
say "the official MCP clients work with codesearch"
