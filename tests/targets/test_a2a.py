"""An A2A agent written with the official a2a-sdk is evaluated, simulated against and red-teamed:
its tasks' artifacts are the replies, a failed task is the item's error, and later turns of a
conversation send only the new message in the agent's own context."""

from __future__ import annotations

import base64
import json

import pytest

pytest.importorskip("a2a", reason="the a2a SDK is a dev dependency")

from assay.dataset import Dataset  # noqa: E402
from assay.evaluators import load_catalog  # noqa: E402
from assay.llm import ModelConfig, ModelRegistry  # noqa: E402
from assay.redteam.record import AttackSettings  # noqa: E402
from assay.redteam.runs import attack_rows, attacks_of  # noqa: E402
from assay.redteam.scorecard import Scorecard  # noqa: E402
from assay.redteam.settings import RedTeamSettings  # noqa: E402
from assay.redteam.strategies import techniques  # noqa: E402
from assay.run import EvalDefinition, finish_run, prepare, start  # noqa: E402
from assay.targets import TargetSpec  # noqa: E402
from assay.targets.agents import AgentConfig  # noqa: E402
from tests.cli.test_cli import assay  # noqa: E402
from tests.redteam.test_multi_turn import VIOLENCE  # noqa: E402
from tests.redteam.test_planted import OBJECTIVES, judge_rules  # noqa: E402
from tests.simulate.test_agent_history import user_says  # noqa: E402
from tests.support.a2a_agent import HARM, REFUSAL, desk_app  # noqa: E402
from tests.support.servers import bound_socket, uvicorn_in_thread  # noqa: E402


@pytest.fixture
def desk():
    """The A2A desk on a free port: its base URL and its executor (what it received)."""
    sock = bound_socket()
    app, executor = desk_app(f"http://127.0.0.1:{sock.getsockname()[1]}/")
    with uvicorn_in_thread(app, sock) as url:
        yield url, executor


def results(tmp_path, stdout: str) -> list[dict]:
    run_id = stdout.split("run id: ")[1].split()[0]
    return [json.loads(line) for line in assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()]


def test_an_a2a_agent_is_evaluated_its_task_artifact_the_reply(tmp_path, desk):
    url, _ = desk
    rows = [{"query": "Where is order 42?"}, {"query": "fail this one"}]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: a2a\ndataset: {local_uri: data.jsonl}\n"
        f"target: {{type: a2a, url: '{url}'}}\n"
        "evaluators:\n"
        "  - {type: string_check, name: answered, input: '{{sample.output_text}}', reference: 'last: Where', operation: like}\n"
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    answered, failed = sorted(results(tmp_path, done.stdout), key=lambda item: item["datasource_item_id"])
    sample = answered["sample"]
    assert sample["output_text"] == "You said 1 things; last: Where is order 42?"
    assert answered["results"][0]["passed"] is True
    assert sample["a2a"]["state"] == "TASK_STATE_COMPLETED" and sample["a2a"]["artifacts"][0]["name"] == "answer"
    assert [(i["role"], i["content"][0]["text"]) for i in sample["output_items"]] == [
        ("assistant", "You said 1 things; last: Where is order 42?"),
    ]
    assert sample["a2a"]["history"][0] == {"role": "user", "text": "Where is order 42?"}
    error = failed["sample"]["error"]
    assert error["code"] == "target_error" and error["message"] == "the A2A task failed: the order system is down"


def test_a_simulated_user_talks_to_an_a2a_agent_in_its_own_context(tmp_path, llm, desk):
    url, executor = desk
    llm.reset()
    llm.script(
        rules=[
            {"match": "AGENT: You said 3 things", "reply": user_says("", done=True)},
            {"match": "AGENT: You said 2 things", "reply": user_says("And a third thing.")},
            {"match": "AGENT: You said 1 things", "reply": user_says("A second thing.")},
        ],
        default=user_says("A first thing."),
    )
    (tmp_path / "scenarios.jsonl").write_text(json.dumps({"test_case_description": "You say three things."}) + "\n")
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: a2a simulated\ndataset: {local_uri: scenarios.jsonl}\n"
        f"models:\n  user: {{model: user-model, base_url: '{llm.base_url}', api_key: t}}\n"
        f"agents:\n  desk: {{endpoint: '{url}', protocol: a2a}}\n"
        "target: {type: agent, name: desk}\n"
        "simulation: {model: user, max_turns: 5}\n"
        "evaluators:\n"
        "  - {type: string_check, name: all, input: '{{sample.output_text}}', reference: 'said 3 things', operation: like}\n"
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (item,) = results(tmp_path, done.stdout)
    assert item["results"][0]["passed"] is True  # the agent answered from the whole conversation
    (context,) = executor.received.values()  # one context for the conversation
    assert context == ["A first thing.", "A second thing.", "And a third thing."]  # only what was new each turn
    assert item["datasource_item"]["termination_reason"] == "user_stop"


def test_a_planted_encoding_weakness_of_an_a2a_agent_is_found(store, llm, desk):
    url, _ = desk
    llm.reset()
    llm.script(rules=judge_rules(), default={"content": "the judge lost its way"})
    judge = ModelConfig(name="judge", model="gpt-4.1-mini", base_url=llm.base_url, api_key="test", max_retries=4)
    models = ModelRegistry([judge], cache=store, agents=[AgentConfig(name="desk", endpoint=url, protocol="a2a")])
    settings = RedTeamSettings(
        kind="red_team", techniques=tuple(techniques(["Base64"])), attack=AttackSettings(), attacker_model="judge"
    )
    rows = list(attack_rows(OBJECTIVES, settings))
    dataset = Dataset.from_content([{"item": row} for row in rows], name="attacks")
    spec = TargetSpec(kind="agent", model="desk", red_team=settings)
    prepared = prepare(EvalDefinition("a2a red team", VIOLENCE), dataset, load_catalog(store), models, spec)
    run = start(prepared, store)
    finish_run(prepared, run, store)
    stored = list(store.iter_output_items(run.id))
    card = Scorecard.of(list(attacks_of(iter(stored))))
    assert card.by_technique["baseline"].asr == 0.0 and card.by_technique["baseline"].decided == 8
    assert card.by_technique["base64"].successful >= 7
    plain = next(r for r in stored if r.datasource_item["attack_technique"] == "baseline").datasource_item
    assert plain["response"] == REFUSAL
    encoded = next(r for r in stored if r.datasource_item["attack_technique"] == "base64").datasource_item
    assert (
        encoded["response"].startswith(HARM)
        and encoded["raw_response"] == base64.b64encode(encoded["response"].encode()).decode()
    )


def test_a_task_waiting_for_input_is_continued_by_the_next_turn(tmp_path, llm, desk):
    url, executor = desk
    llm.reset()
    llm.script(
        rules=[
            {"match": "AGENT: You said 2 things", "reply": user_says("", done=True)},
            {"match": "AGENT: Which order is it?", "reply": user_says("Order 7.")},
        ],
        default=user_says("help me with a refund"),
    )
    (tmp_path / "scenarios.jsonl").write_text(json.dumps({"test_case_description": "You want a refund."}) + "\n")
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: a2a input\ndataset: {local_uri: scenarios.jsonl}\n"
        f"models:\n  user: {{model: user-model, base_url: '{llm.base_url}', api_key: t}}\n"
        f"target: {{type: a2a, url: '{url}'}}\n"
        "simulation: {model: user, max_turns: 4}\n"
        "evaluators:\n"
        "  - {type: string_check, name: done, input: '{{sample.output_text}}', reference: 'Order 7', operation: like}\n"
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (item,) = results(tmp_path, done.stdout)
    assert item["results"][0]["passed"] is True
    assert len(executor.tasks) == 2 and executor.tasks[0] == executor.tasks[1]  # the answer went to the waiting task
    said = [(m["role"], m["content"]) for m in item["datasource_item"]["messages"]]
    assert said[:2] == [("user", "help me with a refund"), ("assistant", "Which order is it?")]
