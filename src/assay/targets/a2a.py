"""Agents over A2A (the Agent2Agent protocol, v1.0), through the official ``a2a-sdk`` (1.x): an
``agents:`` entry with ``protocol: a2a`` whose ``endpoint`` serves the agent card at
``/.well-known/agent-card.json`` (in eval.yaml also ``target: {type: a2a, url: ...}``).

Each item is sent as one user message (``message:send``, streamed when the card says the agent
streams). The reply is a message or a task. A task is read back whole when the exchange ends: its
artifacts' text, else its status message, else its last agent message, is the sample's
``output_text``; the agent's side of its history, its status message and its artifacts are the
``output_items``, as Responses-shaped messages; its id, context, state, artifacts and whole history
are kept under ``a2a``. A task that ``failed``, was
``rejected`` or ``canceled`` is the item's error. A2A agents keep their conversations (the
context): in a simulation or a multi-turn attack each later turn sends only the new message, in
the same context, and in the same task while that task waits for input (``input-required``).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.outbound import OutboundRefused, pinned_httpx_transport
from assay.targets.agents import PREVIOUS_RESPONSE, AgentConfig
from assay.targets.messages import InputMessages

if TYPE_CHECKING:
    from a2a.client import Client

    from assay.messages import Message

INSTALL_HINT = "pip install 'assay[a2a]'"
ENDED_BADLY = {"TASK_STATE_FAILED": "failed", "TASK_STATE_REJECTED": "rejected", "TASK_STATE_CANCELED": "canceled"}
WAITING = ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED")


class A2ATarget:
    """Calls one A2A agent; one SDK client per event loop, closed when the run ends."""

    def __init__(self, agent: AgentConfig, input_messages: dict[str, Any] | None) -> None:
        try:
            import a2a.client  # noqa: F401 - only to say what to install when it is missing
        except ModuleNotFoundError:
            raise ConfigError(f"agent {agent.name} speaks A2A, which needs the a2a SDK", hint=INSTALL_HINT) from None
        self.agent = agent
        self.inputs = InputMessages(input_messages)
        self._clients: dict[asyncio.AbstractEventLoop, tuple[Client, Any]] = {}
        self._making: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    async def _client(self) -> Client:
        import httpx
        from a2a.client import ClientConfig, create_client

        loop = asyncio.get_running_loop()
        making = self._making.setdefault(loop, asyncio.Lock())
        async with making:  # the items of a run ask at once: one client is made, the others wait for it
            if loop not in self._clients:
                # Through the one outbound policy (the operator named the endpoint), no redirect followed.
                http = httpx.AsyncClient(
                    transport=pinned_httpx_transport(f"agent {self.agent.name}", named_by="operator"),
                    headers=self.agent.headers,
                    timeout=self.agent.timeout,
                    follow_redirects=False,
                )
                try:
                    client = await create_client(self.agent.endpoint, client_config=ClientConfig(httpx_client=http))
                except BaseException:
                    await http.aclose()
                    raise
                self._clients[loop] = (client, http)
        return self._clients[loop][0]

    async def aclose(self) -> None:
        self._making.pop(asyncio.get_running_loop(), None)
        found = self._clients.pop(asyncio.get_running_loop(), None)
        if found is not None:
            client, http = found
            await client.close()
            await http.aclose()

    async def __call__(self, item: dict[str, Any]) -> dict[str, Any]:
        from a2a.client import A2AClientError

        started = time.perf_counter()
        messages = self.inputs.render_messages(item)
        prior = item.get(PREVIOUS_RESPONSE)
        context_id, task_id = None, None
        if isinstance(prior, dict) and prior.get("id"):  # the agent holds the context: only what is new
            context_id, _, task_id = str(prior["id"]).partition(" ")
            messages = messages[int(prior["messages_sent"]) :]
        sent = _text_of(messages)
        try:
            reply = await self._exchange(sent, context_id or None, task_id or None)
        except (A2AClientError, OutboundRefused, OSError, ValueError) as exc:
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            return self._failed(sent, message, started)
        except Exception as exc:  # noqa: BLE001 - the SDK's transports raise httpx's own errors too
            return self._failed(sent, f"{type(exc).__name__}: {exc}", started)
        error = None
        if reply["state"] in ENDED_BADLY:
            why = reply["text"] or "no reason given"
            error = {"code": "target_error", "message": f"the A2A task {ENDED_BADLY[reply['state']]}: {why}"}
        following = reply["context_id"] + (f" {reply['task_id']}" if reply["state"] in WAITING else "")
        return {
            "input": [{"role": "user", "content": sent}],
            "output_text": None if error else reply["text"],
            "output_items": reply["items"],
            "agent": f"{self.agent.name}@{self.agent.version}",
            "a2a": {key: reply[key] for key in ("task_id", "context_id", "state", "artifacts", "history")},
            "response_id": following if reply["context_id"] else None,
            "error": error,
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
        }

    async def _exchange(self, text: str, context_id: str | None, task_id: str | None) -> dict[str, Any]:
        """Send one user message and read what it came to: the task whole, or the agent's message."""
        from a2a.helpers import get_message_text, new_text_message
        from a2a.types import GetTaskRequest, Role, SendMessageRequest

        client = await self._client()
        message = new_text_message(text, role=Role.ROLE_USER, context_id=context_id, task_id=task_id)
        answered, found_task = None, None
        async for event in client.send_message(SendMessageRequest(message=message)):
            if event.HasField("message"):
                answered = event.message
            for field in ("task", "status_update", "artifact_update"):
                if event.HasField(field):
                    found_task = getattr(event, field).id if field == "task" else getattr(event, field).task_id
        if found_task is None:
            if answered is None:
                raise ValueError("the agent answered neither a message nor a task")
            said = get_message_text(answered)
            item = _message_item("assistant", said)
            return {
                "text": said,
                "items": [item],
                "task_id": None,
                "context_id": answered.context_id or (context_id or ""),
                "state": None,
                "artifacts": [],
                "history": [{"role": "user", "text": text}, {"role": "agent", "text": said}],
            }
        task = await client.get_task(GetTaskRequest(id=found_task))
        return _task_reply(task)

    def _failed(self, sent: str, message: str, started: float) -> dict[str, Any]:
        return {
            "input": [{"role": "user", "content": sent}],
            "output_text": None,
            "error": {"code": "target_error", "message": f"agent {self.agent.name}@{self.agent.version}: {message}"},
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
        }


def _task_reply(task: Any) -> dict[str, Any]:
    """What a finished (or waiting) task says: its text, its messages as output items, its artifacts."""
    from a2a.helpers import get_artifact_text, get_message_text
    from a2a.types import Role, TaskState

    artifacts = [{"name": a.name, "text": get_artifact_text(a)} for a in task.artifacts]
    history = [(m.role, get_message_text(m)) for m in task.history]
    status = get_message_text(task.status.message) if task.status.HasField("message") else ""
    agent_said = [said for role, said in history if role == Role.ROLE_AGENT and said]
    text = "\n".join(a["text"] for a in artifacts if a["text"]) or status or (agent_said[-1] if agent_said else "")
    items = [_message_item("assistant", said) for said in agent_said]  # the agent's side, as a Responses output
    if status and status not in agent_said:
        items.append(_message_item("assistant", status))
    items += [_message_item("assistant", a["text"]) for a in artifacts if a["text"]]
    return {
        "text": text,
        "items": items,
        "task_id": task.id,
        "context_id": task.context_id,
        "state": TaskState.Name(task.status.state),
        "artifacts": artifacts,
        "history": [{"role": "user" if role == Role.ROLE_USER else "agent", "text": said} for role, said in history],
    }


def _message_item(role: str, text: str) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _text_of(messages: list[Message]) -> str:
    """The messages as the one text an A2A message carries: a lone message as it is; several (a
    system prompt, a conversation so far), each after its role."""
    spoken = [(m.role, m.text) for m in messages if m.text]
    if len(spoken) == 1:
        return spoken[0][1]
    return "\n\n".join(f"{role}: {text}" for role, text in spoken)
