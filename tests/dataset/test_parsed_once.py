"""A small dataset file is parsed once per Dataset: the check before a run and the run share it."""

from __future__ import annotations

import json

from assay.dataset import Dataset
from assay.dataset import source as dataset_source


def _write(path, values):
    path.write_text("".join(json.dumps({"q": v}) + "\n" for v in values), encoding="utf-8")


def test_a_small_file_read_through_once_is_not_parsed_again(tmp_path):
    path = tmp_path / "data.jsonl"
    _write(path, ["a", "b"])
    dataset = Dataset.from_path(path)
    assert [row.item for row in dataset.rows()] == [{"q": "a"}, {"q": "b"}]
    _write(path, ["changed"])  # what was checked is what runs
    assert [row.item for row in dataset.rows()] == [{"q": "a"}, {"q": "b"}]
    assert [row.item for row in Dataset.from_path(path).rows()] == [{"q": "changed"}]


def test_a_reading_cut_short_keeps_nothing(tmp_path):
    path = tmp_path / "data.csv"
    # CSV is read line by line, and a reading can stop early.
    path.write_text("q\na\nb\nc\n", encoding="utf-8")
    dataset = Dataset.from_path(path)
    assert [row.item["q"] for row in dataset.head(1).rows()] == ["a"]
    path.write_text("q\nx\ny\n", encoding="utf-8")
    assert [row.item["q"] for row in dataset.rows()] == ["x", "y"]


def test_a_file_read_at_once_is_kept_whole_after_a_short_reading(tmp_path):
    path = tmp_path / "data.jsonl"
    _write(path, ["a", "b", "c"])
    dataset = Dataset.from_path(path)
    assert [row.item for row in dataset.head(1).rows()] == [{"q": "a"}]
    _write(path, ["x", "y"])
    assert [row.item["q"] for row in dataset.rows()] == ["a", "b", "c"]


def test_a_large_file_is_read_each_time(tmp_path, monkeypatch):
    monkeypatch.setattr(dataset_source, "PARSED_ONCE_BYTES", 10)
    path = tmp_path / "data.jsonl"
    _write(path, ["a", "b"])
    dataset = Dataset.from_path(path)
    assert len(list(dataset.rows())) == 2
    _write(path, ["x", "y", "z"])
    assert [row.item["q"] for row in dataset.rows()] == ["x", "y", "z"]


def test_bad_lines_are_reported_from_the_kept_rows_too(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"q": "a"}\nnot json\n', encoding="utf-8")
    dataset = Dataset.from_path(path)
    for _ in range(2):
        issues = [row.issue for row in dataset.rows() if row.issue is not None]
        assert len(issues) == 1 and issues[0].line == 2
