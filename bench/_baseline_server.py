"""The same-run baseline of bench/api_load.py: FastAPI on uvicorn, as assay serves, answering each
path with precomputed JSON from memory (no store, no auth, no serialisation).

    python bench/_baseline_server.py PORT BODIES.json     # BODIES: {"/path?query": "<json text>"}
"""

from __future__ import annotations

import json
import sys

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response


def app_for(bodies: dict[str, bytes]) -> FastAPI:
    app = FastAPI()

    @app.get("/{path:path}")
    async def answer(request: Request, path: str) -> Response:
        key = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return Response(bodies[key], media_type="application/json")

    return app


if __name__ == "__main__":
    port, source = int(sys.argv[1]), sys.argv[2]
    with open(source, encoding="utf-8") as handle:
        bodies = {path: text.encode() for path, text in json.load(handle).items()}
    uvicorn.run(app_for(bodies), host="127.0.0.1", port=port, log_level="warning")
