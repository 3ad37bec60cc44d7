"""``assay traces`` import, list, show and sample, and eval.yaml runs over traces."""

from __future__ import annotations

import json

from tests.cli.test_cli import assay
from tests.traces import otlp_fixtures as fx


def _import(tmp_path):
    lines = [json.dumps(make()) for make in fx.DIALECTS.values()] + ["{not json"]
    (tmp_path / "spans.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return assay("traces", "import", str(tmp_path / "spans.jsonl"), home=tmp_path)


def test_import_list_show_and_sample(tmp_path):
    imported = _import(tmp_path)
    assert imported.returncode == 1  # the bad line is reported, the good ones are stored
    assert "spans.jsonl:5" in imported.stdout and "not JSON" in imported.stdout
    assert "7 spans read, 7 new" in imported.stdout
    again = _import(tmp_path)
    assert "7 spans read, 0 new, 7 already stored" in again.stdout

    listed = assay("traces", "list", home=tmp_path, env_extra={"COLUMNS": "80"}, check=True).stdout
    assert listed.count("weather:1") == 4 and "0af7651916cd " in listed  # short ids: 80 columns hold a row
    assert "0af7651916cd43dd8448eb211c80319c" in assay("traces", "list", "--wide", home=tmp_path, check=True).stdout

    shown = assay("traces", "show", "0af7651916cd", home=tmp_path, check=True).stdout  # any unique start
    assert fx.QUESTION in shown and '[TOOL_CALL] get_weather({"location": "Paris"})' in shown and fx.ANSWER in shown
    missing = assay("traces", "show", "ffffffffffffffffffffffffffffffff", home=tmp_path)
    assert missing.returncode == 2 and "no trace" in missing.stderr

    sampled = assay(
        "traces",
        "sample",
        "--agent",
        "weather:1",
        "--max",
        "3",
        "--hours",
        "100000",
        "--save",
        "weather-sample",
        "--version",
        "2",
        home=tmp_path,
        check=True,
    ).stdout
    # The four dialects say the same thing: three are exact duplicates of the first.
    assert "4 candidates" in sampled and "3 removed: exact duplicates" in sampled and "1 picked (smart)" in sampled
    assert "saved weather-sample@2" in sampled
    saved = json.loads((tmp_path / "datasets" / "weather-sample-2.jsonl").read_text().splitlines()[0])
    assert saved["tool_calls"][0]["name"] == "get_weather" and saved["agent_id"] == "weather:1"


def test_eval_yaml_over_traces_turn_and_conversation(tmp_path, llm):
    llm.reset()
    llm.script(rules=[{"match": "# Property:", "reply": {"content": '{"reason": "fine", "score": 4}'}}])
    _import(tmp_path)
    models = f"models:\n  judge: {{model: judge, base_url: '{llm.base_url}', api_key: t}}\n"
    (tmp_path / "turns.yaml").write_text(
        "name: trace-turns\n"
        "dataset: {traces: {type: azure_ai_traces, agent_id: 'weather:1', lookback_hours: 100000}}\n"
        + models
        + "options: {eval_model: judge}\nevaluators: [builtin.coherence, builtin.tool_call_accuracy]\n"
    )
    turns = assay("run", str(tmp_path / "turns.yaml"), home=tmp_path)
    assert turns.returncode == 0, turns.stderr
    assert "items: 4 total, 4 passed" in turns.stdout
    run_id = turns.stdout.split("run id: ")[1].split()[0]
    row = json.loads(assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()[0])
    assert row["datasource_item"]["tool_definitions"][0]["name"] == "get_weather"
    tools = next(r for r in row["results"] if r["name"] == "tool_call_accuracy")
    assert tools["status"] == "completed" and tools["score"] == 4

    (tmp_path / "conversations.yaml").write_text(
        "name: trace-conversations\nevaluation_level: conversation\n"
        "dataset: {traces: {type: azure_ai_trace_data_source, trace_source: {type: conversation_id_source,"
        " conversation_ids: [conv-1], lookback_hours: 100000}}}\n" + models + "options: {eval_model: judge}\n"
        "evaluators:\n  - {name: builtin.coherence, data_mapping: {messages: '{{item.messages}}'}}\n"
    )
    conversations = assay("run", str(tmp_path / "conversations.yaml"), home=tmp_path)
    assert conversations.returncode == 0, conversations.stderr
    assert "items: 1 total, 1 passed" in conversations.stdout  # four traces, one conversation id

    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: b\ndataset:\n  traces: {type: azure_ai_trace_data_source, trace_source: {type: agent_filter,"
        " agent_name: weather, start_time: 0, end_time: 60}}\nevaluators: [builtin.coherence]\n"
    )
    refused = assay("run", str(bad), home=tmp_path)
    assert refused.returncode == 2 and "bad.yaml:3" in refused.stderr and "at least 900 s" in refused.stderr


def test_sample_leaves_out_a_conversation_still_going_unless_told(tmp_path):
    import time

    doc = fx.current()
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:  # a turn that ended a minute ago
        start = int((time.time() - 61) * 1e9)
        span["startTimeUnixNano"], span["endTimeUnixNano"] = str(start), str(start + 900_000_000)
    (tmp_path / "recent.json").write_text(json.dumps(doc), encoding="utf-8")
    assay("traces", "import", str(tmp_path / "recent.json"), home=tmp_path, check=True)
    buffered = assay("traces", "sample", "--agent", "weather:1", "--hours", "1", home=tmp_path, check=True).stdout
    assert "0 picked" in buffered and "1 conversations active within 5 minutes" in buffered
    assert "--no-edge-buffer" in buffered
    kept = assay(
        "traces", "sample", "--agent", "weather:1", "--hours", "1", "--no-edge-buffer", home=tmp_path, check=True
    ).stdout
    assert "1 picked" in kept and "within 5 minutes" not in kept
