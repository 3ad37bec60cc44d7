"""Prompt agents a project made through Foundry's agents API: a model, its instructions and sampling,
each version kept (``POST /agents/{name}/versions``)."""

from __future__ import annotations

from typing import Any

from assay.store import tables as t
from assay.store.base import StoreBase, now
from assay.store.versioned import Versions

AGENTS = Versions(t.agents, "agent", "create it with project_client.agents.create_version(), or name it under agents:")


class AgentsStore(StoreBase):
    def save_prompt_agent(self, project: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` (``definition``, ``description``, ``metadata``) as the next version of agent ``name``."""
        return AGENTS.save(self.engine, project, name, body, now())

    def find_prompt_agent(self, project: str, name: str, version: str | None = None) -> dict[str, Any] | None:
        """A version of agent ``name``, or its latest; None when the project has none."""
        with self.engine.connect() as conn:
            return AGENTS.find(conn, project, name, version)

    def get_prompt_agent(self, project: str, name: str, version: str | None = None) -> dict[str, Any]:
        found = self.find_prompt_agent(project, name, version)
        if found is None:
            raise AGENTS.missing(name, version)
        return found

    def prompt_agent_versions(self, project: str, name: str) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            return AGENTS.all_of(conn, project, name)

    def list_prompt_agents(self, project: str) -> list[dict[str, Any]]:
        """The latest version of each agent, by name."""
        with self.engine.connect() as conn:
            return AGENTS.latest(conn, project)

    def delete_prompt_agent(self, project: str, name: str, version: str | None = None) -> None:
        """Delete one version of agent ``name``, or every version."""
        self.get_prompt_agent(project, name, version)
        with self.engine.begin() as conn:
            AGENTS.delete(conn, project, name, None if version is None else int(version))
