"""OpenAI's grader test through the openai SDK (``client.fine_tuning.alpha.graders.run`` and
``.validate``): one grader on one model sample and item, graded as an eval's run grades it, with
OpenAI's metadata of what went wrong; nothing of it is left among the project's evals."""

from __future__ import annotations

import json

import openai
import pytest
from rapidfuzz import fuzz

from assay.store import DEFAULT_PROJECT
from tests.support.sandbox import needs_bwrap

EXACT = {
    "type": "string_check",
    "name": "exact",
    "input": "{{sample.output_text}}",
    "reference": "{{item.answer}}",
    "operation": "eq",
}
SIMILAR = {
    "type": "text_similarity",
    "name": "similar",
    "input": "{{sample.output_text}}",
    "reference": "{{item.answer}}",
    "evaluation_metric": "fuzzy_match",
}
SCORED = {
    "type": "score_model",
    "name": "scored",
    "model": "judge",
    "input": [{"role": "user", "content": "Score {{sample.output_text}} against {{item.answer}}."}],
    "range": [0, 1],
}
NO_ERRORS = {
    "formula_parse_error": False,
    "sample_parse_error": False,
    "truncated_observation_error": False,
    "unresponsive_reward_error": False,
    "invalid_variable_error": False,
    "other_error": False,
    "python_grader_server_error": False,
    "python_grader_server_error_type": None,
    "python_grader_runtime_error": False,
    "python_grader_runtime_error_details": None,
    "model_grader_server_error": False,
    "model_grader_refusal_error": False,
    "model_grader_parse_error": False,
    "model_grader_server_error_details": None,
}


def errors_of(response) -> dict:
    return response.metadata.errors.model_dump(by_alias=True)


@pytest.mark.parametrize("prefix", ["/v1", "/openai/v1"])  # OpenAI's path, and Azure OpenAI's
def test_a_string_check_rewards_the_sample_that_matches_the_item(served, prefix):
    graders = served.client(prefix=prefix).fine_tuning.alpha.graders
    right = graders.run(grader=EXACT, model_sample="Paris", item={"answer": "Paris"})
    wrong = graders.run(grader=EXACT, model_sample="Lyon", item={"answer": "Paris"})
    assert (right.reward, wrong.reward) == (1.0, 0.0)
    assert right.metadata.name == "exact" and right.metadata.type == "string_check"
    assert errors_of(right) == NO_ERRORS and errors_of(wrong) == NO_ERRORS
    assert right.sub_rewards == {} and right.metadata.token_usage is None
    assert right.metadata.execution_time >= 0
    assert list(served.client().evals.list()) == []  # a grader's test is nobody's eval


def test_text_similarity_and_a_multi_grader_give_the_scores_a_run_gives(served):
    graders = served.client().fine_tuning.alpha.graders
    sample, answer = "the capital is Paris", "Paris is the capital"
    similar = graders.run(grader=SIMILAR, model_sample=sample, item={"answer": answer})
    assert similar.reward == pytest.approx(fuzz.ratio(sample, answer) / 100)
    multi = {
        "type": "multi",
        "name": "combined",
        "graders": {"exact": EXACT, "similar": SIMILAR},
        "calculate_output": "0.5 * exact + 0.5 * similar",
    }
    combined = graders.run(grader=multi, model_sample=sample, item={"answer": answer})
    assert combined.sub_rewards == {"exact": 0.0, "similar": pytest.approx(similar.reward)}
    assert combined.metadata.scores == combined.sub_rewards
    assert combined.reward == pytest.approx(0.5 * similar.reward)


def test_a_template_naming_a_field_the_item_lacks_is_an_invalid_variable(served):
    response = served.client().fine_tuning.alpha.graders.run(grader=EXACT, model_sample="Paris", item={"other": 1})
    assert response.reward == 0.0
    assert errors_of(response) == {**NO_ERRORS, "invalid_variable_error": True}


def test_a_score_model_reports_its_judge_and_the_tokens_it_spent(served, llm):
    llm.script(
        rules=[
            {"match": "Score Paris against", "reply": {"content": '{"steps": [], "result": 0.8}'}},
            {"match": "Score Lyon against", "reply": {"content": "I would rather not say"}},
        ]
    )
    graders = served.client().fine_tuning.alpha.graders
    scored = graders.run(grader=SCORED, model_sample="Paris", item={"answer": "Paris"})
    assert scored.reward == pytest.approx(0.8)
    assert errors_of(scored) == NO_ERRORS
    usage = scored.metadata.token_usage
    assert usage["prompt_tokens"] > 0 and usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    model = scored.metadata.sampled_model_name
    assert model and scored.model_grader_token_usage_per_model == {model: usage}
    unreadable = graders.run(grader=SCORED, model_sample="Lyon", item={"answer": "Paris"})
    assert unreadable.reward == 0.0 and errors_of(unreadable) == {**NO_ERRORS, "model_grader_parse_error": True}


@needs_bwrap
def test_a_python_grader_reads_the_sample_as_text_and_as_json_and_its_failure_is_reported(served):
    graders = served.client().fine_tuning.alpha.graders
    source = (
        "def grade(sample, item):\n"
        "    parsed = sample['output_json']\n"
        "    return 1.0 if parsed['city'] == item['answer'] and sample['output_text'].startswith('{') else 0.25\n"
    )
    grader = {"type": "python", "name": "city", "source": source}
    right = graders.run(grader=grader, model_sample=json.dumps({"city": "Paris"}), item={"answer": "Paris"})
    assert right.reward == 1.0 and errors_of(right) == NO_ERRORS
    # Not JSON: output_json is null, so grade() raises, and the error is the grader's runtime error.
    broken = graders.run(grader=grader, model_sample="Paris", item={"answer": "Paris"})
    assert broken.reward == 0.0
    errors = errors_of(broken)
    assert (
        errors["python_grader_runtime_error"] is True and "TypeError" in errors["python_grader_runtime_error_details"]
    )
    assert {key: value for key, value in errors.items() if "python_grader_runtime" not in key} == {
        key: value for key, value in NO_ERRORS.items() if "python_grader_runtime" not in key
    }


def test_validate_returns_a_runnable_grader_and_refuses_one_no_run_could_execute(served):
    graders = served.client().fine_tuning.alpha.graders
    assert graders.validate(grader=EXACT).grader.model_dump(exclude_none=True) == EXACT
    with pytest.raises(openai.BadRequestError, match="operation"):
        graders.validate(grader={**EXACT, "operation": "sounds_like"})
    with pytest.raises(openai.BadRequestError, match="calculate_output"):
        graders.validate(
            grader={"type": "multi", "name": "m", "graders": {"exact": EXACT}, "calculate_output": "__import__('os')"}
        )
    with pytest.raises(openai.BadRequestError, match="model_sample"):
        graders.run(grader=EXACT, model_sample=None, item={})  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError, match="item must be an object"):
        graders.run(grader=EXACT, model_sample="x", item=["not", "an", "object"])


def test_a_judge_that_cannot_be_reached_is_the_model_graders_server_error(store):
    from assay.api import create_app
    from assay.evaluators import load_catalog
    from assay.llm import ModelConfig, ModelRegistry
    from tests.support.fixtures import free_port
    from tests.support.servers import uvicorn_in_thread

    nowhere = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    registry = ModelRegistry(
        [ModelConfig(name="judge", model="gpt-4.1-mini", base_url=nowhere, api_key="t", max_retries=0)]
    )
    app = create_app(store, catalog=lambda project: load_catalog(store, project), models=lambda: registry)
    with uvicorn_in_thread(app) as url, openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as client:
        response = client.fine_tuning.alpha.graders.run(grader=SCORED, model_sample="Paris", item={"answer": "Paris"})
        scratch = app.state.assay.scratch()
        assert scratch.list_evals(DEFAULT_PROJECT, after=None, limit=10, order="asc") == []  # nothing kept
    assert response.reward == 0.0
    errors = errors_of(response)
    assert errors["model_grader_server_error"] is True and "127.0.0.1" in errors["model_grader_server_error_details"]
    assert {k: v for k, v in errors.items() if not k.startswith("model_grader_server_error")} == {
        k: v for k, v in NO_ERRORS.items() if not k.startswith("model_grader_server_error")
    }
