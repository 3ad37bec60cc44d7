"""assay's own verdicts as OpenTelemetry ``gen_ai.evaluation.result`` events.

With ``ASSAY_EVALUATION_EVENTS_ENDPOINT`` set (an OTLP/HTTP logs endpoint, such as a collector's
``http://host:4318/v1/logs``), every run that completes sends each completed result as one event:
the evaluation's name, score, label and explanation, the response it judged, and the run and item
it belongs to. An item made from a trace span is parented to that span (its trace and span ids),
so a tracing backend shows the verdict on the turn it judged. The actor is ``evaluator``: a
receiver (assay's own ``/v1/logs`` included) never takes these for human labels.

Sending is best effort: a collector that is down is logged and the run stays completed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from assay.outbound import OutboundRefused, post
from assay.review.labels import ACTOR_ATTRIBUTE, EVENT_NAME, item_keys

if TYPE_CHECKING:
    from assay.results import Result
    from assay.results.stored import Run
    from assay.store import Store

log = logging.getLogger(__name__)
BATCH = 512
"""Events per export request."""


def export_run_verdicts(store: Store, run_id: str, endpoint: str) -> int:
    """Send the run's completed results to ``endpoint``; how many events were delivered."""
    run = store.get_run(run_id)
    sent = 0
    batch: list[LogRecord] = []
    for record in _records(store, run):
        batch.append(record)
        if len(batch) == BATCH:
            sent += _post(endpoint, batch)
            batch = []
    if batch:
        sent += _post(endpoint, batch)
    return sent


def _records(store: Store, run: Run) -> Iterator[LogRecord]:
    stamp = time.time_ns()
    for output in store.iter_output_items(run.id):
        item = output.datasource_item
        traces, responses = item_keys(item)
        trace_id = str(item["trace_id"]) if item.get("trace_id") else traces[0] if len(traces) == 1 else None
        span_id = str(item["span_id"]) if trace_id and item.get("span_id") else None
        for result in output.results:
            if result.status != "completed":
                continue
            attributes: dict[str, Any] = {
                "gen_ai.evaluation.name": result.name,
                "gen_ai.evaluation.score.label": _label(result),
                "gen_ai.evaluation.explanation": result.reason,
                "gen_ai.response.id": responses[0] if responses else None,
                ACTOR_ATTRIBUTE: "evaluator",
                "assay.run.id": run.id,
                "assay.eval.id": run.eval_id,
                "assay.datasource_item_id": output.datasource_item_id,
            }
            if result.score is not None:
                attributes["gen_ai.evaluation.score.value"] = float(result.score)
            yield LogRecord(
                time_unix_nano=stamp,
                observed_time_unix_nano=stamp,
                event_name=EVENT_NAME,
                attributes=[_attribute(k, v) for k, v in attributes.items() if v is not None],
                trace_id=_hex_bytes(trace_id, 16),
                span_id=_hex_bytes(span_id, 8),
            )


def _label(result: Result) -> str | None:
    if result.label is not None:
        return result.label
    return None if result.passed is None else "pass" if result.passed else "fail"


def _attribute(key: str, value: Any) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


def _hex_bytes(value: str | None, size: int) -> bytes:
    """An id's bytes; none (empty) when it is not ``size`` bytes of hex."""
    try:
        found = bytes.fromhex(value or "")
    except ValueError:
        return b""
    return found if len(found) == size else b""


def _post(endpoint: str, records: list[LogRecord]) -> int:
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    resource_logs.resource.attributes.append(_attribute("service.name", "assay"))
    scope_logs = resource_logs.scope_logs.add()
    scope_logs.scope.name = "assay"
    scope_logs.log_records.extend(records)
    body = request.SerializeToString()
    headers = {"content-type": "application/x-protobuf"}
    try:  # the operator's own endpoint: not under the allow-list, but no redirect is followed
        status, _ = post(endpoint, body, headers, timeout=10, purpose="evaluation events", named_by="setting")
    except (OutboundRefused, OSError) as exc:
        log.warning("evaluation events to %s: %s", endpoint, exc)
        return 0
    if status >= 300:
        log.warning("evaluation events to %s: the collector answered %s", endpoint, status)
        return 0
    return len(records)
