"""A project's Application Insights connection, as Foundry's tracing and human-evaluation samples
use it: ``connections`` lists it, ``getConnectionWithCredentials`` gives its connection string, and
Azure Monitor's own exporter (``azure-monitor-opentelemetry-exporter``, what
``configure_azure_monitor`` installs) sends spans and ``gen_ai.evaluation.result`` events to it,
which land in the project as spans and labels."""

from __future__ import annotations

import json

import httpx2 as httpx
import pytest
from azure.monitor.opentelemetry.exporter import AzureMonitorLogExporter, AzureMonitorTraceExporter
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

PROJECT = "/api/projects/default"


@pytest.fixture(autouse=True)
def no_statsbeat(monkeypatch):
    """The exporter reports on itself (to Microsoft, and to the connection, from a thread that
    outlives the test's server) and fetches settings from Microsoft, unless told not to."""
    for switch in ("STATSBEAT_DISABLED_ALL", "SDKSTATS_DISABLED", "CONTROLPLANE_DISABLED"):
        monkeypatch.setenv(f"APPLICATIONINSIGHTS_{switch}", "true")


def connection_string(url: str, headers: dict[str, str] | None = None) -> str:
    listed = httpx.get(f"{url}{PROJECT}/connections", params={"connectionType": "AppInsights"}, headers=headers)
    (connection,) = listed.json()["value"]
    assert connection["type"] == "AppInsights" and "key" not in connection["credentials"]
    assert connection["id"].rsplit("/connections/", 1)[1] == connection["name"]
    with_key = httpx.post(
        f"{url}{PROJECT}/connections/{connection['name']}/getConnectionWithCredentials", headers=headers
    )
    assert with_key.status_code == 200, with_key.text
    return str(with_key.json()["credentials"]["key"])


def test_azure_monitors_exporter_sends_spans_and_human_evaluations_to_the_project(served):
    found = connection_string(served.url)
    assert found.startswith("InstrumentationKey=") and f"IngestionEndpoint={served.url}" in found
    assert connection_string(served.url) == found  # the project keeps its one key

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(
        SimpleSpanProcessor(AzureMonitorTraceExporter(connection_string=found, disable_offline_storage=True))
    )
    messages = [{"role": "user", "parts": [{"type": "text", "content": "Where is order 7?"}]}]
    with tracer_provider.get_tracer("shop").start_as_current_span("invoke_agent shop") as span:
        span.set_attribute("gen_ai.operation.name", "invoke_agent")
        span.set_attribute("gen_ai.agent.name", "shop")
        span.set_attribute("gen_ai.input.messages", json.dumps(messages))
        trace_id = format(span.get_span_context().trace_id, "032x")
    tracer_provider.shutdown()

    log_provider = LoggerProvider()
    log_provider.add_log_record_processor(
        SimpleLogRecordProcessor(AzureMonitorLogExporter(connection_string=found, disable_offline_storage=True))
    )
    event = {
        "microsoft.custom_event.name": "gen_ai.evaluation.result",
        "gen_ai.evaluation.name": "helpfulness",
        "gen_ai.evaluation.score.value": 4.0,
        "gen_ai.evaluation.score.label": "pass",
        "gen_ai.response.id": "resp_7",
    }
    log_provider.get_logger("feedback").emit(
        LogRecord(body="thumbs up", severity_number=SeverityNumber.INFO, attributes=event)
    )
    log_provider.shutdown()

    (stored,) = served.store.trace(trace_id, "default")
    assert stored.operation == "invoke_agent" and stored.agent_name == "shop"
    assert json.loads(stored.attributes["gen_ai.input.messages"]) == messages
    (label,) = served.store.labels_of("default", response_ids=["resp_7"])
    assert (label["criterion"], label["label"], label["score"], label["source"]) == (
        "helpfulness",
        "pass",
        4.0,
        "azure_monitor",
    )


def test_telemetry_with_a_key_no_project_gave_is_refused_where_keys_exist(served):
    key = served.store.create_key("default")
    headers = {"Authorization": f"Bearer {key}"}
    found = connection_string(served.url, headers)
    assert httpx.get(f"{served.url}{PROJECT}/connections").status_code == 401
    good = found.split(";")[0].split("=", 1)[1]
    envelope = {"name": "Microsoft.ApplicationInsights.Event", "time": "2026-12-06T10:00:00.0000000Z", "tags": {}}
    envelope["data"] = {"baseType": "EventData", "baseData": {"ver": 2, "name": "x", "properties": {}}}
    accepted = httpx.post(f"{served.url}/v2.1/track", json=[{**envelope, "iKey": good}])
    assert accepted.status_code == 200 and accepted.json()["itemsAccepted"] == 1
    refused = httpx.post(
        f"{served.url}/v2.1/track", json=[{**envelope, "iKey": "00000000-0000-0000-0000-000000000000"}]
    )
    assert refused.status_code == 400 and "Invalid instrumentation key" in refused.text
    assert httpx.post(f"{served.url}/v2.1/track", content=b"not json").status_code == 400
