"""Bad input at the command line: an error that names the file, line and field, never a traceback."""

from __future__ import annotations

import json

from tests.cli.test_cli import assay, write_eval

BOMB = "".join(f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))


def _no_traceback(result) -> None:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr


def test_a_yaml_alias_bomb_is_refused_at_its_line(tmp_path):
    (tmp_path / "d.jsonl").write_text('{"response": "a", "ground_truth": "a"}\n')
    config = tmp_path / "eval.yaml"
    config.write_text(
        'name: bomb\na: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
        + BOMB
        + "dataset: {local_uri: d.jsonl}\nevaluators: [builtin.f1_score]\n"
    )
    result = assay("run", str(config), home=tmp_path)
    assert result.returncode != 0
    _no_traceback(result)
    assert "eval.yaml:" in result.stderr and "expand to more than" in result.stderr


def test_csv_with_a_large_cell_runs_and_one_past_the_limit_names_its_line(tmp_path):
    big = "word " * 60_000  # 300 kB: over Python's 128 kB default, a normal RAG context
    (tmp_path / "d.csv").write_text(f'response,ground_truth\n"{big}",word\nshort,short\n', encoding="utf-8")
    config = write_eval(tmp_path, "d.csv", "  - builtin.f1_score\n")
    result = assay("run", str(config), home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "items: 2 total" in result.stdout
    huge = "x" * (17 * 1024 * 1024)
    (tmp_path / "d.csv").write_text(f'response,ground_truth\nshort,short\n"{huge}",x\n', encoding="utf-8")
    refused = assay("run", str(config), home=tmp_path)
    assert refused.returncode != 0
    _no_traceback(refused)
    assert "d.csv:3" in refused.stderr and "field larger than field limit" in refused.stderr


def test_csv_that_is_not_utf8_names_its_line(tmp_path):
    (tmp_path / "d.csv").write_bytes(b"response,ground_truth\nok,ok\ncaf\xe9,x\n")
    config = write_eval(tmp_path, "d.csv", "  - builtin.f1_score\n")
    result = assay("run", str(config), home=tmp_path)
    assert result.returncode != 0
    _no_traceback(result)
    assert "not UTF-8" in result.stderr and "d.csv:3" in result.stderr


def test_deep_json_and_huge_integers_are_bad_lines_not_crashes(tmp_path):
    lines = [
        '{"response": "a", "ground_truth": "a"}',
        '{"response": ' + "[" * 1000 + "]" * 1000 + "}",
        '{"response": "b", "n": ' + "7" * 5000 + "}",
    ]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = assay("dataset", "validate", str(path), home=tmp_path)
    assert result.returncode == 1
    _no_traceback(result)
    assert "d.jsonl:2: invalid JSON (nested deeper than 64 levels)" in result.stdout
    assert "d.jsonl:3: invalid JSON" in result.stdout and "4300" in result.stdout


def test_a_utf8_bom_is_accepted_as_the_api_accepts_it(tmp_path):
    rows = [{"response": "Paris", "ground_truth": "Paris"}, {"response": "x", "ground_truth": "y"}]
    (tmp_path / "d.jsonl").write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in rows).encode())
    config = write_eval(tmp_path, "d.jsonl", "  - builtin.f1_score\n")
    result = assay("run", str(config), home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "items: 2 total" in result.stdout


def test_the_same_dataset_version_added_twice_is_a_clear_error(tmp_path):
    (tmp_path / "d.jsonl").write_text('{"response": "a"}\n')
    first = assay("dataset", "add", "shop", str(tmp_path / "d.jsonl"), "--version", "1", home=tmp_path)
    assert first.returncode == 0, first.stderr
    again = assay("dataset", "add", "shop", str(tmp_path / "d.jsonl"), "--version", "1", home=tmp_path)
    assert again.returncode != 0
    _no_traceback(again)
    assert "shop version 1 already exists" in again.stderr
