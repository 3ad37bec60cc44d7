"""Tools a model target calls in its loop: Python functions from a module, and the tools of MCP
servers (over stdio or streamable HTTP, through the official ``mcp`` SDK).

A target's ``tools:`` is a list of sources, each written as data so a run stores it whole:

    {python: tools.py}                          every public function with a docstring and type hints
    {mcp: {command: [python, orders_server.py]}} a server this process starts and talks to over stdio
    {mcp: {url: http://127.0.0.1:8931/mcp}}     a server already running, over streamable HTTP

A tool that raises answers the model with the error (and the call is recorded with it): the model
sees it as a person would see an error message, and the loop goes on.
"""

from assay.targets.tools.base import (
    Tool,
    ToolCall,
    ToolSet,
    ToolTimeouts,
    check_sources,
    check_timeouts,
    open_tools,
)

__all__ = ["Tool", "ToolCall", "ToolSet", "ToolTimeouts", "check_sources", "check_timeouts", "open_tools"]
