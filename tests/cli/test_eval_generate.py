"""``assay eval generate`` on ``examples/support_agent`` with the scripted provider as generator:
azd's files where azd writes them, every rule and tool covered (a second round asked for the one
left out), near-duplicates dropped, and the eval.yaml it writes runs as it is."""

from __future__ import annotations

import json
import shutil

import yaml

from assay.evaluators.custom.rubric import parse_dimensions
from tests.cli.test_cli import assay
from tests.cli.test_narrow import readable_at_80
from tests.support.fixtures import ROOT

EXAMPLE = ROOT / "examples" / "support_agent"
CATEGORIES = ["happy", "edge", "ambiguous", "out_of_scope", "adversarial", "multi_step"]


def intent(i: int, rules: list[str], tools: list[str]) -> dict:
    return {
        "description": f"intent {i}: the customer asks about order {1000 + i}",
        "category": CATEGORIES[i % 6],
        "rules": rules,
        "tools": tools,
    }


FIRST = [
    intent(0, ["R1"], ["lookup_order"]),
    intent(1, ["R2"], []),
    intent(2, ["R3"], ["escalate_to_human"]),
    *(intent(i, [], []) for i in range(3, 15)),
]  # refund_policy left out
SECOND = [intent(15, [], ["refund_policy"])]


def task(i: int, query: str | None = None) -> dict:
    return {
        "intent": i,
        "name": f"Task {i}",
        "query": query or f"Where is order {1000 + i}? I need it by {i} May.",
        "ground_truth": "",
        "criteria": [
            {"name": "Looks It Up", "instruction": "Response must use lookup_order"},
            {"name": "no guess", "instruction": "Agent must not guess a status"},
        ],
    }


RULES = [
    {"match": "Still uncovered", "reply": {"content": json.dumps({"intents": SECOND})}},
    {"match": "distinct test intents", "reply": {"content": json.dumps({"intents": FIRST})}},
    {"match": "0. [happy]", "reply": {"content": json.dumps({"tasks": [task(i) for i in range(8)]})}},
    # The second batch repeats one query, nearly word for word: it is dropped.
    {
        "match": "8. [",
        "reply": {
            "content": json.dumps(
                {"tasks": [task(8, "Where is order 1000? I need it by 0 May!"), *(task(i) for i in range(9, 16))]}
            )
        },
    },
    {
        "match": "Write a rubric",
        "reply": {
            "content": json.dumps(
                {
                    "dimensions": [
                        {"id": "Uses Tools", "description": "Looks orders up instead of guessing.", "weight": 8},
                        {"id": "hands_off", "description": "Hands off what it cannot do.", "weight": 12},
                        {"id": "general_quality", "description": "dropped: assay adds its own", "weight": 1},
                        {"id": "tone", "description": "Polite and brief.", "weight": 3},
                        {"id": "accuracy", "description": "States only what tools returned.", "weight": 6},
                    ]
                }
            )
        },
    },
    # What `assay run` on the result asks: the agent (the default reply), then the judges.
    {"match": "# Property: task criterion", "reply": {"content": '{"reason": "met", "score": 1}'}},
    {"match": "# Property: task adherence", "reply": {"content": '{"reason": "on task", "score": 1}'}},
    {
        "match": "# Rubric",
        "reply": {
            "content": json.dumps(
                {
                    "reason": "fine",
                    "dimensions": [
                        {"id": d, "score": 4, "reason": "ok"}
                        for d in ("uses_tools", "hands_off", "tone", "accuracy", "general_quality")
                    ],
                }
            )
        },
    },
]


def test_eval_generate_writes_azds_files_and_the_eval_runs(tmp_path, llm):
    llm.reset()
    llm.script(rules=RULES, default={"content": "Let me look that order up for you."})
    project = tmp_path / "support_agent"
    project.mkdir()
    for name in ("instructions.md", "tools.json"):
        shutil.copy(EXAMPLE / name, project / name)
    env = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "t"}
    result = assay(
        "eval",
        "generate",
        "--name",
        "support-agent",
        "--agent",
        "support-agent",
        "--gen-instruction-file",
        str(project / "instructions.md"),
        "--eval-model",
        "gen-m",
        "--no-prompt",
        "--project",
        str(project),
        home=tmp_path,
        env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    rows = [
        json.loads(line)
        for line in (project / "datasets/support-agent/support-agent_dg.jsonl").read_text().splitlines()
    ]
    assert len(rows) == 15  # 16 tasks written, one near-duplicate dropped
    assert [r["id"] for r in rows] == list(range(1, 16)) and len({r["name"] for r in rows}) == 15
    assert rows[0]["criteria"] == [
        {"name": "looks_it_up", "instruction": "Response must use lookup_order"},
        {"name": "no_guess", "instruction": "Agent must not guess a status"},
    ]
    covered = {key for r in rows for key in [*r["covers"]["rules"], *r["covers"]["tools"]]}
    assert covered == {"R1", "R2", "R3", "lookup_order", "refund_policy", "escalate_to_human"}
    dimensions = parse_dimensions(
        (project / "evaluators/support-agent-rubric/rubric_dimensions.json").read_text(), "rubric"
    )
    assert [(d.id, d.weight) for d in dimensions] == [
        ("uses_tools", 8),
        ("hands_off", 10),
        ("tone", 3),
        ("accuracy", 6),
        ("general_quality", 5),
    ]
    assert dimensions[-1].always_applicable
    metadata = yaml.safe_load((project / ".agent_configs/baseline/metadata.yaml").read_text())
    assert metadata == {"name": "support-agent", "instruction_file": "instructions.md", "tools_file": "tools.json"}
    assert (project / ".agent_configs/baseline/instructions.md").read_text() == (
        EXAMPLE / "instructions.md"
    ).read_text()
    config = yaml.safe_load((project / "eval.yaml").read_text())
    assert config["dataset"] == {"name": "support-agent", "version": "1.0", "local_uri": "datasets/support-agent"}
    assert config["evaluators"][0] == "builtin.task_adherence" and config["options"] == {"eval_model": "gen-m"}
    assert config["agent"]["config"] == ".agent_configs/baseline/metadata.yaml" and config["max_samples"] == 15
    assert "out_of_scope 3" in result.stdout and "R3" in result.stdout

    ran = assay("run", str(project / "eval.yaml"), home=tmp_path, env_extra=env)
    assert ran.returncode == 0, ran.stderr
    assert "items: 15 total, 15 passed" in " ".join(ran.stdout.split())
    assert "composite score 0.9" in ran.stdout  # criteria 1, adherence 1, rubric 0.75


def test_an_existing_eval_yaml_is_kept_without_reset_defaults(tmp_path, llm):
    (tmp_path / "eval.yaml").write_text("name: mine\n")
    result = assay(
        "eval",
        "generate",
        "-g",
        "An agent.",
        "--eval-model",
        "m",
        "--no-prompt",
        "--project",
        str(tmp_path),
        home=tmp_path,
    )
    # Asked nothing, it writes nothing, and says so with an error rather than a success that did nothing.
    assert result.returncode == 2 and "eval.yaml exists" in result.stderr and "--reset-defaults" in result.stderr
    assert (tmp_path / "eval.yaml").read_text() == "name: mine\n"


def test_eval_update_stores_edits_as_new_versions(tmp_path, llm):
    from tests.cli.test_tasks import write_project

    write_project(tmp_path, llm)  # seed 002's tasks and a rubric, as azd lays them out
    config = tmp_path / "eval.yaml"
    text = config.read_text().replace(
        "dataset: {local_uri: datasets/support}",
        "dataset: {name: support, version: '1.0', local_uri: datasets/support}",
    )
    config.write_text(text)
    first = assay("eval", "update", "--config", str(config), home=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "dataset support: stored as version 2.0" in first.stdout
    assert "evaluator support_rubric: stored as version 1" in first.stdout
    saved = yaml.safe_load(config.read_text())
    assert saved["dataset"]["version"] == "2.0" and saved["evaluators"][1]["version"] == "1"
    again = assay("eval", "update", "--config", str(config), home=tmp_path)  # nothing edited since
    assert "dataset: no local changes" in again.stdout and "unchanged (version 1)" in again.stdout
    rubric = tmp_path / "evaluators/support_rubric/rubric_dimensions.json"
    rubric.write_text(rubric.read_text().replace('"weight": 8', '"weight": 9'))
    edited = assay("eval", "update", "--config", str(config), "--evaluator-only", home=tmp_path)
    assert "evaluator support_rubric: stored as version 2" in edited.stdout and "dataset" not in edited.stdout
    assert yaml.safe_load(config.read_text())["evaluators"][1]["version"] == "2"


def test_next_version_follows_azd():
    from assay.evalgen.update import next_version

    assert [next_version(v) for v in ("", "1", "1.0", "2.5", "v3", "beta")] == [
        "1.0",
        "2.0",
        "2.0",
        "3.0",
        "v4",
        "beta.1",
    ]


def test_eval_lint_flags_vague_and_flipping_criteria(tmp_path, llm):
    from tests.cli.test_tasks import TASKS, write_project

    vague = {**TASKS[2], "criteria": [{"name": "good_answer", "instruction": "The response should be good"}]}
    write_project(tmp_path, llm, tasks=[TASKS[0], TASKS[1], vague])
    score = lambda s: {"content": json.dumps({"reason": "judged", "score": s})}  # noqa: E731
    llm.reset()
    llm.script(
        rules=[
            {"match": "CRITERION:\\nThe response should be good", "reply": score(1)},  # passes anything
            {"match": "RESPONSE:\\n\\n\\nCRITERION", "reply": score(0)},  # the empty response
            {"match": "short poem about the sea", "reply": score(0)},  # the off-topic one
            {
                "match": "CRITERION:\\nResponse must be professional",
                "times": 1,
                "reply": score(0),
            },  # one of three differs
            {"match": "CRITERION:", "reply": score(1)},
        ],
        default={"content": "We refund within 30 days."},
    )
    # Wide enough for the table whole (narrower, each criterion is a block of lines).
    result = assay("eval", "lint", "--config", str(tmp_path / "eval.yaml"), home=tmp_path, env_extra={"COLUMNS": "400"})
    assert result.returncode == 1, result.stderr
    rows = {line.split("│")[2].strip(): line for line in result.stdout.splitlines() if line.count("│") > 5}
    assert "passes an empty response" in rows["good_answer"] and "off-topic" in rows["good_answer"]
    assert "its verdict flips: passed 2 of 3" in rows["polite_tone"]
    assert "ok" in rows["mentions_30_days"] and "ok" in rows["no_hallucination"]
    assert "2 criteria flagged of 5" in result.stdout
    narrow = assay("eval", "lint", "--config", str(tmp_path / "eval.yaml"), home=tmp_path, env_extra={"COLUMNS": "80"})
    readable_at_80(narrow.stdout)  # the same verdicts (from the cache), a block per criterion
    assert "  criterion: good_answer" in narrow.stdout and "passes an empty response" in narrow.stdout


def test_eval_generate_shows_the_generator_requests_from_the_agents_traces(tmp_path, llm):
    import time

    from tests.traces.otlp_fixtures import QUESTION, current

    document = current()
    now = time.time_ns()
    for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["startTimeUnixNano"], span["endTimeUnixNano"] = str(now - 10**9), str(now)
    (tmp_path / "traces.json").write_text(json.dumps(document))
    assert assay("traces", "import", str(tmp_path / "traces.json"), home=tmp_path).returncode == 0
    seen = f"Requests real users sent it (write tasks like these)\\n- {QUESTION}"
    llm.reset()
    intents = {"match": seen, "reply": {"content": json.dumps({"intents": FIRST + SECOND})}}
    llm.script(rules=[*RULES[2:5], intents])  # the tasks' and rubric's prompts show the request too
    result = assay(
        "eval",
        "generate",
        "--agent",
        "weather",
        "-g",
        "You answer weather questions. Use get_weather.",
        "--trace-days",
        "7",
        "--eval-model",
        "gen-m",
        "--no-prompt",
        "--project",
        str(tmp_path),
        home=tmp_path,
        env_extra={"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "t"},
    )
    assert result.returncode == 0, result.stderr  # the intents were asked for with the traced request in view
    assert "1 request from the agent's traces of the last 7 days" in result.stdout


def test_with_dataset_only_the_rubric_is_generated(tmp_path, own_llm):
    llm = own_llm  # it counts calls: another test's leftover traffic on the shared provider moved the count
    from tests.cli.test_tasks import TASKS

    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TASKS))
    llm.reset()
    llm.script(rules=RULES)
    result = assay(
        "eval",
        "generate",
        "--dataset",
        "tasks.jsonl",
        "-g",
        "You answer refund questions.",
        "--eval-model",
        "gen-m",
        "--no-prompt",
        "--project",
        str(tmp_path),
        home=tmp_path,
        env_extra={"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "t"},
    )
    assert result.returncode == 0, result.stderr
    assert "tasks: kept as they are" in result.stdout and not (tmp_path / "datasets").exists()
    assert yaml.safe_load((tmp_path / "eval.yaml").read_text())["dataset"] == {"local_uri": "tasks.jsonl"}
    assert llm.stats()["requests"] == 1  # the rubric, nothing else


def test_max_samples_caps_the_intents_and_keeps_what_covers_a_rule_or_tool():
    from assay.evalgen.generate import within

    written = [intent(i, [], []) for i in range(18)]
    written[16]["rules"], written[17]["tools"] = ["R4"], ["refund_policy"]  # a coverage round's additions
    kept = within(written, 15)
    assert len(kept) == 15
    assert kept[-2:] == written[16:] and kept[:13] == written[:13]  # coverers first, then the order written
    assert within(written[:10], 15) == written[:10]
