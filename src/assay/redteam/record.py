"""What the attack strategies share: an attack's record, its settings, and the attacker they drive
(``assay.redteam.attacks.RedTeamTarget`` is the one there is). Each strategy's module
(``goat``, ``search``) reads these, and ``attacks`` calls the strategies: this module sits under
both so neither has to import the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.llm.tally import UsageTally

DEFAULT_TURNS = {"multi_turn": 5, "crescendo": 10, "goat": 5}
"""Turn limits when the run sets none, as azure-ai-evaluation's orchestrators."""


@dataclass
class Record:
    """What one attack did: the conversation the target saw, and what was rolled back."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    backtracks: list[dict[str, str]] = field(default_factory=list)
    turns: int = 0
    ended: str = "single_turn"
    """``single_turn``, ``objective_achieved`` (the attacker's view), ``max_turns``, ``target_error``
    or ``content_filter`` (the platform's filter stopped a turn: the attack was blocked)."""
    error: dict[str, str] | None = None
    filtered: dict[str, Any] | None = None
    """The content filter's verdicts, when it stopped a turn (``Model``'s ``ContentFiltered``)."""
    decoded: tuple[str, str] | None = None
    """The reply with the attack's encodings undone, and which: what the judges read."""
    iterations: int = 0
    """Prompts an iterative attacker (PAIR, TAP) sent; pruned: refinements TAP dropped as off-topic."""
    pruned: int = 0
    best_score: int | None = None
    """The scorer's rating (1–10) of the attempt an iterative attacker kept."""
    attacker: UsageTally = field(default_factory=UsageTally)
    target: UsageTally = field(default_factory=UsageTally)
    techniques: list[str] = field(default_factory=list)
    """GOAT's technique of each turn."""
    replies: list[dict[str, Any]] = field(default_factory=list)
    """A stateful agent's replies, ``{id, messages_sent}`` each: a later turn continues from the
    newest one the conversation still holds (a rolled-back turn's is passed over)."""

    def reply(self) -> str:
        """The target's latest answer, as text."""
        return last_text(self.messages)

    def fresh(self) -> Record:
        """A new conversation whose calls count toward this attack's usage."""
        return Record(attacker=self.attacker, target=self.target)


@dataclass(frozen=True)
class AttackSettings:
    num_turns: int | None = None
    """Turn limit of multi-turn techniques; their own default when None."""
    max_backtracks: int = 5
    temperature: float = 0.7
    pair_iterations: int = 5
    """PAIR's refinements per attack (it stops early at a full score)."""
    tap_width: int = 3
    """TAP's leaves kept per level, its levels, and the refinements each leaf branches into."""
    tap_depth: int = 3
    tap_branching: int = 2
    max_attacker_calls: int | None = None
    """A budget per attack: an iterative or conversational attacker stops once it has asked this many
    times (its attempts so far are judged)."""
    max_attacker_cost_usd: float | None = None
    """The same in dollars, from the attacker model's price table (a model without one has no cost)."""


class Attacker(Protocol):
    """What a strategy needs of the attack it runs: the settings and purpose, the attacker model
    asked for structure (``ask``), the target sent the conversation so far (``send``), and the budget."""

    settings: AttackSettings
    about: str

    def spent(self, record: Record) -> bool: ...

    async def send(self, record: Record) -> bool: ...

    async def ask(
        self, parts: list[str], name: str, schema: dict[str, Any], record: Record, item: dict[str, Any] | None
    ) -> dict[str, Any]: ...


def last_text(messages: list[dict[str, Any]]) -> str:
    return next((str(m["content"]) for m in reversed(messages) if m["role"] == "assistant" and m.get("content")), "")
