"""Foundry's dataset version ids, ``azureai://accounts/assay/projects/<p>/data/<name>/versions/<v>``:
what ``datasets.upload_file()`` returns and the seed documents pass as a run's ``file_id``."""

from __future__ import annotations

ID_PREFIX = "azureai://accounts/assay/projects/"


def dataset_id(project: str, name: str, version: str) -> str:
    return f"{ID_PREFIX}{project}/data/{name}/versions/{version}"


def parse_dataset_id(value: str) -> tuple[str, str, str] | None:
    """(project, name, version) of a dataset version id, else None."""
    if not value.startswith(ID_PREFIX):
        return None
    project, data, name, versions, version = (value[len(ID_PREFIX) :].split("/") + [""] * 5)[:5]
    return (project, name, version) if data == "data" and versions == "versions" and name and version else None
