"""The simulated user: a model that plays the person a scenario describes, one message at a time.

Its instructions are ours, in the spirit of tau2-bench's user simulator: stay inside the scenario,
say only what the person would say now, give details only when asked, never invent facts the
scenario does not give, and end the conversation (the stop token) once the goal is reached or
clearly cannot be. Each call asks for ``{"message": str, "done": bool}`` as a JSON schema and falls
back to reading plain text, where the stop token ends the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.errors import ItemError
from assay.llm import Model, ModelError
from assay.llm.structured import ask_structured
from assay.llm.tally import UsageTally

STOP = "###STOP###"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "description": "what the user says next (empty when done)"},
        "done": {"type": "boolean", "description": "true when the user ends the conversation"},
    },
    "required": ["message", "done"],
    "additionalProperties": False,
}
INSTRUCTIONS = """You are role-playing a user who is talking to an AI agent. You are the user, never the agent.

The situation you are in:
{scenario}

How to play the part:
- Write only the user's next message: short and natural, one thing at a time, the way a real person types.
- Pursue the goal of the situation. Give a detail (a number, a name, a date) only when the agent asks for it
  or when the person would naturally volunteer it, and only if the situation gives it. Never invent facts the
  situation does not give; if asked for something you do not know, say you do not know it.
- Do not explain the situation to the agent or mention that you are simulated, and never answer as the agent.
- {pacing}
- When your goal has been met, or it clearly cannot be met, or the agent ends the exchange, finish: reply with
  done set to true (in plain text, write {stop} instead of a message).

Reply with a JSON object: {{"message": "<your next message>", "done": false}}, or {{"message": "", "done": true}}."""


@dataclass(frozen=True)
class UserTurn:
    text: str
    done: bool


@dataclass
class SimulatedUser:
    model: Model
    scenario: str
    desired_turns: int | None = None
    sampling: dict[str, Any] | None = None
    seed: int | None = None
    usage: UsageTally = field(default_factory=UsageTally)
    """Every call this user's model made."""

    def prompt(self, transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
        pacing = (
            f"Aim to reach your goal in about {self.desired_turns} messages of yours, neither rushing nor dragging on."
            if self.desired_turns
            else "Take as many messages as a real person would, and no more."
        )
        system = INSTRUCTIONS.format(scenario=self.scenario.strip(), pacing=pacing, stop=STOP)
        if not transcript:
            ask = "The conversation has not started. Write your first message to the agent."
        else:
            lines = "\n".join(f"{'YOU' if m['role'] == 'user' else 'AGENT'}: {m['content']}" for m in transcript)
            ask = f"The conversation so far:\n{lines}\n\nWrite your next message, or finish."
        return [{"role": "system", "content": system}, {"role": "user", "content": ask}]

    async def next_turn(self, transcript: list[dict[str, Any]]) -> UserTurn:
        """The user's next message given the text of the conversation so far (user and agent messages)."""
        sampling = dict(self.sampling or {})
        if "max_completion_tokens" in sampling:
            sampling["max_tokens"] = sampling.pop("max_completion_tokens")
        params = {k: v for k, v in sampling.items() if k in ("temperature", "top_p", "max_tokens")}
        if self.seed is not None:
            params["seed"] = self.seed
        try:
            answer, completion = await ask_structured(
                self.model, self.prompt(transcript), "user_turn", SCHEMA, **params
            )
        except ModelError as exc:
            raise SimulatorError(f"the simulated user's model failed: {exc}") from None
        self.usage.add_completion(completion)
        if answer is not None and isinstance(answer.get("message"), str):
            text = answer["message"].strip()
            done = answer.get("done") is True or STOP in text
        else:
            text, done = completion.text.strip(), STOP in completion.text
        text = text.replace(STOP, "").strip()
        if not text and not done:
            raise SimulatorError("the simulated user answered with nothing")
        return UserTurn(text, done)


class SimulatorError(ItemError):
    code = "simulator_error"
