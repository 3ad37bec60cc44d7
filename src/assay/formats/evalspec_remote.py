"""``azure.eval.yaml`` against a server's project (``--project-endpoint``): the same reconcile as
the local store, through the wire a Foundry project speaks (``assay serve``'s): datasets as
``{endpoint}/datasets/{name}/versions/{v}`` pointing at an uploaded file, evaluators as
``{endpoint}/evaluators/{name}/versions``, evals and runs through the OpenAI Evals API under
``{endpoint}/openai/v1``. A run starts on the server, which runs it; the command waits for its end.

An eval whose criteria changed is updated in place with assay's extension of ``POST
/evals/{id}`` (``testing_criteria``), as the local store does, so its runs stay together.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any
from urllib.parse import urlencode

from assay.errors import ConfigError
from assay.results.criterion import Criterion

POLL_SECONDS = 0.5
TERMINAL = ("completed", "failed", "canceled")


class RemoteProject:
    """A project on a server: ``http(s)://host/api/projects/<name>``."""

    def __init__(self, endpoint: str, api_key: str | None = None, timeout: float = 60.0) -> None:
        import openai

        self.endpoint = endpoint.rstrip("/")
        key = api_key or "none"
        # The project's own routes (datasets, evaluators) and its OpenAI Evals API, one client each.
        self.project = openai.OpenAI(base_url=self.endpoint, api_key=key, max_retries=2, timeout=timeout)
        self.openai = openai.OpenAI(base_url=f"{self.endpoint}/openai/v1", api_key=key, max_retries=2, timeout=timeout)

    def close(self) -> None:
        self.project.close()
        self.openai.close()

    def _json(self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None) -> Any:
        import openai

        if params:
            path = f"{path}?{urlencode(params)}"
        try:
            if method == "GET":
                return self.project.get(path, cast_to=object)
            call = self.project.put if method == "PUT" else self.project.post
            return call(path, body=body, cast_to=object)
        except openai.NotFoundError:
            if method == "GET":
                return None
            raise ConfigError(f"{method} {self.endpoint}{path}: not found") from None
        except openai.APIStatusError as exc:
            raise ConfigError(f"{method} {self.endpoint}{path}: {exc.status_code} {exc.message}") from None
        except openai.APIConnectionError as exc:
            raise ConfigError(f"{self.endpoint}: {exc}", hint="is assay serve running there?") from None

    # -- the Backend of assay.formats.evalspec ---------------------------------------------------------

    def dataset_digests(self, name: str) -> dict[str, str | None]:
        listed = self._json("GET", f"/datasets/{name}/versions") or {}
        digests: dict[str, str | None] = {}
        for version in listed.get("value") or []:
            uri = str(version.get("dataUri") or "")
            digests[str(version["version"])] = self._file_digest(uri) if uri.startswith(("file_", "file-")) else None
        return digests

    def _file_digest(self, file_id: str) -> str:
        return hashlib.sha256(self.openai.files.content(file_id).read()).hexdigest()

    def register_dataset(self, name: str, version: str, filename: str, content: bytes) -> None:
        uploaded = self.openai.files.create(file=(filename, content), purpose="evals")
        self._json("PUT", f"/datasets/{name}/versions/{version}", {"type": "uri_file", "dataUri": uploaded.id})

    def add_evaluator(self, name: str, kind: str, content: str) -> tuple[str, bool]:
        before = {
            str(v.get("version")) for v in (self._json("GET", f"/evaluators/{name}/versions") or {}).get("value") or []
        }
        field = {"rubric": "dimensions", "prompt": "prompt_text", "code": "code_text"}.get(kind)
        if field is None:
            raise ConfigError(f"evaluator {name}: a {kind} evaluator cannot be published to a server yet")
        value: Any = json.loads(content) if kind == "rubric" else content
        created = self._json("POST", f"/evaluators/{name}/versions", {"definition": {"type": kind, field: value}})
        version = str(created["version"])
        return version, version not in before

    def stored_eval(self, name: str) -> tuple[str, dict[str, Any]] | None:
        found = [
            e for e in self.openai.evals.list(limit=100, order="desc") if (e.metadata or {}).get("azd_eval") == name
        ]
        return (found[0].id, dict(found[0].metadata or {})) if found else None

    def create_eval(self, name: str, criteria: list[Criterion], metadata: dict[str, str], sample: bool) -> str:
        config = {"type": "custom", "item_schema": {"type": "object"}, "include_sample_schema": sample}
        created = self.openai.evals.create(
            name=name,
            data_source_config=config,  # type: ignore[arg-type]
            testing_criteria=criteria,  # type: ignore[arg-type]
            metadata=metadata,
        )
        return created.id

    def update_eval(self, eval_id: str, criteria: list[Criterion], metadata: dict[str, str]) -> None:
        self.openai.evals.update(eval_id, metadata=metadata, extra_body={"testing_criteria": criteria})

    # -- runs ------------------------------------------------------------------------------------

    def start_run(self, eval_id: str, name: str, data_source: dict[str, Any]) -> dict[str, Any]:
        created = self.openai.evals.runs.create(eval_id, name=name, data_source=data_source)  # type: ignore[arg-type]
        run: dict[str, Any] = created.model_dump()
        while run["status"] not in TERMINAL:
            time.sleep(POLL_SECONDS)  # the server runs it; this process only waits for the end
            run = self.openai.evals.runs.retrieve(run["id"], eval_id=eval_id).model_dump()
        return run

    def dataset_file(self, name: str, version: str) -> str:
        found = self._json("GET", f"/datasets/{name}/versions/{version}")
        uri = str((found or {}).get("dataUri") or "")
        if not uri.startswith(("file_", "file-")):
            raise ConfigError(f"dataset {name}@{version} on {self.endpoint} is not an uploaded file")
        return uri

    def runs(self, eval_id: str) -> list[dict[str, Any]]:
        return [r.model_dump() for r in self.openai.evals.runs.list(eval_id, limit=100, order="desc")]

    def output_items(self, eval_id: str, run_id: str) -> list[dict[str, Any]]:
        items = self.openai.evals.runs.output_items.list(run_id, eval_id=eval_id, limit=100, order="asc")
        return [i.model_dump() for i in items]

    def compare(self, eval_id: str, baseline: str, treatment: str) -> dict[str, Any]:
        found = self._json("GET", f"/openai/v1/evals/{eval_id}/runs/{treatment}/compare", params={"baseline": baseline})
        if found is None:
            raise ConfigError(f"run {treatment} or {baseline} not found on {self.endpoint}")
        return dict(found)
