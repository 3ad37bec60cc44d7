"""Azure's content filter is an outcome: a prompt refused with its 400 ``content_filter`` or a
completion cut with ``finish_reason: content_filter`` is recorded as *filtered*, with the
categories and severities the service gave: not an error, not a pass or a fail. Seen here in the
model facade, a run's items and summary and the CLI table; over the API and in the web UI in
``tests/api/test_content_filter_api.py``; in a red team's ASR in ``tests/redteam/test_planted.py``."""

from __future__ import annotations

import asyncio
import json

import pytest

from assay.llm import ContentFiltered, Model, ModelConfig
from tests.cli.test_cli import assay

VIOLENT = {"violence": "medium"}


def azure(llm) -> ModelConfig:
    endpoint = llm.base_url.removesuffix("/v1")
    return ModelConfig(
        name="bot",
        model="gpt-4.1-mini",
        provider="azure",
        azure_endpoint=endpoint,
        api_version="2024-10-21",
        api_key="k",
    )


def ask(model: Model, text: str):
    async def once():
        try:
            return await model.generate([{"role": "user", "content": text}])
        finally:
            await model.aclose()

    return asyncio.run(once())


def test_the_model_facade_raises_content_filtered_for_a_prompt_and_for_a_completion(llm):
    llm.reset()
    llm.script(
        rules=[
            {"match": "alpha", "reply": {"content_filter": "prompt", "categories": VIOLENT}},
            {
                "match": "beta",
                "reply": {"content_filter": "completion", "content": "Here is how", "categories": {"hate": "high"}},
            },
        ]
    )
    for transport in ("fast", "sdk"):
        model = Model(azure(llm).model_copy(update={"transport": transport}), cache_mode="off")
        with pytest.raises(ContentFiltered) as prompt:
            ask(model, "alpha")
        assert prompt.value.stage == "prompt" and prompt.value.as_dict()["filtered"] == ["violence (medium)"]
        assert prompt.value.categories["hate"] == {"filtered": False, "severity": "safe"}
        with pytest.raises(ContentFiltered) as completion:
            ask(model, "beta")
        assert completion.value.stage == "completion" and completion.value.text == "Here is how"
        assert completion.value.as_dict()["filtered"] == ["hate (high)"]
    assert llm.stats()["by_status"].get("400") == 2  # a filtered prompt is not retried


RULES = [
    {"match": "alpha", "reply": {"content_filter": "prompt", "categories": VIOLENT}},  # the target's prompt
    {"match": "beta", "reply": {"content_filter": "completion", "content": "Step one", "categories": VIOLENT}},
    {"match": "gamma answer", "reply": {"content_filter": "prompt", "categories": {"self_harm": "low"}}},  # the judge's
    {"match": "gamma", "reply": {"content": "gamma answer"}},
    {"match": "# Property:", "reply": {"content": '{"reason": "clear", "score": 4}'}},
    {"match": "delta", "reply": {"content": "delta answer"}},
]
QUERIES = ["alpha", "beta", "gamma", "delta"]


def write_eval(folder, llm) -> None:
    endpoint = llm.base_url.removesuffix("/v1")
    (folder / "data.jsonl").write_text("".join(json.dumps({"query": q}) + "\n" for q in QUERIES))
    (folder / "eval.yaml").write_text(
        "name: filtered\ndataset: {local_uri: data.jsonl}\n"
        "models:\n"
        f"  bot: {{provider: azure, azure_endpoint: '{endpoint}', api_version: '2024-10-21', model: gpt-4.1-mini, api_key: k}}\n"
        "target: {type: model, model: bot}\n"
        "evaluators:\n  - name: coherence\n    evaluator_name: builtin.coherence\n"
        "    initialization_parameters: {model: bot}\n"
        "    data_mapping: {query: '{{item.query}}', response: '{{sample.output_text}}'}\n"
    )


def test_a_run_records_filtered_items_apart_and_the_cli_table_shows_them(llm, tmp_path):
    llm.reset()
    llm.script(rules=RULES)
    write_eval(tmp_path, llm)
    done = assay("run", "eval.yaml", home=tmp_path / "home", cwd=tmp_path, env_extra={"COLUMNS": "80"})
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "p/f/e/s/x" in said and "1/0/0/0/3" in said, said
    assert "3 filtered" in said and "Traceback" not in said
    assert "target: 4 samples, 0 failed, 2 filtered" in " ".join(said.split())  # the judge's filter is not the target's
    from assay.store import Store

    store = Store(f"sqlite:///{tmp_path / 'home' / 'assay.db'}")
    try:
        (run,) = store.list_runs()
        items = {i.datasource_item["query"]: i for i in store.iter_output_items(run.id)}
    finally:
        store.close()
    counts = run.summary.result_counts
    (coherence,) = run.summary.per_testing_criteria_results
    assert (counts.passed, counts.failed, counts.errored, counts.filtered) == (1, 0, 0, 3)
    assert (coherence.filtered, coherence.n, coherence.pass_rate) == (3, 1, 1.0)  # filtered items are not in the rate
    assert {q: i.status for q, i in items.items()} == {
        "alpha": "filtered",
        "beta": "filtered",
        "gamma": "filtered",
        "delta": "pass",
    }
    alpha = items["alpha"]
    assert alpha.sample["filtered"]["stage"] == "prompt" and alpha.sample["filtered"]["filtered"] == [
        "violence (medium)"
    ]
    assert alpha.results[0].status == "filtered" and "the target's prompt was filtered" in alpha.results[0].reason
    assert "error" not in alpha.results[0].properties and alpha.results[0].passed is None
    beta = items["beta"]
    assert beta.sample["filtered"]["stage"] == "completion" and beta.sample["output_text"] == "Step one"
    gamma = items["gamma"].results[0]
    assert gamma.status == "filtered" and "the judge's prompt was filtered" in gamma.reason
    assert gamma.properties["content_filter"]["categories"]["self_harm"] == {"filtered": True, "severity": "low"}
