"""``assay optimize`` on a scripted world: the agent states the 30-day refund window only when its
instructions carry a rule, the judge checks for it, and the reflection model, shown the failing
reason, proposes the rule. The search finds it and stars it with the expected gain; the same seed
gives the same ids; the budget and stall stops hold; a job killed with SIGKILL resumes to the same
end; a rerun with ``--cache replay`` calls nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assay.optimize.search import Settings, split
from tests.cli.test_cli import assay
from tests.support.fixtures import poll

BASELINE = "You are the shop's assistant. Answer briefly and politely.\n"
RULE = "RULE:refund Always tell customers about the 30-day refund window."
GAIN = 0.5  # a task's score: its criterion (0 → 1) and task_adherence (1) averaged


def score(value: int, reason: str) -> dict:
    return {"content": json.dumps({"reason": reason, "score": value})}


def rules(proposal: str) -> list[dict]:
    return [
        {"match": "# How it did", "reply": {"content": json.dumps({"instructions": proposal})}},
        {"match": "RESPONSE:\\nYou can return it within 30 days", "reply": score(1, "it names the 30-day window")},
        {"match": "# Property: task criterion", "reply": score(0, "it does not mention the 30-day refund window")},
        {"match": "# Property: task adherence", "reply": score(1, "on task")},
        {"match": "RULE:refund", "reply": {"content": "You can return it within 30 days."}},
    ]


def project(folder, llm) -> list[dict]:
    tasks = [
        {
            "name": f"refund_{i}",
            "query": f"Can I still return the item from my order {4000 + i}?",
            "criteria": [{"name": "mentions_30_days", "instruction": "Response must mention the 30-day refund window"}],
        }
        for i in range(1, 13)
    ]
    (folder / "datasets" / "refunds").mkdir(parents=True)
    (folder / "datasets" / "refunds" / "refunds.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (folder / ".agent_configs" / "baseline").mkdir(parents=True)
    (folder / ".agent_configs" / "baseline" / "instructions.md").write_text(BASELINE)
    (folder / ".agent_configs" / "baseline" / "metadata.yaml").write_text("instruction_file: instructions.md\n")
    models = {
        name: {"model": f"{name}-m", "base_url": llm.base_url, "api_key": "t"} for name in ("agent", "judge", "opt")
    }
    (folder / "eval.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "refunds",
                "agent": {"name": "shop", "config": ".agent_configs/baseline/metadata.yaml", "model": "agent"},
                "dataset": {"local_uri": "datasets/refunds"},
                "models": models,
                "evaluators": ["builtin.task_adherence"],
                "options": {"eval_model": "judge", "optimization_model": "opt"},
            }
        )
    )
    return tasks


@pytest.fixture
def world(tmp_path, llm):
    llm.reset()
    llm.script(rules=rules(BASELINE + RULE), default={"content": "Sure, you can return it."})
    project(tmp_path, llm)
    return tmp_path


def optimize(folder, *extra):
    return assay("optimize", "--config", str(folder / "eval.yaml"), "--output", "json", *extra, home=folder)


def job(result) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout[result.stdout.index("{\n") :])


def test_the_search_finds_the_rule_stars_it_and_applies(world, llm):
    found = job(optimize(world))
    best = found["result"]["best"]
    assert found["result"]["starred"] is True and found["result"]["gain"] == pytest.approx(GAIN)
    assert found["result"]["gain_interval"] == pytest.approx([GAIN, GAIN])
    assert best["mutations"] == ["system_prompt"] and found["stop_reason"] == "max_stalls"
    accepted = [c for c in found["result"]["candidates"] if c["accepted"]]
    assert [c["candidate_id"] for c in accepted] == [found["result"]["baseline"]["candidate_id"], best["candidate_id"]]
    assert set(best["task_scores"].values()) == {1.0} and set(found["result"]["baseline"]["task_scores"].values()) == {
        0.5
    }
    assert best["eval_id"].startswith("eval_") and best["eval_run_id"].startswith("evalrun_")
    # Found after: the baseline on validation, one minibatch for parent and child, the child on validation.
    state = json.loads(next((world / ".assay/optimize").glob("*/state.json")).read_text())
    first_accept = next(e for e in state["events"] if e["event"] == "accepted")
    assert first_accept["iteration"] == 1
    assert state["candidates"][best["candidate_id"]]["config"]["instructions"].rstrip().endswith(RULE)

    applied = assay("optimize", "apply", "--candidate", best["candidate_id"], "--project", str(world), home=world)
    assert applied.returncode == 0, applied.stderr
    folder = world / ".agent_configs" / best["candidate_id"]
    assert (folder / "instructions.md").read_text().rstrip().endswith(RULE)
    assert f"+{RULE}" in (folder / "diff.patch").read_text()
    lineage = json.loads((folder / "lineage.json").read_text())
    assert lineage["parent"] == found["result"]["baseline"]["candidate_id"] and len(lineage["minibatch"]) == 3
    assert yaml.safe_load((folder / "metadata.yaml").read_text())["instruction_file"] == "instructions.md"

    before = llm.stats()["requests"]  # the same search again from the cache alone: no call at all
    again = job(optimize(world, "--cache", "replay"))
    assert llm.stats()["requests"] == before
    assert [c["candidate_id"] for c in again["result"]["candidates"]] == [
        c["candidate_id"] for c in found["result"]["candidates"]
    ]  # same seed, same ids
    assert again["result"]["gain"] == found["result"]["gain"]


def test_the_stall_and_budget_stops_hold(world, llm):
    llm.script(rules=rules(BASELINE), default={"content": "Sure, you can return it."})  # proposes nothing new
    stalled = job(optimize(world, "--max-stalls", "2"))
    assert stalled["stop_reason"] == "max_stalls" and stalled["result"]["starred"] is False
    assert [c["accepted"] for c in stalled["result"]["candidates"]] == [True]
    llm.script(rules=rules(BASELINE + RULE), default={"content": "Sure, you can return it."})
    budget = job(optimize(world, "--max-metric-calls", "6"))
    assert budget["stop_reason"] == "max_metric_calls" and budget["search_metric_calls"] <= 6


def test_a_killed_job_resumes_to_the_same_end(world, llm, tmp_path_factory):
    # One scoring per task here: the provider's calls are counted exactly to hold the job mid-way
    # (with trials, a task's judges may be asked once or twice as its trials race for the cache).
    reference = job(optimize(world, "--task-repeats", "1"))  # the job run through, for comparison
    other = tmp_path_factory.mktemp("killed")
    tasks = project(other, llm)
    # The provider answers until the rule is accepted, then holds every call: the job is surely
    # mid-way, waiting, when it is killed. Each task scoring is three calls (agent, criterion,
    # task_adherence): the baseline on validation, parent and child on a minibatch of three, one
    # reflection, the child on validation.
    validation = len(split(tasks, Settings(optimization_model="opt"))["validation"])
    llm.reset()
    llm.script(
        rules=rules(BASELINE + RULE),
        default={"content": "Sure, you can return it."},
        hold_after=3 * validation + 9 + 1 + 9 + 3 * validation,
    )
    env = {**os.environ, "ASSAY_HOME": str(other)}
    env.pop("ASSAY_DATABASE_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "optimize", "--config", str(other / "eval.yaml"), "--task-repeats", "1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def accepted_rule() -> Path | None:  # the job's state once it has accepted the rule (it can go no further)
        found = list((other / ".assay/optimize").glob("*/state.json"))
        return found[0] if found and len(json.loads(found[0].read_text()).get("accepted", [])) >= 2 else None

    state_file = poll(accepted_rule, lambda found: found is not None, seconds=120, every=0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    assert state_file is not None, "the job never got that far"
    assert json.loads(state_file.read_text())["status"] == "in_progress"
    llm.script(rules=rules(BASELINE + RULE), default={"content": "Sure, you can return it."})
    resumed = job(optimize(other, "--resume", state_file.parent.name))
    ids = lambda j: [(c["candidate_id"], c["accepted"]) for c in j["result"]["candidates"]]  # noqa: E731
    assert ids(resumed) == ids(reference)
    assert resumed["result"]["gain"] == reference["result"]["gain"] and resumed["result"]["starred"] is True


def test_skills_are_rewritten_and_models_of_the_search_space_tried(tmp_path, llm):
    project(tmp_path, llm)
    skill = tmp_path / ".agent_configs/baseline/skills/refunds"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: refunds\ndescription: How to answer refund questions\n---\nBe kind.\n")
    (tmp_path / ".agent_configs/baseline/metadata.yaml").write_text(
        "instruction_file: instructions.md\nskill_dir: skills\n"
    )
    config = yaml.safe_load((tmp_path / "eval.yaml").read_text())
    config["models"]["alt"] = {**config["models"]["agent"], "model": "alt-m"}
    config["options"]["optimization_config"] = {"model_search_space": ["alt"]}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config))
    llm.reset()
    llm.script(
        rules=[{"match": "# Skill refunds", "reply": {"content": json.dumps({"body": RULE})}}, *rules(BASELINE)],
        default={"content": "Sure, you can return it."},
    )
    found = job(optimize(tmp_path, "--max-stalls", "3"))
    by_mutation = {tuple(c["mutations"]): c for c in found["result"]["candidates"]}
    assert by_mutation[("skill_refunds",)]["accepted"] and found["result"]["starred"]
    state = json.loads(next((tmp_path / ".assay/optimize").glob("*/state.json")).read_text())
    tried = [
        state["candidates"][c["candidate_id"]]["config"]
        for c in found["result"]["candidates"]
        if c["mutations"] == ["model"]
    ]
    assert tried and {t["model"] for t in tried} == {"alt"}
    assert state["candidates"][by_mutation[("skill_refunds",)]["candidate_id"]]["config"]["skills"][0][
        "body"
    ].startswith(RULE)
