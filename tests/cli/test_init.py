"""``assay init``: each template's eval runs offline at once, and its commented judges run once a
model is named."""

from __future__ import annotations

import pytest

from assay.config.evalyaml import load_eval_config
from assay.evaluators import load_catalog
from assay.llm import ModelRegistry
from assay.run import finish_run, prepare, start
from assay.scaffold import TEMPLATES, write
from assay.store import Store
from tests.cli.test_cli import assay


def run_in_process(config_path, store, models=None):
    config = load_eval_config(config_path)
    from assay.dataset import Dataset

    registry = models or ModelRegistry(config.models, default=config.eval_model)
    prepared = prepare(
        config.definition, Dataset.from_path(config.dataset.local_path), load_catalog(store), models=registry
    )
    outcome = finish_run(prepared, start(prepared, store), store)
    return outcome, list(store.iter_output_items(outcome.run.id))


def test_init_then_run_works_offline_and_init_keeps_what_exists(tmp_path):
    made = assay("init", str(tmp_path / "proj"), home=tmp_path)
    assert made.returncode == 0, made.stderr
    assert f"next: assay run {tmp_path / 'proj' / 'eval.yaml'}" in made.stdout
    ran = assay("run", str(tmp_path / "proj" / "eval.yaml"), home=tmp_path, env_extra={"OPENAI_API_KEY": ""})
    assert ran.returncode == 0, ran.stderr
    assert "items: 5 total" in ran.stdout and "names_the_product" in ran.stdout
    again = assay("init", str(tmp_path / "proj"), "--template", "rag", home=tmp_path)
    assert again.returncode == 2 and "eval.yaml exists" in again.stderr and "--force" in again.stderr
    forced = assay("init", str(tmp_path / "proj"), "--template", "rag", "--force", home=tmp_path)
    assert forced.returncode == 0 and "document_retrieval" in (tmp_path / "proj" / "eval.yaml").read_text()


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_template_runs_offline_with_every_item_scored(tmp_path, template):
    (config_path, data) = write(tmp_path / template, template)
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        outcome, items = run_in_process(config_path, store)
    finally:
        store.close()
    assert len(items) == len(TEMPLATES[template].rows) == len(data.read_text().splitlines())
    assert outcome.summary.result_counts.errored == 0
    statuses = {r.status for item in items for r in item.results}
    assert statuses == {"completed"}, [r.reason for item in items for r in item.results]


def uncomment_the_judges(text: str, base_url: str) -> str:
    """What the template's comments tell a user to do, with the local endpoint's address."""
    text = text.replace("#     # base_url: http://localhost:11434/v1", f"#     base_url: {base_url}")
    lines = []
    for line in text.splitlines():
        if line.startswith(("# models:", "#   ", "# options:")):
            line = line[2:]
        elif line.startswith("  # "):
            line = "  " + line[4:]
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_the_commented_judges_run_once_a_model_is_named(tmp_path, llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local endpoint needs no key
    config_path, _ = write(tmp_path / "qa", "qa")
    config_path.write_text(uncomment_the_judges(config_path.read_text(), llm.base_url))
    llm.script(default={"content": '{"reason": "on topic", "score": 4}'})
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        outcome, items = run_in_process(config_path, store)
    finally:
        store.close()
    names = [c.testing_criteria for c in outcome.summary.per_testing_criteria_results]
    assert names == ["f1_score", "rougeL", "names_the_product", "relevance", "coherence"]
    judged = [r for item in items for r in item.results if r.name in ("relevance", "coherence")]
    assert len(judged) == 10 and all(r.status == "completed" and r.score == 4 for r in judged)


def test_the_next_step_is_printed_as_the_user_can_type_it(tmp_path):
    """Run by its path with no ``assay`` on PATH (right after ``make demo``), the hint names that path."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    program = Path(sys.prefix) / "bin" / "assay"
    env = {**os.environ, "PATH": "/usr/bin:/bin", "ASSAY_HOME": str(tmp_path / ".assay")}
    made = subprocess.run([program, "init", "proj"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert f"next: {program} run proj/eval.yaml" in made.stdout
