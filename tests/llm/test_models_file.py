"""A ``--models`` file's ``default:``: the model a criterion that names none uses (Foundry's safety
evaluators name none), and the one ``{{aoai_deployment_and_model}}`` stands for in Foundry's samples."""

from __future__ import annotations

import pytest

from assay.cli.serve import models_from_file
from assay.errors import ConfigError

MODELS = """default: judge
models:
  judge: {model: gpt-4o-mini, base_url: 'http://127.0.0.1:9/v1', api_key: t}
  target: {model: gpt-4o, base_url: 'http://127.0.0.1:9/v1', api_key: t}
"""


def test_the_default_model_serves_criteria_that_name_none_and_foundrys_placeholder(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(MODELS)
    registry = models_from_file(path)
    assert registry.get(None).config.name == "judge"
    assert registry.get("{{aoai_deployment_and_model}}").config.name == "judge"
    assert registry.get("target").config.model == "gpt-4o"


def test_a_default_that_is_not_a_model_of_the_file_is_refused_with_the_file_named(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(MODELS.replace("default: judge", "default: jugde"))
    with pytest.raises(ConfigError, match=r"models.yaml: default: 'jugde' is not a model of the models: section"):
        models_from_file(path)


def test_openai_models_are_costed_at_their_list_price_when_no_price_is_given():
    """As promptfoo costs them (its cost assertion needs a price): a dated snapshot at its model's."""
    from assay.llm.config import list_price

    assert list_price("gpt-4.1-mini").cost(1_000_000, 1_000_000) == pytest.approx(0.4 + 1.6)
    assert list_price("gpt-4o-2024-11-20").cost(2_000_000, 0) == pytest.approx(5.0)
    assert list_price("my-local-model") is None
