"""``assay judges bias``: scores that follow length are flagged; a pairwise judge that follows the
order it was shown the responses in is told apart from one that follows the responses."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.run import EvalDefinition, finish_run, prepare, start
from assay.store import Store

RELEVANCE = {
    "type": "azure_ai_evaluator",
    "name": "relevance",
    "evaluator_name": "builtin.relevance",
    "initialization_parameters": {"model": "judge"},
}


def judged_run(store: Store, models, responses: list[str]) -> str:
    rows = [{"query": f"question {i}", "response": text} for i, text in enumerate(responses)]
    prepared = prepare(EvalDefinition("bias", [RELEVANCE]), Dataset.from_content(rows), load_catalog(), models=models)
    return finish_run(prepared, start(prepared, store), store).run.id


def invoke(tmp_path, *args: str) -> dict:
    result = CliRunner().invoke(cli, ["judges", "bias", *args, "--json"], env={"ASSAY_HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def home_store(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    yield store
    store.close()


@pytest.fixture
def home_models(llm, home_store):
    from assay.llm import ModelConfig, ModelRegistry

    llm.reset()
    config = ModelConfig(name="judge", model="gpt-4.1-mini", base_url=llm.base_url, api_key="test")
    return ModelRegistry([config], cache=home_store)


def test_scores_that_grow_with_length_are_flagged(tmp_path, llm, home_store, home_models):
    # The judge gives 5 to every response padded with "indeed", 2 to the rest: verbosity bias.
    llm.script(
        rules=[{"match": "indeed", "reply": {"content": '{"reason": "thorough", "score": 5}'}}],
        default={"content": '{"reason": "terse", "score": 2}'},
    )
    responses = [("answer " + "indeed " * (10 + i)) if i % 2 else "answer" for i in range(30)]
    run = judged_run(home_store, home_models, responses)
    (row,) = invoke(tmp_path, run)["length"]
    assert row["criterion"] == "relevance" and row["n"] == 30
    assert row["spearman"] > 0.8 and row["p_value"] < 0.001 and row["slope_per_100_words"] > 0
    llm.script(default={"content": '{"reason": "fine", "score": 4}'})
    steady = judged_run(home_store, home_models.with_cache_mode("off"), responses)
    (flat,) = invoke(tmp_path, steady)["length"]
    assert flat["spearman"] is None and flat["p_value"] is None  # no spread in the scores: nothing to say


def test_position_probe_tells_order_from_merit(tmp_path, llm, home_store, home_models):
    llm.script(default={"content": '{"reason": "ok", "score": 4}'})
    good = judged_run(home_store, home_models, [f"good answer {i}" for i in range(24)])
    poor = judged_run(home_store, home_models, [f"poor answer {i}" for i in range(24)])
    models_file = tmp_path / "models.yaml"
    models_file.write_text(
        f"models:\n  pairwise:\n    model: gpt-4.1-mini\n    base_url: {llm.base_url}\n    api_key: test\n",
        encoding="utf-8",
    )
    args = ("--check", "position", "--against", poor, "--model", "pairwise", "--models", str(models_file))
    # A judge that always picks whatever was shown first.
    llm.script(default={"content": '{"reason": "first", "better": "A"}'})
    biased = invoke(tmp_path, good, *args)["position"]
    assert biased["n"] == 24 and biased["consistency"] == 0 and biased["first_slot_rate"] == 1
    assert biased["position_bias"] is True and biased["flipped"] == list(range(24))
    assert (biased["primacy"], biased["recency"]) == (24, 0) and biased["p_value"] < 1e-6
    # A judge that picks the good answer wherever it stands.
    llm.script(
        rules=[{"match": "# Response A\\ngood", "reply": {"content": '{"reason": "a", "better": "A"}'}}],
        default={"content": '{"reason": "b", "better": "B"}'},
    )
    fair = invoke(tmp_path, good, *args, "--cache", "refresh")["position"]
    assert fair["consistency"] == 1 and fair["first_slot_rate"] == 0.5 and fair["position_bias"] is False
    assert fair["flipped"] == [] and fair["unparsed"] == 0


def test_position_needs_a_second_run(tmp_path):
    result = CliRunner().invoke(
        cli, ["judges", "bias", "evalrun_x", "--check", "position"], env={"ASSAY_HOME": str(tmp_path)}
    )
    assert result.exit_code == 2 and "--against RUN_B" in result.output


def test_an_items_two_orders_are_paired_not_two_independent_picks():
    """Five items whose verdict followed the order to the first slot both times: counted as ten
    independent picks they looked like a bias (Wilson's interval of 10 of 10 leaves 0.5 far out);
    paired by item they are five order-followers against none, p = 0.0625: short of evidence."""
    from assay.stats.bias import PositionProbe
    from assay.stats.core import wilson

    probe = PositionProbe(n=5, first_slot=10, picks=10, primacy=5, per_item=[(2, 2)] * 5)
    probe.flipped = list(range(5))
    shown = probe.as_dict()
    assert wilson(10, 10)[0] > 0.5  # what counting picks as independent said
    assert shown["p_value"] == 0.0625 and shown["position_bias"] is False
