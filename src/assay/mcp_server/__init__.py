"""assay as an MCP server (``assay mcp``): the store and the engine the CLI uses, as tools a coding
agent calls (run an eval.yaml, list and read runs, explain failures, compare two runs, list the
evaluators, validate an eval.yaml) and runs as resources (``assay://runs/{id}``).

``answers`` holds what each tool finds and how it reads to a model; ``server`` binds them to the
official MCP SDK's server, over stdio or streamable HTTP."""
