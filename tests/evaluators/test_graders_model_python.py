"""label_model, score_model (through the scripted server) and the sandboxed python grader."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from tests.evaluators.test_judges import run_eval

INPUT = [
    {"role": "system", "content": "Classify the sentiment."},
    {"role": "user", "content": [{"type": "input_text", "text": "{{item.review}}"}]},
]
ROWS = [{"review": "I love it"}, {"review": "It broke on day one"}, {"review": "meh"}]


def test_label_model_passes_on_passing_labels(llm, models, store):
    llm.script(
        rules=[
            {"match": "love", "reply": {"content": '{"label": "positive"}'}},
            {"match": "broke", "reply": {"content": '{"label": "negative"}'}},
        ],
        default={"content": '{"label": "sarcastic"}'},
    )
    grader = {
        "type": "label_model",
        "name": "sentiment",
        "model": "judge",
        "input": INPUT,
        "labels": ["positive", "neutral", "negative"],
        "passing_labels": ["positive", "neutral"],
    }
    _, results = run_eval(store, models, [grader], ROWS)
    assert [r[0].passed for r in results[:2]] == [True, False]
    assert results[0][0].properties["label"] == "positive"
    assert results[2][0].status == "error" and "'sarcastic'" in results[2][0].reason
    sent = llm.stats()["last"]["messages"]
    assert sent[1]["content"] in {r["review"] for r in ROWS} and "positive" in sent[-1]["content"]


def test_score_model_range_threshold_and_sampling_params(llm, models, store):
    llm.script(
        rules=[
            {"match": "love", "reply": {"content": '{"steps": [], "result": 8}'}},
            {"match": "broke", "reply": {"content": '{"result": 11}'}},
        ],
        default={"content": '{"result": 3}'},
    )
    grader = {
        "type": "score_model",
        "name": "quality",
        "model": "judge",
        "input": INPUT,
        "range": [0, 10],
        "pass_threshold": 5,
        "sampling_params": {"temperature": 0.2, "seed": 7, "max_completions_tokens": 99},
    }
    _, results = run_eval(store, models, [grader], ROWS)
    assert (results[0][0].score, results[0][0].passed, results[0][0].threshold) == (8, True, 5)
    assert results[1][0].status == "error" and "outside 0..10" in results[1][0].reason
    assert results[2][0].passed is False
    sent = llm.stats()["last"]
    assert sent["temperature"] == 0.2 and sent["seed"] == 7 and sent["max_tokens"] == 99


def test_label_model_config_errors(models):
    from assay.dataset import Dataset
    from assay.evaluators import load_catalog
    from assay.run import EvalDefinition, prepare

    grader = {
        "type": "label_model",
        "name": "s",
        "model": "judge",
        "input": INPUT,
        "labels": ["a"],
        "passing_labels": ["b"],
    }
    with pytest.raises(ConfigError, match="subset of 'labels'"):
        prepare(EvalDefinition("e", [grader]), Dataset.from_content(ROWS), load_catalog(), models=models)


GRADER = """
def grade(sample, item):
    import json
    if item["review"] == "boom":
        raise ValueError("bad review")
    if item["review"] == "text":
        return "not a number"
    if item["review"] == "net":
        import socket
        socket.create_connection(("127.0.0.1", 9))
    if item["review"] == "slow":
        while True:
            pass
    if item["review"] == "hog":
        block = bytearray(3 * 1024 * 1024 * 1024)
    return len(item["review"]) / 10
"""


def test_python_grader_runs_isolated_with_limits(models, store):
    grader = {
        "type": "python",
        "name": "py",
        "source": GRADER,
        "pass_threshold": 0.3,
        "time_limit": 3,
        "memory_mb": 512,
    }
    rows = [
        {"review": "good one"},
        {"review": "ok"},
        {"review": "boom"},
        {"review": "text"},
        {"review": "net"},
        {"review": "slow"},
        {"review": "hog"},
    ]
    _, results = run_eval(store, models, [grader], rows)
    first, second, *errors = [r[0] for r in results]
    assert first.status == "completed", first
    assert (first.score, first.passed) == (0.8, True) and second.passed is False
    assert all(e.status == "error" for e in errors)
    reasons = [e.reason for e in errors]
    assert "ValueError: bad review" in reasons[0]
    assert "not a number" in reasons[1]
    assert "ConnectionRefusedError" in reasons[2] or "Network is unreachable" in reasons[2]
    assert "time limit" in reasons[3] or "CPU" in reasons[3] or "failed" in reasons[3]
    assert "MemoryError" in reasons[4]


def test_python_grader_source_is_checked_before_the_run(models):
    from assay.dataset import Dataset
    from assay.evaluators import load_catalog
    from assay.run import EvalDefinition, prepare

    bad = {"type": "python", "name": "py", "source": "def grade(sample, item):\n    return (\n"}
    with pytest.raises(ConfigError, match="line 2"):
        prepare(EvalDefinition("e", [bad]), Dataset.from_content(ROWS), load_catalog(), models=models)


IMAGE_INPUT = [
    {"role": "system", "content": "Does the photo match the caption? Score 0 to 1."},
    {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Caption: {{item.caption}}"},
            {"type": "input_image", "image_url": "{{item.image}}", "detail": "low"},
        ],
    },
]
PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABh6FO1AAAAABJRU5ErkJggg=="


def _image_grader(model: str) -> dict:
    return {"type": "score_model", "name": "matches", "model": model, "input": IMAGE_INPUT, "pass_threshold": 0.5}


def test_image_parts_reach_a_judge_that_sees_images(llm, store):
    from assay.llm import ModelConfig, ModelRegistry

    llm.reset()
    llm.script(default={"content": '{"steps": [], "result": 0.9}'})
    seeing = ModelConfig(name="eyes", model="m", base_url=llm.base_url, api_key="t", modalities=["text", "image"])
    _, results = run_eval(
        store, ModelRegistry([seeing], cache=store), [_image_grader("eyes")], [{"caption": "a dot", "image": PNG}]
    )
    assert results[0][0].passed is True
    sent = llm.stats()["last"]["messages"][1]["content"]
    assert sent[0] == {"type": "text", "text": "Caption: a dot"}
    assert sent[1] == {"type": "image_url", "image_url": {"url": PNG, "detail": "low"}}


def test_an_image_for_a_text_only_judge_is_a_clear_item_error(llm, store):
    from assay.llm import ModelConfig, ModelRegistry

    llm.reset()
    blind = ModelConfig(name="blind", model="text-only-model", base_url=llm.base_url, api_key="t")
    _, results = run_eval(
        store, ModelRegistry([blind], cache=store), [_image_grader("blind")], [{"caption": "a dot", "image": PNG}]
    )
    assert results[0][0].status == "error"
    assert "'blind' (text-only-model) does not take image input" in results[0][0].reason
    assert llm.stats()["requests"] == 0


def test_model_graders_ask_for_their_answers_shape_and_do_without_where_refused(llm, models, store):
    """label_model asks for a JSON schema whose label is one of the labels, as OpenAI's graders do; a
    server without structured output (a 400) is asked again for plain JSON."""
    grader = {
        "type": "label_model",
        "name": "sentiment",
        "model": "judge",
        "input": INPUT,
        "labels": ["positive", "negative"],
        "passing_labels": ["positive"],
    }
    llm.script(default={"content": '{"label": "positive"}'})
    _, ((result,),) = run_eval(store, models, [grader], ROWS[:1])
    asked = llm.stats()["last"]["response_format"]
    assert asked["type"] == "json_schema"
    assert asked["json_schema"]["schema"]["properties"]["label"]["enum"] == ["positive", "negative"]
    assert result.passed is True
    llm.reset()
    llm.script(default={"content": '{"label": "negative"}'}, refuse_json_schema=True)
    _, ((result,),) = run_eval(store, models, [grader], ROWS[1:2])
    assert result.status == "completed" and result.passed is False
    assert llm.stats()["last"]["response_format"] == {"type": "json_object"}
