"""Foundry's SDK (``azure-ai-projects``) driving ``assay serve --tls`` exactly as Microsoft's docs
do: ``AIProjectClient(endpoint, credential)``, ``datasets.upload_file()``, its id as the run's
``file_id``, ``evaluators.list()``, ``get_openai_client().evals...``. The only setup is the
environment telling Python's clients to trust the server's certificate (SSL_CERT_FILE for openai,
REQUESTS_CA_BUNDLE for azure-core), as the README says; no call takes a workaround."""

from __future__ import annotations

import contextlib
import gc
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.ai.projects import AIProjectClient
from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError, ResourceExistsError
from azure.storage.blob import ContainerClient

from assay.store import Store
from tests.api.test_seed_conversation_snippet import ROWS, judge_rules, run_seed_snippet
from tests.support.fixtures import start_llm_server
from tests.support.servers import start_assay_server


def release(error: BaseException) -> None:
    """azure-core keeps an error's response, and with it a pooled TLS socket, open until the
    exception is collected, which then warns in whichever test the collector runs: close it now."""
    response = getattr(error, "response", None)
    inner = getattr(response, "internal_response", None)
    if inner is not None:
        inner.close()
    if isinstance(error, urllib.error.HTTPError):
        error.close()


class StaticToken:
    """A TokenCredential holding an assay API key (where DefaultAzureCredential would go)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
        return AccessToken(self.token, int(time.time()) + 3600)


@contextlib.contextmanager
def foundry_server(
    home: Path, rules: list[dict[str, Any]], model: str = "judge", default: dict[str, Any] | None = None
) -> Iterator[dict[str, Any]]:
    """`assay serve --tls` with an API key for project ``p`` and one model, ``model``, played by a
    provider scripted with ``rules`` (and ``default`` for a request no rule matches), which is
    yielded too (``provider``) for a test that holds its answers."""
    provider = start_llm_server()
    provider.script(rules=rules, **({"default": default} if default is not None else {}))
    models = home / "models.yaml"
    models.write_text(f"models:\n  {model}: {{model: m, base_url: '{provider.base_url}', api_key: t}}\n")
    store = Store(f"sqlite:///{home / 'assay.db'}")
    key = store.create_key("p")
    store.close()
    process, client = start_assay_server(home, models, tls=True, key=key)
    port = client.base_url.port
    try:
        yield {
            "endpoint": f"https://127.0.0.1:{port}/api/projects/p",
            "key": key,
            "cert": home / "tls" / "cert.pem",
            "provider": provider,
        }
    finally:
        client.close()
        # An azure-core error keeps its response, and so its pooled TLS socket, alive until the
        # exception is collected; uvicorn would wait up to 30 s for that socket's close_notify.
        gc.collect()
        process.terminate()
        process.wait(timeout=20)
        provider.stop()


@contextlib.contextmanager
def foundry_client(served: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[AIProjectClient]:
    """Foundry's client on ``served``, trusting its certificate as the README says."""
    monkeypatch.setenv("SSL_CERT_FILE", str(served["cert"]))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(served["cert"]))
    with AIProjectClient(endpoint=served["endpoint"], credential=StaticToken(served["key"])) as client:
        yield client
    gc.collect()  # a socket this test left open warns here, in this test, not in a later one


@pytest.fixture(scope="module")
def foundry(tmp_path_factory):
    with foundry_server(tmp_path_factory.mktemp("foundry"), judge_rules()) as served:
        yield served


@pytest.fixture
def project_client(foundry, monkeypatch):
    with foundry_client(foundry, monkeypatch) as client:
        yield client


def test_the_seed_flow_through_foundrys_sdk(project_client):
    data_id = project_client.datasets.upload_file(
        name="multiturn-conversation-data", version="1", file_path=str(ROWS)
    ).id
    assert data_id == "azureai://accounts/assay/projects/p/data/multiturn-conversation-data/versions/1"
    names = {e.name for e in project_client.evaluators.list()}
    assert {"builtin.groundedness", "builtin.task_completion", "builtin.coherence"} <= names

    with project_client.get_openai_client() as openai_client:
        run_seed_snippet(openai_client, data_id)


def test_datasets_get_list_and_credentials_read_back_the_upload(project_client, tmp_path):
    source = tmp_path / "rows.jsonl"
    source.write_bytes(b'{"query": "q1"}\n{"query": "q2"}\n')
    uploaded = project_client.datasets.upload_file(name="rows", version="3", file_path=str(source))
    fetched = project_client.datasets.get(name="rows", version="3")
    assert (fetched.id, fetched.name, fetched.version) == (uploaded.id, "rows", "3")
    assert "rows" in {d.name for d in project_client.datasets.list()}
    assert [v.version for v in project_client.datasets.list_versions(name="rows")] == ["3"]
    credential = project_client.datasets.get_credentials(name="rows", version="3")
    with ContainerClient.from_container_url(credential.blob_reference.credential.sas_uri) as container:
        assert container.download_blob("rows.jsonl").readall() == source.read_bytes()
        # List Blobs, as Foundry's dataset samples read a dataset back
        assert list(container.list_blob_names()) == ["rows.jsonl"]
        assert list(container.list_blob_names(name_starts_with="rows")) == ["rows.jsonl"]
        assert list(container.list_blob_names(name_starts_with="other")) == []
        (listed,) = container.list_blobs()
        assert listed.size == len(source.read_bytes())
    with pytest.raises(ResourceExistsError) as exists:  # upload_file never overwrites a blob silently
        with ContainerClient.from_container_url(credential.blob_reference.credential.sas_uri) as container:
            container.upload_blob("rows.jsonl", b"other")
    release(exists.value)


def test_a_large_upload_goes_in_blocks(project_client, tmp_path):
    """Past ``max_single_put_size`` azure-storage-blob uses Put Block and Put Block List."""
    from azure.ai.projects.models import PendingUploadRequest

    body = b"".join(f'{{"query": "question {i}", "padding": "{"x" * 200}"}}\n'.encode() for i in range(200))
    pending = project_client.datasets.pending_upload(
        name="big", version="1", pending_upload_request=PendingUploadRequest()
    )
    sas = pending.blob_reference.credential.sas_uri
    with ContainerClient.from_container_url(sas, max_single_put_size=4096, max_block_size=4096) as container:
        container.upload_blob("big.jsonl", body)
        blob_url = container.get_blob_client("big.jsonl").url.split("?")[0]
        assert container.download_blob("big.jsonl").readall() == body
    from azure.ai.projects.models import FileDatasetVersion

    version = project_client.datasets.create_or_update(
        name="big", version="1", dataset_version=FileDatasetVersion(data_uri=blob_url)
    )
    assert version.id.endswith("/data/big/versions/1")


def test_a_bad_signature_or_blob_is_refused(project_client, foundry):
    from azure.ai.projects.models import PendingUploadRequest

    pending = project_client.datasets.pending_upload(
        name="x", version="1", pending_upload_request=PendingUploadRequest()
    )
    forged = pending.blob_reference.credential.sas_uri.split("sig=")[0] + "sig=forged"
    with pytest.raises(HttpResponseError) as refused:
        with ContainerClient.from_container_url(forged) as container:
            container.upload_blob("x.jsonl", b"{}\n")
    assert refused.value.status_code == 403 and refused.value.error_code == "AuthenticationFailed"
    release(refused.value)
    hostile = pending.blob_reference.blob_uri + "/x.jsonl?sig=" + urllib.parse.quote("é\u2603")
    request = urllib.request.Request(hostile, data=b"{}", method="PUT")
    with pytest.raises(urllib.error.HTTPError) as odd:
        urllib.request.urlopen(request, context=ssl.create_default_context(cafile=str(foundry["cert"])))
    assert odd.value.code == 403
    release(odd.value)
    from azure.ai.projects.models import FileDatasetVersion

    missing = pending.blob_reference.blob_uri + "/never-uploaded.jsonl"
    with pytest.raises(HttpResponseError, match="no blob was uploaded") as unknown:
        project_client.datasets.create_or_update(
            name="x", version="1", dataset_version=FileDatasetVersion(data_uri=missing)
        )
    release(unknown.value)


def test_the_certificate_is_made_once_and_reused(foundry):
    from assay.api.tls import self_signed

    cert = Path(foundry["cert"])
    before = cert.read_bytes()
    assert self_signed("127.0.0.1", cert.parent)[0] == cert and cert.read_bytes() == before
    assert (cert.parent / "key.pem").stat().st_mode & 0o077 == 0


def test_a_custom_evaluator_version_is_made_changed_and_deleted_through_the_sdk(project_client):
    dimensions = [{"id": "kindness", "description": "The answer is kind", "weight": 3}]
    created = project_client.evaluators.create_version(
        name="tone_rubric",
        evaluator_version={
            "evaluator_type": "custom",
            "categories": ["quality"],
            "display_name": "Tone",
            "description": "Kind and clear",
            "metadata": {"owner": "support"},
            "definition": {"type": "rubric", "dimensions": dimensions},
        },
    )
    assert (created.name, created.version, created.display_name, created.metadata) == (
        "tone_rubric",
        "1",
        "Tone",
        {"owner": "support"},
    )
    assert created.definition["type"] == "rubric" and created.definition["dimensions"][0]["id"] == "kindness"

    # The SDK's update sends the whole version back: its definition stays, the rest changes in place.
    fetched = project_client.evaluators.get_version(name="tone_rubric", version="1")
    changed = {**fetched.as_dict(), "description": "Kind, clear and brief", "tags": {"team": "support"}}
    changed["definition"] = {"type": "rubric", "dimensions": [{"id": "other", "description": "x", "weight": 1}]}
    updated = project_client.evaluators.update_version(name="tone_rubric", version="1", evaluator_version=changed)
    assert (updated.description, updated.tags, updated.display_name) == (
        "Kind, clear and brief",
        {"team": "support"},
        "Tone",
    )
    assert updated.definition["dimensions"][0]["id"] == "kindness"
    listed = {e.name: e for e in project_client.evaluators.list(type="custom")}
    assert listed["tone_rubric"].description == "Kind, clear and brief"

    with pytest.raises(HttpResponseError) as builtin:
        project_client.evaluators.delete_version(name="builtin.coherence", version="1")
    assert builtin.value.status_code == 400 and "built-in" in str(builtin.value)
    release(builtin.value)
    project_client.evaluators.delete_version(name="tone_rubric", version="1")
    with pytest.raises(HttpResponseError) as gone:
        project_client.evaluators.get_version(name="tone_rubric", version="1")
    assert gone.value.status_code == 404
    release(gone.value)


def test_the_projects_deployments_are_the_servers_models(project_client):
    names = [d.name for d in project_client.deployments.list()]
    assert names == ["judge"]
    judge = project_client.deployments.get("judge")
    assert judge.model_name == "m" and judge.type == "ModelDeployment"
    with pytest.raises(HttpResponseError) as missing:
        project_client.deployments.get("nope")
    release(missing.value)
    assert missing.value.status_code == 404


def test_assay_lists_and_calls_a_projects_deployment_with_entra_id(foundry, tmp_path):
    """``assay models list --project`` reads the deployments with an Entra ID token (from the Azure
    CLI, faked), and a models entry ``{project, deployment}`` calls the deployment through the
    project's /openai/v1 route: here the server's capture pass-through, to its judge."""
    import json
    import os
    import subprocess
    import sys

    from tests.support.entra import fake_az

    az = fake_az(tmp_path / "az")
    env = {
        **{k: v for k, v in os.environ.items() if k != "ASSAY_DATABASE_URL"},
        **az.environment(lifetime=3600, token=foundry["key"]),  # assay serve takes its API key as the bearer
        "SSL_CERT_FILE": str(foundry["cert"]),
        "ASSAY_HOME": str(tmp_path / "home"),
    }

    def assay(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "assay", *args]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    listed = assay("models", "list", "--project", foundry["endpoint"], "--json")
    assert listed.returncode == 0, listed.stderr
    assert [d["name"] for d in json.loads(listed.stdout)] == ["judge"]
    (tmp_path / "models.yaml").write_text(
        f"models:\n  project-judge: {{project: '{foundry['endpoint']}', deployment: judge}}\n"
    )
    checked = assay("models", "check", "--models", "models.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Entra ID token from AzureCliCredential" in checked.stdout and "ai.azure.com/.default" in checked.stdout
    assert foundry["key"] not in checked.stdout + checked.stderr and az.minted()
    (tmp_path / "data.jsonl").write_text('{"query": "Why?", "response": "Because."}\n')
    (tmp_path / "eval.yaml").write_text(
        "name: project\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  judge: {{project: '{foundry['endpoint']}', deployment: judge}}\n"
        "evaluators:\n  - name: coherence\n    evaluator_name: builtin.coherence\n"
        "    initialization_parameters: {model: judge}\n"
    )
    ran = assay("run", "eval.yaml")  # the module's provider judges with its rules (coherence among them)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout and "0 errored" in ran.stdout, ran.stdout
