"""A Foundry project's model deployments (``GET {project}/deployments``, the route
``AIProjectClient.deployments.list()`` reads), with an Entra ID token for the project's scope."""

from __future__ import annotations

import json
from typing import Any

from assay import outbound
from assay.errors import ConfigError
from assay.llm.config import CredentialKind, ModelConfig
from assay.llm.entra import token_source

API_VERSION = "v1"
MOST_PAGES = 50


def list_deployments(
    project: str, *, credential: CredentialKind = "default", tenant_id: str | None = None, timeout: float = 30.0
) -> list[dict[str, Any]]:
    """Every deployment of the project, as Foundry describes them (``name``, ``modelName``,
    ``modelPublisher``, ``modelVersion``, ``sku``, ``capabilities``)."""
    config = ModelConfig(name="project", model="-", project=project, credential=credential, tenant_id=tenant_id)
    url: str | None = f"{project.rstrip('/')}/deployments?api-version={API_VERSION}"
    found: list[dict[str, Any]] = []
    for _ in range(MOST_PAGES):
        if url is None:
            break
        token = token_source(config).token_now()
        headers = {"Authorization": f"Bearer {token.value}", "Accept": "application/json"}
        try:
            status, body = outbound.call(
                "GET", url, None, headers, timeout, "project deployments", named_by="setting", limit=16 * 1024**2
            )
        except OSError as exc:
            raise ConfigError(
                f"{project}: cannot reach the project ({exc})", hint="check the project endpoint"
            ) from None
        page = _page(project, status, body)
        found += [entry for entry in page.get("value") or [] if isinstance(entry, dict)]
        url = page.get("nextLink") if isinstance(page.get("nextLink"), str) else None
    return found


def _page(project: str, status: int, body: bytes) -> dict[str, Any]:
    try:
        page = json.loads(body)
    except ValueError:
        page = None
    if status != 200 or not isinstance(page, dict):
        error = page.get("error") if isinstance(page, dict) else None
        said = error.get("message") if isinstance(error, dict) else body[:200].decode(errors="replace")
        raise ConfigError(
            f"{project}: GET /deployments answered {status}: {said}",
            hint="the endpoint is https://<resource>.services.ai.azure.com/api/projects/<project>, and the "
            "signed-in identity needs a role on the project (Azure AI User)",
        )
    return page
