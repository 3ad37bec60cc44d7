"""``azure_ai_user_conversation_simulation`` through the openai SDK: inline test cases, two
conversations per case, each case's own settings, the conversations saved as a dataset the run
names under ``output_datasets``, and audio settings accepted and reported as ignored."""

from __future__ import annotations

import json
import urllib.request

import openai
import pytest

from tests.api.conftest import wait_for
from tests.simulate.test_conversations import TWO_TURNS

CONFIG = {
    "type": "custom",
    "item_schema": {"type": "object", "properties": {"messages": {"type": "array"}}, "required": ["messages"]},
}
TURNS = [
    {
        "type": "python",
        "name": "two_turns",
        "pass_threshold": 1,
        "source": "def grade(sample, item):\n    return float(item['turns'] == 2)\n",
    }
]
CASES = [
    {"test_case_id": "late", "test_case_description": "Your order 1042 is late; find out when it arrives."},
    {
        "test_case_id": "once",
        "test_case_description": "Ask once when order 1042 arrives.",
        "simulation_configuration": {"conversation_repetitions": 1, "max_num_turns": 1},
    },
]


def data_source(**defaults):
    return {
        "type": "azure_ai_user_conversation_simulation",
        "source": {"type": "inline_user_conversation_simulation", "test_cases": CASES},
        "target": {"type": "azure_ai_model", "model": "judge"},
        "model_configuration": {
            "model": "judge",
            "sampling_params": {"temperature": 0.7, "max_completion_tokens": 800},
            "voice_model": {"type": "azure-standard", "name": "en-US-AvaMultilingualNeural"},
        },
        "default_simulation_configuration": {
            "max_num_turns": 8,
            "conversation_repetitions": 2,
            "desired_num_turns": 5,
            "audio_effects": {"effects": ["street_traffic"]},
            **defaults,
        },
    }


def test_user_simulation_runs_saves_its_conversations_and_reports_them(served, llm):
    llm.script(rules=TWO_TURNS)
    client = served.client()
    created = client.evals.create(name="simulation", data_source_config=CONFIG, testing_criteria=TURNS)
    source = data_source(enable_conversation_dataset_generation=True, output_conversation_dataset_name="support-sims")
    run = client.evals.runs.create(created.id, data_source=source, extra_body={"evaluation_level": "conversation"})
    run = wait_for(client, created.id, run.id)
    assert run.status == "completed", run.error
    assert run.result_counts.total == 3  # two conversations for the first case, one for the second
    items = list(client.evals.runs.output_items.list(run.id, eval_id=created.id))
    ended = sorted((i.datasource_item["test_case_id"], i.datasource_item["termination_reason"]) for i in items)
    assert ended == [("late", "user_stop"), ("late", "user_stop"), ("once", "max_turns")]
    assert run.result_counts.passed == 2
    assert "ignored" in run.model_extra["properties"]["warnings"][0]

    (saved,) = run.model_extra["output_datasets"]
    assert saved["type"] == "simulated_user_conversations" and saved["dataset"]["name"] == "support-sims"
    url = f"{served.url}/api/projects/default/datasets/support-sims/versions/{saved['dataset']['version']}"
    with urllib.request.urlopen(url) as response:
        assert json.loads(response.read())["id"] == saved["dataset"]["id"]
    # The saved conversations are a dataset like any other: a later run evaluates them by id.
    again = client.evals.runs.create(
        created.id, data_source={"type": "jsonl", "source": {"type": "file_id", "id": saved["dataset"]["id"]}}
    )
    again = wait_for(client, created.id, again.id)
    assert again.status == "completed" and again.result_counts.total == 3 and again.result_counts.passed == 2


def test_without_dataset_generation_no_output_datasets(served, llm):
    llm.script(rules=TWO_TURNS)
    client = served.client()
    created = client.evals.create(data_source_config=CONFIG, testing_criteria=TURNS)
    run = wait_for(client, created.id, client.evals.runs.create(created.id, data_source=data_source()).id)
    assert run.status == "completed" and "output_datasets" not in run.model_extra


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model_configuration": {}}, "model_configuration.model"),
        ({"data_mapping": {"id": "x"}}, "not allowed with inline_user_conversation_simulation"),
        ({"source": {"type": "inline_user_conversation_simulation", "test_cases": []}}, "needs test_cases"),
        ({"default_simulation_configuration": {"max_num_turns": 0}}, "max_num_turns: expected a whole number"),
    ],
)
def test_bad_simulation_sources_are_refused(served, change, message):
    client = served.client()
    created = client.evals.create(data_source_config=CONFIG, testing_criteria=TURNS)
    with pytest.raises(openai.BadRequestError, match=message):
        client.evals.runs.create(created.id, data_source={**data_source(), **change})


CASES_WRITTEN = {
    "match": "You write test cases for simulated conversations",
    "reply": {
        "content": json.dumps(
            {
                "test_cases": [
                    {
                        "category": "happy_path",
                        "test_case_description": "You want to know when order 1042 arrives.",
                        "desired_num_turns": 2,
                    },
                    {
                        "category": "multi_step",
                        "test_case_description": "Order 1042 is late and you also want a refund of the fee.",
                        "desired_num_turns": 3,
                    },
                ]
            }
        )
    },
}


def test_generated_test_cases_are_simulated_and_both_datasets_saved(served, llm):
    llm.script(rules=[CASES_WRITTEN, *TWO_TURNS])
    client = served.client()
    created = client.evals.create(
        name="synthetic multiturn",
        data_source_config={"type": "azure_ai_source", "scenario": "synthetic_data_gen"},
        testing_criteria=TURNS,
    )
    source = {
        "type": "azure_ai_synthetic_data_generation_with_simulation",
        "synthetic_data_generation_configuration": {
            "test_case_count": 2,
            "output_test_case_dataset_name": "shop-scenarios",
            "generation_sources": [{"type": "prompt", "prompt": "Customers of a web shop asking about late orders."}],
        },
        "model_configuration": {"model": "judge"},
        "default_simulation_configuration": {
            "max_num_turns": 4,
            "conversation_repetitions": 2,
            "enable_conversation_dataset_generation": True,
            "output_conversation_dataset_name": "shop-conversations",
        },
        "target": {"type": "azure_ai_model", "model": "judge"},
    }
    run = client.evals.runs.create(
        created.id, name="synthetic-multiturn-run", data_source=source, extra_body={"evaluation_level": "conversation"}
    )
    run = wait_for(client, created.id, run.id)
    assert run.status == "completed", run.error
    assert (run.result_counts.total, run.result_counts.errored, run.result_counts.passed) == (4, 0, 4)
    kinds = {d["type"]: d["dataset"]["name"] for d in run.model_extra["output_datasets"]}
    assert kinds == {"synthetic_test_cases": "shop-scenarios", "simulated_user_conversations": "shop-conversations"}
    items = list(client.evals.runs.output_items.list(run.id, eval_id=created.id))
    assert sorted(i.datasource_item["repetition"] for i in items) == [0, 0, 1, 1]
    with urllib.request.urlopen(f"{served.url}/api/projects/default/datasets/shop-scenarios/versions/1") as response:
        assert json.loads(response.read())["id"] == run.model_extra["output_dataset_id"]


def test_the_simulator_audit_separates_agent_failures_from_unreliable_simulations(served, llm):
    def said(text, done=False):
        return {"content": json.dumps({"message": text, "done": done})}

    def fidelity(name, score):
        return {"match": f"SIMULATED USER:\\n{name}", "reply": {"content": json.dumps({"reason": "r", "score": score})}}

    llm.script(
        rules=[
            fidelity("scenario-alpha", 2),
            fidelity("scenario-beta", 5),
            fidelity("scenario-gamma", 5),
            {"match": "beta question", "reply": {"content": '{"reason": "not done", "score": 0}'}},
            {"match": "# Property: task completion", "reply": {"content": '{"reason": "done", "score": 1}'}},
            {"match": "AGENT:", "reply": said("", done=True)},
            *({"match": f"scenario-{n}", "reply": said(f"{n} question")} for n in ("alpha", "beta", "gamma")),
        ],
        default={"content": "Here is the answer."},
    )
    client = served.client()
    criteria = [
        {
            "type": "azure_ai_evaluator",
            "name": name,
            "evaluator_name": f"builtin.{name}",
            "initialization_parameters": {"model": "judge"},
        }
        for name in ("simulator_fidelity", "task_completion")
    ]
    created = client.evals.create(data_source_config=CONFIG, testing_criteria=criteria)
    cases = [
        {"test_case_id": n, "test_case_description": f"scenario-{n}: ask one question."}
        for n in ("alpha", "beta", "gamma")
    ]
    source = {
        **data_source(),
        "source": {"type": "inline_user_conversation_simulation", "test_cases": cases},
        "default_simulation_configuration": {"max_num_turns": 3},
    }
    run = client.evals.runs.create(created.id, data_source=source, extra_body={"evaluation_level": "conversation"})
    run = wait_for(client, created.id, run.id)
    assert run.status == "completed", run.error
    assert run.model_extra["simulation"] == {"simulation_unreliable": 1, "agent_failed": 1, "agent_passed": 1}
