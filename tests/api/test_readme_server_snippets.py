"""The README's Server section as written: the openai-SDK block against a running server (its
address rewritten to the test's), and the ``multi`` grader JSON accepted by an eval and run."""

from __future__ import annotations

import json
import re
import shutil

from tests.api.conftest import wait_for
from tests.test_readme_snippets import ROOT, blocks


def test_the_openai_sdk_block_runs_against_the_server(served, tmp_path, monkeypatch):
    (snippet,) = [
        b
        for b in blocks("Server: the OpenAI Evals API", "python")
        if "from openai import OpenAI" in b and "files.create" in b
    ]
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # the block uploads the quickstart's data
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_API_KEY", served.store.create_key("support"))  # what the guide's first block exported
    namespace: dict[str, object] = {}
    exec(compile(snippet.replace("http://127.0.0.1:8000", served.url), "README.md: Server", "exec"), namespace)  # noqa: S102
    client, ev, run = namespace["client"], namespace["ev"], namespace["run"]
    done = wait_for(client, ev.id, run.id)  # type: ignore[arg-type, attr-defined]
    assert done.status == "completed" and (done.result_counts.passed, done.result_counts.failed) == (12, 4)
    client.close()  # type: ignore[attr-defined]


def test_the_multi_grader_json_is_accepted_and_combines_its_graders(served, llm):
    (text,) = [b for b in blocks("Server: the OpenAI Evals API", "json") if '"type": "multi"' in b]
    criterion = json.loads(text)
    llm.script(default={"content": "Paris"})
    client = served.client()
    ev = client.evals.create(
        name="multi",
        data_source_config={
            "type": "custom",
            "item_schema": {"type": "object", "properties": {"answer": {"type": "string"}}},
            "include_sample_schema": True,
        },
        testing_criteria=[criterion],
    )
    run = client.evals.runs.create(
        eval_id=ev.id,
        data_source={
            "type": "completions",
            "model": "judge",
            "input_messages": {"type": "template", "template": [{"role": "user", "content": "Capital of France?"}]},
            "source": {
                "type": "file_content",
                "content": [{"item": {"answer": "Paris"}}, {"item": {"answer": "Rome"}}],
            },
        },
    )
    done = wait_for(client, ev.id, run.id)
    assert done.status == "completed", done.error
    assert (done.result_counts.passed, done.result_counts.failed) == (1, 1)
    assert re.search(r"0\.7 \* exact", text)


def test_the_capture_block_captures_a_response_and_evaluates_it_by_id(served, llm, monkeypatch):
    """Capturing, then evaluating by id: the model the block names is found through the environment
    (OPENAI_BASE_URL, here the scripted server), as the README says a name not in --models is."""
    (snippet,) = blocks("Capturing responses, then evaluating them by id", "python")
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("ASSAY_API_KEY", served.store.create_key("support"))  # as the server guide made it
    llm.script(
        rules=[{"match": "# Property: coherence", "reply": {"content": '{"reason": "clear", "score": 4}'}}],
        default={"content": "It shipped on Monday."},
    )  # the judge, and the model answering the user
    namespace: dict[str, object] = {}
    exec(compile(snippet.replace("http://127.0.0.1:8000", served.url), "README.md: capture", "exec"), namespace)  # noqa: S102
    client, ev = namespace["client"], namespace["ev"]
    runs = client.evals.runs.list(eval_id=ev.id).data  # type: ignore[attr-defined]
    done = wait_for(client, ev.id, runs[0].id)  # type: ignore[arg-type, attr-defined]
    assert done.status == "completed" and done.result_counts.passed == 1, done
    items = client.evals.runs.output_items.list(run_id=runs[0].id, eval_id=ev.id).data  # type: ignore[attr-defined]
    assert "It shipped on Monday." in json.dumps(items[0].datasource_item)
    client.close()  # type: ignore[attr-defined]
