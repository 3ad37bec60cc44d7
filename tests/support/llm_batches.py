"""The Batch API of the scripted server (``tests.support.llm_server``): ``POST /v1/files`` (a
multipart upload), ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``
and ``GET /v1/files/{id}/content``, as OpenAI serves them.

Each request of a batch is answered as the same request sent alone would be (the script's rules,
faults and budgets), once the batch runs. With ``batch_hold: true`` in the script a batch stays
``in_progress`` until the script is replaced: a test can stop a run while its batch is out.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

Reply = tuple[int, Any, dict[str, str]]
Answer = Callable[[str, dict[str, Any]], Awaitable[Reply | None]]


class Batches:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created = 0
        """Batches created since the last reset: a resumed run must not make a second one."""
        self.batched_requests = 0
        self.tasks: set[asyncio.Task[None]] = set()

    def reset(self) -> None:
        self.files.clear()
        self.batches.clear()
        self.created = self.batched_requests = 0

    def upload(self, raw: bytes, content_type: str) -> Reply:
        message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        content, filename, purpose = b"", "upload.jsonl", ""
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name == "file":
                content = part.get_payload(decode=True) or b""
                filename = part.get_filename() or filename
            elif name == "purpose":
                purpose = (part.get_payload(decode=True) or b"").decode()
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = content
        return 200, _file(file_id, filename, purpose, len(content)), {}

    def create(self, body: dict[str, Any], answer: Answer, held: Callable[[], bool]) -> Reply:
        source = self.files.get(str(body.get("input_file_id")))
        if source is None:
            return 404, {"error": {"message": "no such file", "type": "invalid_request_error", "code": None}}, {}
        self.created += 1
        batch_id = f"batch_{self.created}"
        requests = [json.loads(line) for line in source.decode().splitlines() if line.strip()]
        batch = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body.get("endpoint"),
            "errors": None,
            "input_file_id": body["input_file_id"],
            "completion_window": body.get("completion_window", "24h"),
            "status": "in_progress",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": int(time.time()),
            "request_counts": {"total": len(requests), "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
        }
        self.batches[batch_id] = batch
        task = asyncio.get_running_loop().create_task(self._work(batch, requests, answer, held))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return 200, batch, {}

    async def _work(
        self, batch: dict[str, Any], requests: list[dict[str, Any]], answer: Answer, held: Callable[[], bool]
    ) -> None:
        while held() and batch["status"] == "in_progress":
            await asyncio.sleep(0.05)
        done, failed = [], []
        for request in requests:
            if batch["status"] != "in_progress":
                return
            self.batched_requests += 1
            reply = await answer(str(request.get("url")), dict(request.get("body") or {}))
            line = {"id": f"batch_req_{len(done) + len(failed)}", "custom_id": request.get("custom_id")}
            if reply is None or not isinstance(reply[1], dict):
                failed.append({**line, "response": None, "error": {"code": "server_error", "message": "no answer"}})
                continue
            status, payload, _ = reply
            line["response"] = {"status_code": status, "request_id": line["id"], "body": payload}
            line["error"] = None
            (done if status == 200 else failed).append(line)
        batch["output_file_id"] = self._keep(done)
        batch["error_file_id"] = self._keep(failed)
        batch["request_counts"] = {"total": len(requests), "completed": len(done), "failed": len(failed)}
        batch["status"] = "completed"
        batch["completed_at"] = int(time.time())

    def _keep(self, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return file_id

    def retrieve(self, batch_id: str) -> Reply:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {"error": {"message": f"no batch {batch_id}", "type": "invalid_request_error"}}, {}
        return 200, batch, {}

    def cancel(self, batch_id: str) -> Reply:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {"error": {"message": f"no batch {batch_id}", "type": "invalid_request_error"}}, {}
        if batch["status"] == "in_progress":
            batch["status"] = "cancelled"
            batch["cancelled_at"] = int(time.time())
        return 200, batch, {}

    def content(self, file_id: str) -> Reply:
        found = self.files.get(file_id)
        if found is None:
            return 404, {"error": {"message": f"no file {file_id}", "type": "invalid_request_error"}}, {}
        return 200, found.decode(), {}

    def route(
        self, method: str, path: str, body: dict[str, Any], answer: Answer, held: Callable[[], bool]
    ) -> Reply | None:
        parts = path.rstrip("/").split("/")
        if method == "POST" and path.endswith("/files") and "__multipart__" in body:
            return self.upload(body["__multipart__"], body["__content_type__"])
        if method == "POST" and path.endswith("/batches"):
            return self.create(body, answer, held)
        if len(parts) >= 2 and parts[-2] == "batches" and method == "GET":
            return self.retrieve(parts[-1])
        if len(parts) >= 3 and parts[-3] == "batches" and parts[-1] == "cancel" and method == "POST":
            return self.cancel(parts[-2])
        if len(parts) >= 3 and parts[-3] == "files" and parts[-1] == "content" and method == "GET":
            return self.content(parts[-2])
        return None


def _file(file_id: str, filename: str, purpose: str, size: int) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": filename,
        "purpose": purpose,
        "status": "processed",
    }
