"""Checks codesearch's MCP server with the official Python MCP SDK, over stdio and HTTP."""
import asyncio, json, logging, os, sys
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

class Warnings(logging.Handler):
    """The SDK's warnings (a session it could not end, ...): each one fails the check."""
    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []
    def emit(self, record):
        self.seen.append(record.getMessage())

async def check(server, mode, label):
    warnings = Warnings()
    logging.getLogger("mcp").addHandler(warnings)
    try:
        await session(server, mode, label)
    finally:
        logging.getLogger("mcp").removeHandler(warnings)
    if warnings.seen:
        print(label, mode, "FAILED: the SDK warned", warnings.seen)

async def session(server, mode, label):
    async with Client(server, mode=mode) as c:
        tools = await c.list_tools()
        names = sorted(t.name for t in tools.tools)
        r = await c.call_tool("codesearch_search", {"query": "child token", "limit": 2})
        assert not r.is_error, r
        hits = r.structured_content["results"]
        f = await c.call_tool("codesearch_file_context", {"path": hits[0]["filePath"], "repository": hits[0]["repository"], "startLine": hits[0]["startLine"], "endLine": hits[0]["startLine"] + 2})
        assert not f.is_error, f
        bad = await c.call_tool("codesearch_search", {"query": "x", "limit": "many"})
        assert bad.is_error
        print(label, mode, c.protocol_version, names, hits[0]["filePath"], f.structured_content["startLine"], "bad:", bad.content[0].text[:60])

async def main():
    binary, url = sys.argv[1], sys.argv[2]
    # The SDK starts a stdio server with a minimal environment (PATH, HOME, ...), as MCP hosts
    # do: the daemon's address goes in its arguments, as a host's configuration would put it.
    args = ["mcp", "serve"]
    if os.environ.get("NATS_URL"):
        args = ["--nats-url", os.environ["NATS_URL"], *args]
    stdio = StdioServerParameters(command=binary, args=args)
    for mode in ["legacy", "auto", "2026-07-28"]:
        for server, label in [(stdio, "stdio"), (url, "http")]:
            try:
                await check(server, mode, label)
            except Exception as e:
                causes = getattr(e, "exceptions", [e])
                print(label, mode, "FAILED", type(e).__name__, e, [repr(c) for c in causes])

asyncio.run(main())
