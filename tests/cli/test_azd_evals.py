"""azd's evals as code on assay: ``evals/azure.eval.yaml`` with a dataset and ``builtin.f1_score``;
``run start --fail-on pass-rate=X`` passes below the planted pass rate and fails above it;
``create`` twice writes nothing the second time; an edited evaluator becomes version 2 of itself
and the eval keeps its id and its runs."""

from __future__ import annotations

import json

import yaml

from assay.store import Store
from tests.cli.test_cli import assay

CODE = "def evaluate(response: str) -> float:\n    return float(len(response) > {n})\n"


def project(tmp_path, passing: int = 14, items: int = 20) -> None:
    """``items`` rows, ``passing`` of them answered word for word (F1 1.0), the rest off (F1 0)."""
    rows = [
        {"query": f"q{i}", "response": "the answer" if i < passing else "nothing", "ground_truth": "the answer"}
        for i in range(items)
    ]
    (tmp_path / "evals" / "datasets").mkdir(parents=True)
    (tmp_path / "evals" / "evaluators").mkdir()
    (tmp_path / "evals" / "datasets" / "golden.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "evals" / "evaluators" / "long_enough.py").write_text(CODE.format(n=3))
    spec = {
        "datasets": [{"name": "golden", "file": "./datasets/golden.jsonl"}],
        "evaluators": [{"name": "long_enough", "source": "./evaluators/long_enough.py"}],
        "evals": [
            {"name": "quality", "dataset": "golden", "evaluators": [{"evaluator": "builtin.f1_score"}]},
            {
                "name": "length",
                "dataset": "golden",
                "evaluators": [{"evaluator": "long_enough", "data_mapping": {"response": "{{item.response}}"}}],
            },
        ],
    }
    (tmp_path / "evals" / "azure.eval.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))


def run(tmp_path, *args: str):
    return assay("eval", *args, "--no-prompt", "--path", str(tmp_path / "evals"), home=tmp_path)


def test_run_start_gates_on_the_planted_pass_rate(tmp_path):
    project(tmp_path)  # 70% pass
    below = run(tmp_path, "run", "start", "--eval", "quality", "--fail-on", "pass-rate=0.65")
    assert below.returncode == 0, below.stdout + below.stderr
    above = run(tmp_path, "run", "start", "--eval", "quality", "--fail-on", "pass-rate=0.75")
    assert above.returncode == 1 and "pass rate 70.0% is below 75.0%" in above.stdout
    # Both runs belong to the one eval create made; their output reads back, and they compare.
    listed = run(tmp_path, "run", "output", "list", "--eval", "quality", "-o", "json")
    rows = json.loads(listed.stdout)
    assert len(rows) == 20 and sum(r["result"] == "pass" for r in rows) == 14
    compared = run(tmp_path, "results", "compare", "--eval", "quality", "-o", "json")
    found = json.loads(compared.stdout)
    assert found["criteria"][0]["verdict"] == "inconclusive" and found["criteria"][0]["delta"] == 0
    exported = tmp_path / "out.csv"
    assert (
        run(tmp_path, "run", "output", "export", "--eval", "quality", "--format", "csv", "-O", str(exported)).returncode
        == 0
    )
    assert exported.read_text().splitlines()[0] == "run_id,item,evaluator,result,score,input,reason"


def test_create_twice_writes_nothing_and_an_edited_evaluator_is_version_two_of_the_same_eval(tmp_path):
    project(tmp_path)
    first = run(tmp_path, "create", "-o", "json")
    assert first.returncode == 0, first.stderr
    created = json.loads(first.stdout)
    assert created["datasets"]["golden"] == ["1", "created"] and created["evaluators"]["long_enough"] == [
        "1",
        "created",
    ]
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        before = (
            store.list_datasets(),
            store.list_evaluators(),
            [store.get_eval(i) for i, _ in created["evals"].values()],
        )
        again = run(tmp_path, "create")
        assert again.returncode == 0 and "nothing changed: nothing written" in again.stdout
        after = (
            store.list_datasets(),
            store.list_evaluators(),
            [store.get_eval(i) for i, _ in created["evals"].values()],
        )
        assert after == before  # not a row touched, not even an updated_at
        eval_id = created["evals"]["length"][0]
        (tmp_path / "evals" / "evaluators" / "long_enough.py").write_text(CODE.format(n=5))
        edited = json.loads(run(tmp_path, "create", "-o", "json").stdout)
        assert edited["evaluators"]["long_enough"] == ["2", "created"]
        assert edited["evals"]["length"] == [eval_id, "updated"]  # the same eval: its history stays
        assert edited["evals"]["quality"][1] == "unchanged" and edited["datasets"]["golden"] == ["1", "unchanged"]
        criteria = store.get_eval(eval_id).testing_criteria
        assert criteria[0]["evaluator_name"] == "long_enough" and criteria[0]["evaluator_version"] == "2"
        started = run(tmp_path, "run", "start", "--eval", "length")
        assert started.returncode == 0, started.stdout + started.stderr
        (only,) = store.list_runs_of(eval_id)
        assert only.eval_id == eval_id
    finally:
        store.close()


def test_mistakes_name_the_file_and_line(tmp_path):
    project(tmp_path)
    config = tmp_path / "evals" / "azure.eval.yaml"
    text = config.read_text().replace(
        "dataset: golden\n  evaluators:\n  - evaluator: builtin.f1",
        "dataset: golde\n  evaluators:\n  - evaluator: builtin.f1",
    )
    config.write_text(text)
    result = run(tmp_path, "create")
    assert (
        result.returncode != 0
        and "azure.eval.yaml:" in result.stderr
        and "'golde' is not in datasets:" in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_init_scaffolds_what_create_and_run_accept(tmp_path):
    init = assay("eval", "init", "--no-prompt", "--out-dir", str(tmp_path / "evals"), home=tmp_path)
    assert init.returncode == 0, init.stderr
    started = run(tmp_path, "run", "start", "--fail-on", "pass-rate=0.6")
    assert started.returncode == 0, started.stdout + started.stderr  # the sample: 2 of 3 pass


def test_the_same_commands_against_a_servers_project(tmp_path, llm):
    """``--project-endpoint``: reconciled through the project's datasets, evaluators and Evals API
    (nothing written the second time; an edited evaluator a new version of the same eval), run by
    the server and gated, its output read back and compared."""
    from tests.support.servers import start_assay_server

    project(tmp_path)
    (tmp_path / "models.yaml").write_text(f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n")
    server, client = start_assay_server(tmp_path / "server", tmp_path / "models.yaml")
    port = client.base_url.port
    remote = ("--project-endpoint", f"http://127.0.0.1:{port}/api/projects/team")
    try:
        first = json.loads(run(tmp_path, "create", *remote, "-o", "json").stdout)
        assert first["datasets"]["golden"] == ["1", "created"] and first["evaluators"]["long_enough"] == [
            "1",
            "created",
        ]
        again = run(tmp_path, "create", *remote)
        assert "nothing changed: nothing written" in again.stdout, again.stdout + again.stderr
        (tmp_path / "evals" / "evaluators" / "long_enough.py").write_text(CODE.format(n=5))
        edited = json.loads(run(tmp_path, "create", *remote, "-o", "json").stdout)
        assert edited["evaluators"]["long_enough"] == ["2", "created"]
        assert edited["evals"]["length"] == [first["evals"]["length"][0], "updated"]
        team = client.with_options(base_url=f"http://127.0.0.1:{port}/api/projects/team/openai/v1")
        served = team.evals.retrieve(first["evals"]["length"][0])  # the server holds the new criteria
        assert served.testing_criteria[0].model_dump()["evaluator_version"] == "2"
        below = run(tmp_path, "run", "start", "--eval", "quality", "--fail-on", "pass-rate=0.65", *remote)
        assert below.returncode == 0 and "passed=14 failed=6" in below.stdout, below.stdout + below.stderr
        above = run(tmp_path, "run", "start", "--eval", "quality", "--fail-on", "pass-rate=0.75", *remote)
        assert above.returncode == 1 and "pass rate 70.0% is below 75.0%" in above.stdout
        rows = json.loads(run(tmp_path, "run", "output", "list", "--eval", "quality", "-o", "json", *remote).stdout)
        assert len(rows) == 20 and sum(r["result"] == "pass" for r in rows) == 14
        compared = json.loads(run(tmp_path, "results", "compare", "--eval", "quality", "-o", "json", *remote).stdout)
        assert compared["criteria"][0]["verdict"] == "inconclusive" and compared["criteria"][0]["delta"] == 0
        assert not (tmp_path / "assay.db").exists()  # all of it on the server, nothing in a local store
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=20)
