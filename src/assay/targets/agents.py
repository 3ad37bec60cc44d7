"""Agents by name: an ``agents:`` section maps name and version to an HTTP endpoint and protocol.

    agents:
      support-agent:
        version: "2"
        endpoint: http://127.0.0.1:9000          # the agent's base URL
        protocol: responses                      # POST {endpoint}/responses (OpenAI Responses shape)
        headers: {x-team: support}
        tool_descriptions:                       # handed to tool evaluators as tool_definitions
          - {name: lookup_order, description: Find an order by id, parameters: {...}}
      desk:
        endpoint: http://127.0.0.1:9200
        stateful: true                           # keeps conversations: later turns send previous_response_id
      intake-bot:
        endpoint: http://127.0.0.1:9100
        protocol: invocations                    # POST {endpoint}/invocations with the free-form input
      planner:
        endpoint: http://127.0.0.1:9300          # serves /.well-known/agent-card.json
        protocol: a2a                            # Agent2Agent, through the a2a SDK (assay.targets.a2a)
      travel-agent:                              # started by assay, once per optimizer candidate
        command: [python, agent.py, --port, "{port}"]
        endpoint: http://127.0.0.1:{port}

An agent under optimization gets the candidate it is scored as. With ``command`` it is started
once per candidate with Foundry's ``OPTIMIZATION_CONFIG`` (and ``AGENT_OPTIMIZATION_CONFIG``) set,
so an agent that calls ``load_config()`` at start runs unchanged. Without, every request carries
it: the header ``x-optimization-candidate-id``, and the config itself (the same JSON) as the
Responses body's ``optimization_config`` or, for ``invocations``, base64url-encoded in the header
``x-optimization-config``.

A run names an agent as ``{type: azure_ai_agent, name, version?}``; without a version the highest
one configured is used.

A ``stateful`` Responses agent keeps each conversation itself (the Responses API's ``store``): in a
multi-turn conversation (a simulation, a multi-turn attack) the first turn sends the messages, and
each later one only what is new since the agent's last reply, with ``previous_response_id`` naming
that reply. Other agents get the whole conversation every turn.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.errors import ConfigError, ItemError, ModelUnreachable, UnknownAgentError, invalid_settings
from assay.llm.breaker import unreachable_at
from assay.mapping import Template
from assay.messages import is_tool_call_item, normalize_tool_definitions, to_response_input
from assay.outbound import OutboundRefused, PinnedTransport
from assay.targets.messages import InputMessages

if TYPE_CHECKING:
    import openai


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str = "1"
    endpoint: str
    protocol: Literal["responses", "invocations", "a2a"] = "responses"
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(default=120.0, gt=0)
    tool_descriptions: list[dict[str, Any]] = Field(default_factory=list)
    instructions: str = ""
    """The agent's own instructions, as far as assay is told them (synthetic queries are written from them)."""
    stateful: bool = False
    """The agent keeps conversations (Responses' ``previous_response_id``): later turns send only what is new."""
    command: list[str] | None = None
    """How to start the agent (``{port}`` becomes a free port, also in ``endpoint`` and ``$PORT``)."""
    startup_timeout: float = Field(default=30.0, gt=0)


def parse_agents(section: Any, where: str = "agents") -> list[AgentConfig]:
    if section is None:
        return []
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: expected a mapping of agent name to settings")
    agents = []
    for name, raw in section.items():
        if name == "__line__":
            continue
        versions = raw if isinstance(raw, list) else [raw]
        for settings in versions:
            if not isinstance(settings, dict):
                raise ConfigError(
                    f"{where}.{name}: expected settings such as {{endpoint: http://..., protocol: responses}}"
                )
            clean = {k: (str(v) if k == "version" else v) for k, v in settings.items() if k != "__line__"}
            try:
                agents.append(AgentConfig.model_validate({"name": str(name), **clean}))
            except ValidationError as exc:
                raise invalid_settings(f"{where}.{name}", exc) from None
    return agents


def find_agent(agents: list[AgentConfig], name: str, version: str | None) -> AgentConfig:
    matches = [a for a in agents if a.name == name and (version is None or a.version == str(version))]
    if not matches:
        known = ", ".join(f"{a.name}@{a.version}" for a in agents) or "none configured"
        raise UnknownAgentError(
            f"agent {name}{'@' + str(version) if version else ''} is not configured (agents: {known})",
            hint="add it to the agents: section (an endpoint that serves it), or make it a prompt agent of the "
            "project (project_client.agents.create_version, POST /api/projects/{project}/agents/{name}/versions)",
        )
    return max(matches, key=lambda a: [int(p) if p.isdigit() else 0 for p in a.version.split(".")])


class AgentTarget:
    """Calls one agent over HTTP; one client per event loop, closed when the run ends."""

    def __init__(
        self,
        agent: AgentConfig,
        input_messages: dict[str, Any] | None,
        tools: list[dict[str, Any]] | None = None,
        candidate: dict[str, Any] | None = None,
    ) -> None:
        """``candidate``: the optimizer's candidate configuration (Foundry's JSON), sent with each request."""
        self.agent, self.candidate = agent, candidate
        definitions = normalize_tool_definitions(tools or [], where=f"agent {agent.name}: tool_descriptions")
        self.tool_definitions = [dataclasses.asdict(t) for t in definitions]
        free = agent.protocol == "invocations" and input_messages is not None
        self.free_form = Template(input_messages, "input_messages") if free else None
        self.inputs = InputMessages(None if free else input_messages)
        self._clients: dict[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = {}

    def _client(self) -> openai.AsyncOpenAI:
        import openai

        loop = asyncio.get_running_loop()
        if loop not in self._clients:
            # Through the one outbound policy (the operator named the endpoint; in a server its
            # addresses are checked and the connection pinned), and no redirect is followed.
            transport = PinnedTransport(f"agent {self.agent.name}", named_by="operator")
            self._clients[loop] = openai.AsyncOpenAI(
                base_url=self.agent.endpoint,
                api_key="agent",
                max_retries=2,
                timeout=self.agent.timeout,
                default_headers={**self.agent.headers, **self._candidate_headers()},
                http_client=openai.DefaultAsyncHttpxClient(transport=transport, follow_redirects=False),
            )
        return self._clients[loop]

    async def ready(self) -> None:
        """Before the first item (a run's pre-flight): an agent nothing listens for is the run's
        error, said once with what to do, not a target error on every item."""
        reason = await unreachable_at(self.agent.endpoint)
        if reason is not None:
            where = f"agent {self.agent.name}@{self.agent.version} at {self.agent.endpoint}"
            raise ModelUnreachable(f"{where} is unreachable: {reason}", hint=AGENT_UNREACHABLE_HINT)

    async def aclose(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def __call__(self, item: dict[str, Any]) -> dict[str, Any]:
        import openai

        agent, started = self.agent, time.perf_counter()
        sent: Any = None
        try:
            if self.free_form is not None:
                sent = self.free_form.render(item, None)
                reply = await post_json(self._client(), "/invocations", sent)
                output_items: list[Any] = reply["output"] if isinstance(reply.get("output"), list) else []
                text = str(reply.get("output_text") or reply.get("message") or "")
            else:
                messages = self.inputs.render_messages(item)
                prior = item.get(PREVIOUS_RESPONSE) if agent.stateful else None
                carried: dict[str, Any] = {}
                if isinstance(prior, dict) and prior.get("id"):  # the agent has the rest: only what is new
                    messages, carried = messages[int(prior["messages_sent"]) :], {"previous_response_id": prior["id"]}
                sent = to_response_input(messages)
                body = {"model": agent.name, "input": sent, **carried, **self._candidate_body()}
                reply = await post_json(self._client(), "/responses", body)
                output_items = list(reply.get("output") or [])
                text = "".join(
                    p.get("text", "") if p.get("type") == "output_text" else str(p.get("refusal") or "")
                    for o in output_items
                    if o.get("type") == "message"
                    for p in o.get("content") or []
                    if p.get("type") in ("output_text", "refusal")  # a refusal is what it answered
                )
        except (openai.OpenAIError, ItemError, OutboundRefused) as exc:
            refused = exc if isinstance(exc, OutboundRefused) else exc.__cause__  # may come as "Connection error."
            message = getattr(exc, "message", None) or str(exc)
            if isinstance(refused, OutboundRefused):
                message = f"{refused.message} ({refused.hint})" if refused.hint else refused.message
            error = {"code": "target_error", "message": f"agent {agent.name}@{agent.version}: {message}"}
            return {
                "input": [],
                "output_text": None,
                "error": error,
                "latency_ms": round((time.perf_counter() - started) * 1000, 1),
            }
        tools = [o for o in output_items if is_tool_call_item(o)]  # its functions' and hosted tools' calls
        return {
            "input": sent if isinstance(sent, list) else [sent],
            "output_text": text,
            "output_items": output_items,
            "output_tools": tools,
            "tool_definitions": self.tool_definitions,
            "model": reply.get("model"),
            "usage": reply.get("usage"),
            "agent": f"{agent.name}@{agent.version}",
            "response_id": reply.get("id"),
            "error": None,
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
        }

    def _candidate_headers(self) -> dict[str, str]:
        if self.candidate is None:
            return {}
        headers = {CANDIDATE_HEADER: str(self.candidate["candidate_id"])}
        if self.agent.protocol == "invocations":  # its body is the user's own shape: the config rides beside it
            encoded = base64.urlsafe_b64encode(json.dumps(self.candidate).encode()).decode()
            headers[CONFIG_HEADER] = encoded
        return headers

    def _candidate_body(self) -> dict[str, Any]:
        if self.candidate is None:
            return {}
        cid = str(self.candidate["candidate_id"])
        return {"optimization_config": self.candidate, "metadata": {"optimization_candidate_id": cid}}


AGENT_UNREACHABLE_HINT = "start the agent, or correct its endpoint (agents: in eval.yaml or the --models file)"

PREVIOUS_RESPONSE = "__previous_response"
"""An item key a multi-turn caller sets: ``{id, messages_sent}``, the agent's last reply and how many
of the conversation's messages it already holds (``stateful`` agents only read it)."""
CANDIDATE_HEADER = "x-optimization-candidate-id"
CONFIG_HEADER = "x-optimization-config"


async def post_json(client: openai.AsyncOpenAI, path: str, body: Any) -> dict[str, Any]:
    """POST to an agent; its answer, which must be a JSON object (ItemError otherwise)."""
    raw: Any = await client.post(path, body=body, cast_to=object)
    if not isinstance(raw, dict):
        raise ItemError(f"the agent answered {type(raw).__name__}, not a JSON object")
    return raw
