"""An MCP server over streamable HTTP (the official SDK's server, served by uvicorn on a free
port): its tools are listed and called through the one outbound transport; in a process that
serves others, the operator's naming of it is its listing, and its name may not lead inside."""

from __future__ import annotations

import asyncio
import socket

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is a dev dependency")

from mcp.server.mcpserver import MCPServer  # noqa: E402

from assay import outbound  # noqa: E402
from assay.errors import ConfigError  # noqa: E402
from assay.targets.tools.mcp import McpTools  # noqa: E402
from tests.support.servers import uvicorn_in_thread  # noqa: E402


@pytest.fixture
def mcp_url():
    server = MCPServer("orders")

    @server.tool()
    def lookup_order(order_id: str) -> str:
        """Look an order up by its id."""
        return f"order {order_id}: shipped on 2026-11-30"

    with uvicorn_in_thread(server.streamable_http_app()) as base:
        yield f"{base}/mcp"


async def _use(url: str) -> str:
    tools = McpTools({"url": url})
    try:
        (lookup,) = await tools.open()
        return await lookup({"order_id": "42"})
    finally:
        await tools.aclose()


def test_a_local_process_calls_an_mcp_server_over_http(mcp_url, monkeypatch):
    monkeypatch.setattr(outbound, "_SERVING", False)
    assert asyncio.run(_use(mcp_url)) == "order 42: shipped on 2026-11-30"


def test_a_server_calls_the_mcp_server_its_operator_named_by_address(mcp_url, monkeypatch):
    monkeypatch.setattr(outbound, "_SERVING", True)
    monkeypatch.setenv("ASSAY_EVALUATOR_ENDPOINTS", "")  # the --models file named it: no second list
    assert asyncio.run(_use(mcp_url)) == "order 42: shipped on 2026-11-30"
    assert asyncio.run(_use(mcp_url.replace("127.0.0.1", "localhost"))) == "order 42: shipped on 2026-11-30"


def test_a_server_refuses_an_mcp_name_whose_dns_answer_is_inside(mcp_url, monkeypatch):
    monkeypatch.setattr(outbound, "_SERVING", True)
    port = mcp_url.split(":")[2].split("/")[0]
    real = socket.getaddrinfo

    def rebinding(host, *args, **kwargs):  # the operator's name, answered with the loopback address
        return real("127.0.0.1", *args, **kwargs) if host == "tools.corp.example" else real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with pytest.raises(ConfigError, match="an address this server does not call"):
        asyncio.run(_use(f"http://tools.corp.example:{port}/mcp"))
