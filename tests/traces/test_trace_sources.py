"""Trace data sources: reading them, the agent filter's window and edge buffer, latest versions."""

from __future__ import annotations

import json

import pytest

from assay.errors import ConfigError
from assay.run.trace_sources import NS, resolve, selection_of, trace_dataset
from assay.traces.otlp import decode
from tests.traces import otlp_fixtures as fx

START = fx.T0 // NS


def _store_turn(store, trace: str, minutes: int, version: str = "1", conversation: str | None = None):
    doc = fx.current(trace)
    span = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    begin = fx.T0 + minutes * 60 * NS
    span["startTimeUnixNano"], span["endTimeUnixNano"] = str(begin), str(begin + NS)
    span["attributes"] = [
        a
        for a in span["attributes"]
        if a["key"] not in ("gen_ai.agent.version", "gen_ai.agent.id", "gen_ai.conversation.id")
    ]
    span["attributes"] += fx.attrs(gen_ai__agent__version=version, gen_ai__conversation__id=conversation or trace)
    store.add_spans("default", decode(json.dumps(doc).encode(), "application/json").spans)


def _filter(**extra):
    return {
        "type": "azure_ai_trace_data_source",
        "trace_source": {
            "type": "agent_filter",
            "agent_name": "weather",
            "start_time": START,
            "end_time": START + 3600,
            **extra,
        },
    }


def test_agent_filter_window_edges_and_latest_version(store):
    _store_turn(store, "1" * 32, minutes=2)  # inside the first 5 minutes: maybe a partial conversation
    _store_turn(store, "2" * 32, minutes=20)
    _store_turn(store, "3" * 32, minutes=30, conversation="c3")
    _store_turn(store, "4" * 32, minutes=31, conversation="c3")
    _store_turn(store, "5" * 32, minutes=58)  # inside the last 5 minutes
    _store_turn(store, "6" * 32, minutes=40, version="2")
    resolved = resolve(store, "default", selection_of(_filter(agent_version="1")), "turn")
    assert resolved.trace_ids == ["2" * 32, "3" * 32, "4" * 32]
    assert resolved.notes == ["2 conversations active within 5 minutes of the window's edges left out"]
    latest = resolve(store, "default", selection_of(_filter()), "turn")
    assert latest.agent_version == "2" and latest.trace_ids == ["6" * 32]
    conversations = resolve(
        store, "default", selection_of(_filter(agent_version="1", max_traces=1, seed=3)), "conversation"
    )
    assert len(conversations.trace_ids) in (1, 2)  # one conversation: a single trace, or c3's two
    items = trace_dataset(
        store,
        "default",
        resolve(store, "default", selection_of(_filter(agent_version="1")), "conversation").options(),
        "conversation",
    )
    assert sorted(i["conversation_id"] for i in items.items()) == ["2" * 32, "c3"]


def test_trace_ids_and_conversation_ids(store):
    _store_turn(store, "7" * 32, minutes=1, conversation="conv-x")
    by_id = resolve(store, "default", selection_of({"type": "azure_ai_traces", "trace_ids": ["7" * 32]}), "turn")
    assert by_id.trace_ids == ["7" * 32]
    source = {
        "type": "azure_ai_trace_data_source_preview",
        "trace_source": {"type": "conversation_id_source", "conversation_ids": ["conv-x"]},
    }
    selection = selection_of(source, now=START + 100 * 3600)
    assert (selection.end_ns - selection.start_ns) // NS == 168 * 3600
    assert resolve(store, "default", selection, "conversation").trace_ids == ["7" * 32]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (_filter(end_time=START + 600), "at least 900 s"),
        (
            {
                "type": "azure_ai_trace_data_source",
                "trace_source": {"type": "agent_filter", "agent_id": "weather", "start_time": 0, "end_time": 1000},
            },
            "agent_id must be 'name:version'",
        ),
        (_filter(filter_strategy="best"), "random_sampling or smart_filtering"),
        ({"type": "azure_ai_traces"}, "needs trace_ids, agent_id"),
        (
            {"type": "azure_ai_trace_data_source", "trace_source": {"type": "trace_id_source", "trace_ids": []}},
            "non-empty list",
        ),
        ({"type": "azure_ai_traces", "agent_name": "w", "end_time": "yesterday"}, "not a time"),
    ],
)
def test_bad_trace_sources_are_refused_with_the_field(source, message):
    with pytest.raises(ConfigError, match=message):
        selection_of(source)
