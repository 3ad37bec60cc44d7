"""The README's Server section as written: the openai-SDK block against a running server (its
address rewritten to the test's), and the ``multi`` grader JSON accepted by an eval and run."""

from __future__ import annotations

import json
import re

from tests.api.conftest import wait_for
from tests.test_readme_snippets import blocks


def test_the_openai_sdk_block_runs_against_the_server(served, tmp_path, monkeypatch):
    (snippet,) = [b for b in blocks("Server: the OpenAI Evals API", "python") if "from openai import OpenAI" in b and "files.create" in b]
    rows = [{"response": "Paris", "ground_truth": "Paris"}, {"response": "Lyon", "ground_truth": "Paris"}]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(snippet.replace("http://127.0.0.1:8000", served.url), "README.md: Server", "exec"), namespace)  # noqa: S102
    client, ev, run = namespace["client"], namespace["ev"], namespace["run"]
    done = wait_for(client, ev.id, run.id)  # type: ignore[arg-type, attr-defined]
    assert done.status == "completed" and (done.result_counts.passed, done.result_counts.failed) == (1, 1)
    client.close()  # type: ignore[attr-defined]


def test_the_multi_grader_json_is_accepted_and_combines_its_graders(served, llm):
    (text,) = [b for b in blocks("Server: the OpenAI Evals API", "json") if '"type": "multi"' in b]
    criterion = json.loads(text)
    llm.script(default={"content": "Paris"})
    client = served.client()
    ev = client.evals.create(name="multi", data_source_config={"type": "custom", "item_schema": {
        "type": "object", "properties": {"answer": {"type": "string"}}}, "include_sample_schema": True},
        testing_criteria=[criterion])  # fmt: skip
    run = client.evals.runs.create(eval_id=ev.id, data_source={
        "type": "completions", "model": "judge", "input_messages": {"type": "template", "template": [
            {"role": "user", "content": "Capital of France?"}]},
        "source": {"type": "file_content", "content": [{"item": {"answer": "Paris"}}, {"item": {"answer": "Rome"}}]}})  # fmt: skip
    done = wait_for(client, ev.id, run.id)
    assert done.status == "completed", done.error
    assert (done.result_counts.passed, done.result_counts.failed) == (1, 1)
    assert re.search(r"0\.7 \* exact", text)
