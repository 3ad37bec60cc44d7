"""``assay models``: what a models file configures, a Foundry project's deployments, and a pre-flight
of each model (its endpoint reachable, and which credential answers for it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from assay.cli.common import out

MODELS_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
CREDENTIALS = ["default", "azure_cli", "managed_identity", "workload_identity", "environment", "azure_developer_cli"]
"""``assay.llm.config.CredentialKind``, spelled out: ``--help`` loads no model code."""


@click.group("models")
def models_group() -> None:
    """Models: a models file's entries, a Foundry project's deployments, and how each authenticates."""


@models_group.command("list")
@click.option("--models", "models_file", type=MODELS_FILE, help="A models file (the models: and agents: of --models).")
@click.option("--project", help="A Foundry project endpoint: list its deployments (Entra ID).")
@click.option(
    "--credential",
    type=click.Choice(CREDENTIALS),
    default="default",
    show_default=True,
    help="With --project: the Entra ID credential.",
)
@click.option("--tenant-id", help="With --project: the tenant to ask a token of.")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of a table.")
def list_models(
    models_file: Path | None, project: str | None, credential: Any, tenant_id: str | None, as_json: bool
) -> None:
    """The models of --models, or the deployments of --project.

    A deployment is named in a models file as {project: URL, deployment: NAME}."""
    if project is not None:
        from assay.llm.deployments import list_deployments

        deployments = list_deployments(project, credential=credential, tenant_id=tenant_id)
        if as_json:
            out.print_json(data=deployments)
            return
        table = Table(title=f"deployments of {project}", title_justify="left")
        for column in ("name", "model", "version", "publisher", "sku"):
            table.add_column(column, overflow="fold")
        for entry in deployments:
            sku = entry["sku"] if isinstance(entry.get("sku"), dict) else {}
            table.add_row(
                str(entry.get("name", "")),
                str(entry.get("modelName", "")),
                str(entry.get("modelVersion", "")),
                str(entry.get("modelPublisher", "")),
                f"{sku.get('name', '')} {sku.get('capacity', '')}".strip(),
            )
        out.print(table)
        return
    if models_file is None:
        raise click.UsageError("give --models FILE or --project URL")
    from assay.cli.serve import models_from_file

    configs = list(models_from_file(models_file).configs.values())
    if as_json:
        out.print_json(data=[c.model_dump(exclude={"api_key"}, exclude_none=True) for c in configs])
        return
    table = Table(title=str(models_file), title_justify="left")
    for column in ("name", "model", "endpoint", "auth"):
        table.add_column(column, overflow="fold")
    for config in configs:
        auth = "entra" if config.uses_entra else "bearer" if config.bearer_token_env else "key"
        table.add_row(config.name, config.model, config.url, auth)
    out.print(table)


@models_group.command("check")
@click.option("--models", "models_file", type=MODELS_FILE, required=True, help="The models file to check.")
@click.argument("names", nargs=-1)
def check_models(models_file: Path, names: tuple[str, ...]) -> None:
    """Pre-flight: connect to each model's endpoint and obtain its credential (an Entra ID token:
    which credential answered, or why none did). Exit 1 when one fails. Nothing secret is printed."""
    from assay.cli.serve import models_from_file
    from assay.llm.breaker import unreachable
    from assay.llm.registry import credential_check
    from assay.sync import run_sync

    registry = models_from_file(models_file, cache_mode="off")
    chosen = list(names) or list(registry.configs)
    unknown = [name for name in chosen if name not in registry.configs]
    if unknown:
        raise click.UsageError(f"{', '.join(unknown)}: not in {models_file} ({', '.join(registry.configs)})")

    async def check() -> list[tuple[str, str, bool]]:
        rows = []
        for name in chosen:
            model = registry.get(name)
            down = await unreachable(model.config)
            if down is not None:
                rows.append((name, f"unreachable: {down}", False))
                continue
            try:
                rows.append((name, await credential_check(model), True))
            except Exception as exc:  # noqa: BLE001 - a user error of this model's, shown in its row
                rows.append((name, getattr(exc, "message", str(exc)), False))
        await registry.aclose()
        return rows

    rows = run_sync(check())
    for name, said, ok in rows:
        mark = "[green]ok[/]" if ok else "[red]failed[/]"
        out.print(f"{mark} {name} ({registry.configs[name].url}): {said}", soft_wrap=True)
    if not all(ok for _, _, ok in rows):
        raise SystemExit(1)
