"""Run the corpus's cases under one package and print each outcome as JSON (one line per case).

    python tests/azure/run_case.py --base-url URL --data DIR [--assay] [CASE ...]

Without ``--assay`` the code runs as written, against azure-ai-evaluation (in the peer's own
venv); with it, ``azure.ai.evaluation`` is replaced by ``assay.azure`` and nothing else changes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import CASES, QA_ROWS  # noqa: E402  (a plain script, runnable by either interpreter)


def swapped(code: str) -> str:
    return code.replace("azure.ai.evaluation._exceptions", "assay.azure").replace("azure.ai.evaluation", "assay.azure")


def plain(value: Any) -> Any:
    """JSON without NaN (written as the string "NaN") and with sorted dict keys' order kept."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def run(name: str, code: str, namespace: dict[str, Any]) -> dict[str, Any]:
    try:
        exec(compile(code, name, "exec"), namespace)  # noqa: S102 - the corpus's own code
        return {"case": name, "ran": True, "result": plain(namespace.get("result"))}
    except Exception as exc:  # the count of cases that run is the figure: record, never stop
        return {"case": name, "ran": False, "error": f"{type(exc).__name__}: {exc}"[:500]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--assay", action="store_true")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    (data / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in QA_ROWS), encoding="utf-8")
    root = args.base_url.removesuffix("/v1")
    configs = {
        "MODEL_CONFIG": {"type": "openai", "base_url": args.base_url, "api_key": "test", "model": "gpt-4.1-mini"},
        "AZURE_MODEL_CONFIG": {
            "azure_endpoint": root,
            "api_key": "test",
            "azure_deployment": "gpt-4.1-mini",
            "api_version": "2024-10-21",
        },
    }
    os.environ.setdefault("OPENAI_API_KEY", "test")
    for name, _, code in CASES:
        if args.cases and name not in args.cases:
            continue
        namespace = {**configs, "DATA": str(data), "__name__": "__main__"}
        sys.stdout.write(json.dumps(run(name, swapped(code) if args.assay else code, namespace)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
