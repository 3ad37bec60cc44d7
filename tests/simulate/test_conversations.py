"""Simulated conversations through the engine: the scripted server plays both the simulated user
(its prompts start "You are role-playing a user") and the target; the stop token, max_turns and
a failing target each end a conversation as they should, and a rerun costs no model call."""

from __future__ import annotations

import json

import pytest

from assay.dataset import Dataset
from assay.errors import ConfigError, DataError
from assay.evaluators import load_catalog
from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start
from assay.simulate.runs import conversation_gen_settings
from assay.targets import TargetSpec

SCENARIO = {
    "id": "late-order",
    "test_case_description": "Your order 1042 is late and you want to know when it arrives.",
    "desired_num_turns": "2",
}
ENDED = [
    {
        "type": "string_check",
        "name": "ended",
        "input": "{{item.termination_reason}}",
        "reference": "user_stop",
        "operation": "eq",
    }
]


def user(match: str, message: str, done: bool = False) -> dict:
    return {"match": match, "reply": {"content": json.dumps({"message": message, "done": done})}}


def agent(match: str, text: str) -> dict:
    return {"match": match, "reply": {"content": text}}


# Rules are tried in order: the simulator's prompts (which quote the agent as "AGENT: ...") first.
TWO_TURNS = [
    user("AGENT: Tomorrow morning.", "", done=True),
    user("AGENT: It shipped yesterday.", "Thanks, when will it arrive?"),
    user("has not started", "Where is order 1042?"),
    agent("when will it arrive", "Tomorrow morning."),
    agent("Where is order 1042?", "It shipped yesterday."),
]


def simulation(max_turns: int = 5, repetitions: int = 1, **extra) -> TargetSpec:
    params = {
        "type": "conversation_gen_preview",
        "model": "judge",
        "max_turns": max_turns,
        "num_conversations": repetitions,
        **extra,
    }
    return TargetSpec(kind="model", model="judge", simulation=conversation_gen_settings(params))


def run(store, models, target, rows=(SCENARIO,), criteria=ENDED):
    from assay.simulate.runs import scenario_dataset

    dataset = scenario_dataset(Dataset.from_content(list(rows)), target.simulation)
    definition = EvalDefinition(
        "simulated",
        criteria,
        evaluation_level="turn",
        item_schema={"type": "object", "properties": {"messages": {"type": "array"}}, "required": ["messages"]},
    )
    prepared = prepare(definition, dataset, load_catalog(), models=models, target=target)
    outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(concurrency=4))
    return list(store.iter_output_items(outcome.run.id))


def test_the_user_ends_the_conversation_with_the_stop_signal(llm, models, store):
    llm.script(rules=TWO_TURNS)
    (item,) = run(store, models, simulation())
    conversation = item.datasource_item
    assert conversation["termination_reason"] == "user_stop" and conversation["turns"] == 2
    assert [(m["role"], m["content"]) for m in conversation["messages"]] == [
        ("user", "Where is order 1042?"),
        ("assistant", "It shipped yesterday."),
        ("user", "Thanks, when will it arrive?"),
        ("assistant", "Tomorrow morning."),
    ]
    assert item.status == "pass" and conversation["desired_num_turns"] == 2  # a count given as a string
    assert isinstance(conversation["simulation_seed"], int)


def test_a_user_who_never_stops_ends_at_max_turns(llm, models, store):
    llm.script(rules=[user("role-playing a user", "And another thing?"), agent("another thing", "Go on.")])
    (item,) = run(store, models, simulation(max_turns=3))
    conversation = item.datasource_item
    assert (conversation["termination_reason"], conversation["turns"], len(conversation["messages"])) == (
        "max_turns",
        3,
        6,
    )
    assert item.status == "fail"


def test_a_target_that_fails_at_turn_3_keeps_the_turns_so_far(llm, models, store):
    llm.script(
        rules=[
            user("AGENT: Second answer.", "Third question?"),
            user("AGENT: First answer.", "Second question?"),
            user("has not started", "First question?"),
            {"match": "Third question?", "reply": {"status": 500}},
            agent("Second question?", "Second answer."),
            agent("First question?", "First answer."),
        ]
    )
    (item,) = run(store, models, simulation(max_turns=5))
    conversation = item.datasource_item
    assert conversation["termination_reason"] == "target_error" and conversation["turns"] == 3
    assert [m["content"] for m in conversation["messages"]][-1] == "Third question?" and len(
        conversation["messages"]
    ) == 5
    (result,) = item.results
    assert item.status == "error" and result.status == "error" and "turn 3" in result.reason


def test_repetitions_have_their_own_seeds_and_a_rerun_makes_no_call(llm, models, store):
    llm.script(rules=TWO_TURNS)
    first = run(store, models, simulation(repetitions=2))
    assert (
        len(first) == 2 and first[0].datasource_item["simulation_seed"] != first[1].datasource_item["simulation_seed"]
    )
    calls = llm.stats()["completions"]
    again = run(store, models, simulation(repetitions=2))
    assert llm.stats()["completions"] == calls  # the cache answers every simulator and target call
    assert [i.datasource_item["messages"] for i in again] == [i.datasource_item["messages"] for i in first]


def test_a_simulator_answering_in_plain_text_is_understood(llm, models, store):
    llm.script(
        rules=[
            {"match": "AGENT: Noted.", "reply": {"content": "Great, that is all. ###STOP###"}},
            {"match": "has not started", "reply": {"content": "I need to change my address."}},
            agent("change my address", "Noted."),
        ]
    )
    (item,) = run(store, models, simulation())
    conversation = item.datasource_item
    assert conversation["termination_reason"] == "user_stop"
    assert [m["content"] for m in conversation["messages"]] == ["I need to change my address.", "Noted."]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"num_conversations": 6}, "num_conversations: 6 is over the limit of 5"),
        ({"max_turns": 51}, "max_turns: 51 is over the limit of 50"),
        ({"max_turns": 0}, "at least 1"),
        ({"model": ""}, "name the model"),
        ({"data_mapping": {"scenario": "x"}}, "'scenario' is not a scenario field"),
    ],
)
def test_bad_generation_params_are_refused(params, message):
    with pytest.raises(ConfigError, match=message):
        conversation_gen_settings({"type": "conversation_gen_preview", "model": "judge", **params})


def test_a_scenario_row_without_a_description_is_a_bad_line(models, store):
    with pytest.raises(DataError, match="2: test_case_description: a scenario needs a test_case_description"):
        run(store, models, simulation(), rows=[SCENARIO, {"id": "empty"}])


def test_data_mapping_names_the_rows_own_fields(llm, models, store):
    llm.script(rules=TWO_TURNS)
    target = simulation(data_mapping={"test_case_description": "{{item.situation}}", "id": "case"})
    (item,) = run(store, models, target, rows=[{"case": "c1", "situation": SCENARIO["test_case_description"]}])
    assert item.datasource_item["id"] == "c1" and item.datasource_item["termination_reason"] == "user_stop"


def test_a_server_that_refuses_json_schema_is_asked_again_without_it(llm, models, store):
    llm.script(rules=TWO_TURNS, refuse_json_schema=True)
    (item,) = run(store, models, simulation())
    assert item.datasource_item["termination_reason"] == "user_stop" and item.datasource_item["turns"] == 2
    assert llm.stats()["by_status"].get("400", 0) >= 3  # every simulator turn was refused once, then answered


def test_a_python_callable_can_be_the_target(llm, models, store):
    llm.script(rules=TWO_TURNS[:3])  # the simulated user's turns; the target below answers itself

    def shop(messages):
        asked = messages[-1]["content"]
        return "Tomorrow morning." if "when will it arrive" in asked else "It shipped yesterday."

    target = TargetSpec(kind="callable", function=shop, simulation=simulation().simulation)
    (item,) = run(store, models, target)
    assert item.datasource_item["termination_reason"] == "user_stop"
    assert [m["content"] for m in item.datasource_item["messages"]][1::2] == [
        "It shipped yesterday.",
        "Tomorrow morning.",
    ]
