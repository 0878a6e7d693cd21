"""A real MCP server for the tests: the Python SDK's FastMCP over Streamable HTTP on
127.0.0.1, with two tools, a slow one and a failing one, behind a bearer token.

Usage: mcp_test_server.py PORT TOKEN   (serves http://127.0.0.1:PORT/mcp)
"""

import asyncio
import sys

import uvicorn
from mcp.server.fastmcp import FastMCP
from starlette.responses import JSONResponse

port, token = int(sys.argv[1]), sys.argv[2]
mcp = FastMCP("test-tools", host="127.0.0.1", port=port, log_level="WARNING")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two whole numbers."""
    return a + b


@mcp.tool()
def shout(text: str) -> str:
    """Returns the text in capitals."""
    return text.upper()


@mcp.tool()
async def slow(seconds: float) -> str:
    """Waits, then answers."""
    await asyncio.sleep(seconds)
    return "done"


@mcp.tool()
def broken() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


app = mcp.streamable_http_app()


class RequireToken:
    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                return
        await self.inner(scope, receive, send)


uvicorn.run(RequireToken(app), host="127.0.0.1", port=port, log_level="warning")
