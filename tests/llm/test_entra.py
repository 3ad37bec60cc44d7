"""Entra ID with refresh: Azure models authenticate through azure-identity's credentials, faked
locally as azure-identity's own tests fake them (an ``az`` on PATH; App Service's managed identity
endpoint), against a server that takes only bearer tokens and expires them after a few seconds."""

from __future__ import annotations

import asyncio
import logging

import pytest

from assay.errors import ConfigError
from assay.llm import Model, ModelConfig, ModelError, ModelRegistry, entra
from assay.llm.registry import credential_check
from tests.support.entra import fake_az, no_cached_tokens  # noqa: F401 - an autouse fixture

AUDIENCE = "https://cognitiveservices.azure.com"


@pytest.fixture(autouse=True)
def fresh(llm):
    llm.reset()


@pytest.fixture
def az(tmp_path, monkeypatch):
    """The fake ``az`` on PATH, its tokens living 3 seconds, and the developer credentials of
    ``DefaultAzureCredential`` only (no managed identity endpoint is probed)."""
    fake = fake_az(tmp_path / "az")
    for name, value in fake.environment(lifetime=3).items():
        monkeypatch.setenv(name, value)
    return fake


def azure_model(llm, **settings) -> Model:
    config = {
        "name": "judge",
        "model": "my-deployment",
        "provider": "azure",
        "azure_endpoint": llm.base_url.removesuffix("/v1"),
        "api_version": "2024-10-21",
        **settings,
    }
    return Model(ModelConfig(**config), cache_mode="off")


async def ask_until(model: Model, done, most: int = 400, width: int = 4) -> list[str]:
    """Ask in a loop, ``width`` calls at a time, until ``done()``; every answer's text."""
    answers: list[str] = []
    try:
        while not done() and len(answers) < most:
            calls = (model.generate([{"role": "user", "content": "hi"}]) for _ in range(width))
            replies = await asyncio.gather(*calls)
            answers += [reply.text for reply in replies]
            await asyncio.sleep(0.2)
    finally:
        await model.aclose()
    return answers


def test_an_azure_model_without_a_key_uses_entra_id_and_refreshes_the_token_as_it_expires(llm, az, monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    llm.script(default={"content": "ok"}, entra={"audience": AUDIENCE})
    model = azure_model(llm)  # no key, no auth: Entra ID is the default for an Azure endpoint
    assert model.config.uses_entra and model.config.token_scope == AUDIENCE + "/.default"
    answers = asyncio.run(ask_until(model, lambda: len(az.minted()) >= 4))
    assert len(az.minted()) >= 4, "the 3-second token was refreshed at least three times"
    assert answers and set(answers) == {"ok"}  # no call failed
    stats = llm.stats()
    assert stats["tokens_seen"] >= 4 and stats["tokens_seen"] <= len(az.minted())
    assert len(answers) > 2 * len(az.minted())  # a token serves many calls: it is cached, not minted per call


def test_the_fast_transport_and_the_sdk_send_the_current_token(llm, az):
    llm.script(default={"content": "ok"}, entra={"audience": AUDIENCE})
    for transport in ("fast", "sdk"):
        model = azure_model(llm, auth="entra", transport=transport)
        asyncio.run(ask_until(model, lambda: False, most=4))
        sent = llm.stats()["last_request"]["authorization"]
        assert sent == f"Bearer {az.minted()[-1]}" and llm.stats()["last_request"]["api_key"] is None


def test_a_401_drops_the_token_and_the_call_is_retried_once_with_a_new_one(llm, az, monkeypatch):
    monkeypatch.setenv("FAKE_AZ_LIFETIME", "3600")  # only the revocation below makes a new token
    llm.script(default={"content": "ok"}, entra={"audience": AUDIENCE})
    model = azure_model(llm, auth="entra")
    registry = ModelRegistry([model.config])
    assert "AzureCliCredential" in asyncio.run(credential_check(registry.get("judge")))
    # The token the pre-flight obtained is revoked: the server refuses it before it expires.
    llm.script(default={"content": "ok"}, entra={"audience": AUDIENCE, "revoked": az.minted()})
    answers = asyncio.run(ask_until(model, lambda: False, most=1, width=1))
    assert answers == ["ok"] and llm.stats()["auth_refused"] == 1 and len(az.minted()) == 2


def test_a_token_the_server_keeps_refusing_fails_the_call_after_one_refresh(llm, az):
    llm.script(default={"content": "ok"}, entra={"audience": "https://another.audience"})
    model = azure_model(llm, auth="entra", max_retries=0)
    with pytest.raises(ModelError, match="401"):
        asyncio.run(ask_until(model, lambda: False, most=1, width=1))
    assert llm.stats()["auth_refused"] == 2 and len(az.minted()) == 2


def test_the_default_chain_answers_from_a_managed_identity_endpoint(llm, monkeypatch, tmp_path):
    """App Service's managed identity (``IDENTITY_ENDPOINT``/``IDENTITY_HEADER``), a production link
    of ``DefaultAzureCredential``'s chain, here served by the scripted server."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no az: only the managed identity can answer
    monkeypatch.setenv("AZURE_TOKEN_CREDENTIALS", "prod")
    monkeypatch.setenv("IDENTITY_ENDPOINT", f"http://127.0.0.1:{llm.port}/msi/token")
    monkeypatch.setenv("IDENTITY_HEADER", "local-identity")
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    llm.script(default={"content": "ok"}, entra={"audience": AUDIENCE, "lifetime": 3})
    model = azure_model(llm, auth="entra")
    described = asyncio.run(credential_check(model))
    assert "ManagedIdentityCredential" in described
    minted = lambda: llm.stats()["minted"]  # noqa: E731
    answers = asyncio.run(ask_until(model, lambda: minted() >= 3))
    assert set(answers) == {"ok"} and minted() >= 3 and llm.stats()["auth_refused"] == 0


def test_a_foundry_project_deployment_calls_the_projects_openai_route_with_its_scope(llm, az):
    project = f"http://127.0.0.1:{llm.port}/api/projects/demo"
    llm.script(default={"content": "ok"}, entra={"audience": "https://ai.azure.com"})
    config = ModelConfig(name="j", model="j", project=project, deployment="gpt-4.1")
    assert config.model == "gpt-4.1" and config.uses_entra and config.token_scope == "https://ai.azure.com/.default"
    answers = asyncio.run(ask_until(Model(config, cache_mode="off"), lambda: False, most=4))
    assert set(answers) == {"ok"}
    request = llm.stats()["last_request"]
    assert request["path"] == "/api/projects/demo/openai/v1/chat/completions" and not request["query"]
    assert llm.stats()["last"]["model"] == "gpt-4.1"


def test_when_no_credential_answers_the_pre_flight_says_why_and_names_no_secret(llm, monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("PATH", str(tmp_path))  # no az anywhere
    monkeypatch.setenv("AZURE_TOKEN_CREDENTIALS", "AzureCliCredential")
    caplog.set_level(logging.DEBUG)
    registry = ModelRegistry([azure_model(llm, auth="entra").config])
    registry.get("judge")
    with pytest.raises(ConfigError) as raised:
        asyncio.run(registry.check_reachable())
    message = str(raised.value)
    assert "no Entra ID token" in message and "Azure CLI not found" in message and "hint:" in message


def test_no_token_reaches_a_log(llm, az, caplog):
    caplog.set_level(logging.DEBUG)
    llm.script(default={"content": "ok"}, entra={"audience": AUDIENCE})
    model = azure_model(llm, auth="entra")
    asyncio.run(ask_until(model, lambda: len(az.minted()) >= 2))
    logged = caplog.text
    assert az.minted() and not any(token in logged for token in az.minted())
    assert not any(token.split("~")[-1] in logged for token in az.minted())


def test_a_token_source_is_never_shipped_to_another_process(llm, az):
    import pickle

    source = entra.token_source(azure_model(llm, auth="entra").config)
    with pytest.raises(TypeError, match="stays in its process"):
        pickle.dumps(source)
    assert pickle.loads(pickle.dumps(azure_model(llm, auth="entra").config)).uses_entra  # the config travels


def test_the_cli_offers_every_credential_kind():
    from typing import get_args

    from assay.cli.models import CREDENTIALS
    from assay.llm.config import CredentialKind

    assert CREDENTIALS == list(get_args(CredentialKind))


def test_an_embeddings_model_carries_the_token_too(llm, az):
    llm.script(entra={"audience": AUDIENCE})
    model = azure_model(llm, auth="entra", api="embeddings", model="text-embedding-3-small")

    async def embed():
        try:
            return await model.embed(["abc", "bcd"])
        finally:
            await model.aclose()

    vectors = asyncio.run(embed())
    assert len(vectors) == 2 and vectors[0][0] == 1.0  # the letter counts the server embeds with
    assert llm.stats()["last_request"]["authorization"] == f"Bearer {az.minted()[-1]}"


def test_the_guides_azure_block_runs_against_the_scripted_server(llm, monkeypatch, tmp_path):
    """The judges guide's models block, its endpoints pointed at the scripted server: the judge's
    managed identity (App Service's endpoint) and the project deployment both get tokens and answers."""
    from assay.cli.serve import models_from_file
    from tests.test_readme_snippets import blocks

    (block,) = blocks("Azure: Entra ID, project deployments, content filters", "yaml")
    endpoint, project = llm.base_url.removesuffix("/v1"), f"http://127.0.0.1:{llm.port}/api/projects/my-project"
    text = block.replace("https://my-resource.openai.azure.com", endpoint)
    text = text.replace("https://my-resource.services.ai.azure.com/api/projects/my-project", project)
    text = text.replace("managed_identity_client_id: 00000000-0000-0000-0000-000000000000", "")
    (tmp_path / "models.yaml").write_text(text)
    monkeypatch.setenv("PATH", str(tmp_path))  # no az: the managed identity answers
    monkeypatch.setenv("AZURE_TOKEN_CREDENTIALS", "prod")
    monkeypatch.setenv("IDENTITY_ENDPOINT", f"http://127.0.0.1:{llm.port}/msi/token")
    monkeypatch.setenv("IDENTITY_HEADER", "local-identity")
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    llm.script(default={"content": "ok"}, entra={})  # any token the server minted, for either audience
    registry = models_from_file(tmp_path / "models.yaml", cache_mode="off")
    assert registry.configs["foundry-judge"].token_scope == "https://ai.azure.com/.default"
    for name in ("judge", "foundry-judge"):
        assert asyncio.run(ask_until(registry.get(name), lambda: False, most=1, width=1)) == ["ok"]
    assert llm.stats()["minted"] == 2 and llm.stats()["auth_refused"] == 0  # one token per scope


def test_an_api_version_yaml_read_as_a_date_is_the_string_written():
    from assay.config.yamlfile import safe_load
    from assay.llm import parse_models

    (config,) = parse_models(
        safe_load("j: {provider: azure, azure_endpoint: 'https://x', api_version: 2024-10-21}", "m.yaml")
    )
    assert config.api_version == "2024-10-21"
