"""``assay generate queries``: distinct queries from a prompt, saved as a dataset an eval.yaml can
name; a rerun with the same seed makes no model call."""

from __future__ import annotations

import json

from tests.cli.test_cli import assay
from tests.support.fixtures import start_llm_server

QUERIES = ["Where is my refund?", "Where is my refund??", "Can I swap a faulty charger?", "Is there a return fee?"]


def test_generate_queries_saves_distinct_ones_and_reruns_free(tmp_path):
    server = start_llm_server()
    try:
        server.script(default={"content": json.dumps({"queries": [{"query": q, "ground_truth": ""} for q in QUERIES]})})
        (tmp_path / "models.yaml").write_text(
            f"models:\n  writer: {{model: w, base_url: '{server.base_url}', api_key: t}}\n"
        )
        args = [
            "generate",
            "queries",
            "--prompt",
            "Returns of faulty electronics",
            "--count",
            "3",
            "--model",
            "writer",
            "--models",
            str(tmp_path / "models.yaml"),
            "--save",
            "returns",
            "--out",
            str(tmp_path / "q.jsonl"),
        ]
        result = assay(*args, home=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "3 distinct queries in 1 rounds (1 repeats dropped)" in result.stdout
        assert "saved as dataset returns version 1" in result.stdout
        rows = [json.loads(line) for line in (tmp_path / "q.jsonl").read_text().splitlines()]
        assert [r["query"] for r in rows] == [
            "Where is my refund?",
            "Can I swap a faulty charger?",
            "Is there a return fee?",
        ]
        calls = server.stats()["completions"]
        again = assay(*args, home=tmp_path)
        assert again.returncode == 0 and "version 2" in again.stdout and server.stats()["completions"] == calls
        (tmp_path / "eval.yaml").write_text(
            "name: from generated\ndataset: {name: returns, version: '1'}\nevaluators:\n"
            "  - {type: string_check, name: asks, input: '{{item.query}}', reference: '?', operation: like}\n"
        )
        evaluated = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
        assert evaluated.returncode == 0, evaluated.stderr
        assert "items: 3 total" in evaluated.stdout
    finally:
        server.stop()


def test_nothing_to_write_from_is_refused(tmp_path):
    result = assay("generate", "queries", "--model", "writer", home=tmp_path)
    assert result.returncode == 2 and "--prompt, --agent or --from-file" in result.stderr
