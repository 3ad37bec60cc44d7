"""``assay mcp``: the MCP server coding agents call (``assay.mcp_server``)."""

from __future__ import annotations

import click

from assay.errors import ConfigError


@click.command("mcp")
@click.option("--http", "over_http", is_flag=True, help="Serve streamable HTTP (at /mcp) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --http: the address to listen on.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535), help="With --http: the port.")
def mcp_command(over_http: bool, host: str, port: int) -> None:
    """An MCP server for coding agents: run an eval.yaml, read runs, explain failures, compare runs.

    Over stdio by default (an agent starts `assay mcp` itself), or streamable HTTP with --http. It
    works on the store `assay run` uses (ASSAY_HOME or ASSAY_DATABASE_URL), and reads eval.yaml
    paths relative to the directory it was started in."""
    try:
        from assay.mcp_server.server import build_server
    except ImportError as exc:
        raise ConfigError(
            f"assay mcp needs the MCP SDK ({exc.name} is missing)", hint="pip install 'assay[mcp]'"
        ) from None
    server = build_server()
    if over_http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run()
