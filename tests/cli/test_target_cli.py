"""A target that times out or fails on some items: those items error with the cause, the rest
complete, and ``--resume --retry-errors`` asks the target again for the errored ones only."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli import assay

JUDGE = {"match": "# Property:", "reply": {"content": '{"reason": "on topic", "score": 5}'}}
QUERIES = ["first", "second", "slow one", "third", "broken one", "fourth"]


def _results(run_id, home):
    return [json.loads(line) for line in assay("results", run_id, home=home, check=True).stdout.splitlines()]


def test_failed_target_items_error_then_resume_retries_only_them(tmp_path, llm):
    llm.reset()
    # The slow reply is an error when it finally comes, so the abandoned call never counts as a completion
    # that could land while the later calls are being counted.
    llm.script(
        rules=[
            JUDGE,
            {"match": "slow one", "reply": {"status": 500, "latency_ms": 3000}},
            {"match": "broken one", "reply": {"status": 500}},
        ],
        default={"content": "Here is a helpful answer."},
    )
    (tmp_path / "q.jsonl").write_text("".join(json.dumps({"query": f"Question {q}?"}) + "\n" for q in QUERIES))
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: flaky-target\ndataset: {local_uri: q.jsonl}\n"
        f"models:\n  bot: {{model: bot-model, base_url: '{llm.base_url}', api_key: t, timeout: 1, max_retries: 0}}\n"
        f"  judge: {{model: judge-model, base_url: '{llm.base_url}', api_key: t}}\n"
        "target: {type: model, model: bot}\n"
        "evaluators:\n  - {name: builtin.relevance, initialization_parameters: {model: judge}}\n"
    )
    first = assay("run", str(config), home=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "items: 6 total, 4 passed, 0 failed, 2 errored" in first.stdout
    assert "target: 6 samples, 2 failed" in first.stdout
    run_id = first.stdout.split("run id: ")[1].split()[0]
    errored = {r["datasource_item"]["query"]: r for r in _results(run_id, tmp_path) if r["status"] == "error"}
    assert set(errored) == {"Question slow one?", "Question broken one?"}
    assert "timed out" in errored["Question slow one?"]["sample"]["error"]["message"]
    assert "500" in errored["Question broken one?"]["sample"]["error"]["message"]
    assert "the target failed" in errored["Question broken one?"]["results"][0]["reason"]

    llm.script(rules=[JUDGE], default={"content": "Here is a helpful answer."})  # the provider recovered
    before = llm.stats()["completions"]
    kept = assay("run", str(config), "--resume", run_id, home=tmp_path, check=True)
    assert "2 errored" in kept.stdout and llm.stats()["completions"] == before  # plain resume: nothing redone

    retried = assay("run", str(config), "--resume", run_id, "--retry-errors", home=tmp_path, check=True)
    assert "items: 6 total, 6 passed" in retried.stdout
    assert llm.stats()["completions"] - before == 4  # two target calls and two judge calls, nothing else
    rows = _results(run_id, tmp_path)
    assert len(rows) == 6 and sorted(r["datasource_item_id"] for r in rows) == list(range(6))


@pytest.mark.parametrize("named", ["target: {type: agent, name: refund-desk}", "agent: {name: refund-desk}"])
def test_an_agent_target_in_eval_yaml_may_be_a_prompt_agent_the_api_made(tmp_path, llm, named):
    # Made through Foundry's agents API on the same store; eval.yaml names it as any agent, as a
    # target or as azd's agent: without a config.
    from assay.store import Store

    llm.reset()
    llm.script(rules=[{"match": "You are Ava of the refund desk", "reply": {"content": "Ava: refund sent."}}])
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    definition = {"kind": "prompt", "model": "desk-model", "instructions": "You are Ava of the refund desk."}
    store.save_prompt_agent("default", "refund-desk", {"definition": definition})
    store.close()
    (tmp_path / "q.jsonl").write_text(json.dumps({"query": "Where is my refund?"}) + "\n")
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: prompt-agent\ndataset: {local_uri: q.jsonl}\n"
        f"models:\n  desk-model: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        f"{named}\n"
        "evaluators:\n"
        "  - {type: string_check, name: as_ava, input: '{{sample.output_text}}', reference: 'Ava:', operation: like}\n"
    )
    done = assay("run", str(config), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "items: 1 total, 1 passed" in done.stdout

    unknown = config.read_text().replace("refund-desk", "billing-desk")
    config.write_text(unknown)
    refused = assay("run", str(config), home=tmp_path)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "eval.yaml:5: agent billing-desk is not configured" in refused.stderr + refused.stdout
    assert "agents.create_version" in refused.stderr + refused.stdout


@pytest.mark.parametrize("command", ["run", "simulate"])
def test_an_agent_nothing_listens_for_stops_the_run_before_any_item_saying_so(tmp_path, llm, command):
    """Not a target error on every item (and exit 0): the run's error, naming the agent and what to do."""
    from tests.support.fixtures import free_port

    llm.script(rules=[JUDGE], default={"content": json.dumps({"message": "Where is my order?", "done": False})})
    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    models = tmp_path / "models.yaml"
    models.write_text(
        f"models:\n  sim: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        f"agents:\n  desk: {{endpoint: '{endpoint}', protocol: responses}}\n"
    )
    row = {"id": "s1", "query": "Where is my order?", "test_case_description": "Your order is late."}
    (tmp_path / "q.jsonl").write_text(json.dumps(row) + "\n")
    if command == "run":
        config = tmp_path / "eval.yaml"
        config.write_text(
            f"name: desk\ndataset: {{local_uri: q.jsonl}}\nagents:\n  desk: {{endpoint: '{endpoint}'}}\n"
            "target: {type: agent, name: desk}\n"
            "evaluators:\n  - {type: string_check, name: said, input: '{{sample.output_text}}', reference: x, "
            "operation: like}\n"
        )
        done = assay("run", str(config), home=tmp_path)
    else:
        done = assay(
            "simulate",
            str(tmp_path / "q.jsonl"),
            "--model",
            "sim",
            "--agent",
            "desk",
            "--models",
            str(models),
            home=tmp_path,
        )
    assert done.returncode != 0
    assert f"agent desk@1 at {endpoint} is unreachable" in done.stderr and "start the agent" in done.stderr
    assert "Traceback" not in done.stderr
