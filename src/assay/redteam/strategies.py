"""Attack strategies: how an objective is delivered. A technique is one strategy or a composition
of two (``tense_base64``: rewritten in the past tense, then base64-encoded), with the complexity
azure-ai-evaluation gives it: ``baseline`` (the objective as written, always included), ``easy``
(encodings, Jailbreak, IndirectJailbreak), ``moderate`` (Tense), ``difficult`` (compositions,
MultiTurn, Crescendo, and assay's iterative PAIR and TAP and conversational GOAT). The bundles ``easy`` (Base64, Flip,
Morse), ``moderate`` (Tense) and ``difficult`` (Tense then Base64) expand as in the SDK.

Names come in every spelling the SDKs use: ``Flip`` and ``flip``, ``CharSwap``, ``char_swap`` and
``character_swap``, ``AnsiAttack`` and the old ``ansii_attack``, ``IndirectAttack``, ``Multiturn``,
``AttackStrategy.BASE64``; a composition is a list of two (``["tense", "base64"]``, the SDK's
``Compose``) or their names joined by ``_``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from assay.errors import ConfigError
from assay.redteam.converters import CONVERTERS

Complexity = Literal["baseline", "easy", "moderate", "difficult"]
COMPLEXITIES: tuple[Complexity, ...] = ("baseline", "easy", "moderate", "difficult")
MULTI_TURN = ("multi_turn", "crescendo", "goat")
ITERATIVE = ("pair", "tap")
MODEL_REWRITES = ("tense", "translate")
SINGLE = (*CONVERTERS, *MODEL_REWRITES)
NAMES = ("baseline", *SINGLE, *MULTI_TURN, *ITERATIVE)
BUNDLES: dict[str, list[Any]] = {
    "easy": ["base64", "flip", "morse"],
    "moderate": ["tense"],
    "difficult": [["tense", "base64"]],
}
ALIASES = {
    "charspace": "character_space",
    "characterswap": "char_swap",
    "ansiiattack": "ansi_attack",
    "indirectattack": "indirect_jailbreak",
    "xpia": "indirect_jailbreak",
    "upia": "jailbreak",
    "pasttense": "tense",
}


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.rsplit(".", 1)[-1].lower())


_BY_KEY = {**{_key(n): n for n in (*NAMES, *BUNDLES)}, **ALIASES}


@dataclass(frozen=True)
class Technique:
    steps: tuple[str, ...]
    """The strategies applied in order; empty for the baseline."""

    @property
    def name(self) -> str:
        """As azure-ai-evaluation names it: the strategy, or a composition's names joined by ``_``."""
        return "_".join(self.steps) or "baseline"

    @property
    def complexity(self) -> Complexity:
        if not self.steps:
            return "baseline"
        if len(self.steps) > 1 or self.steps[0] in (*MULTI_TURN, *ITERATIVE):
            return "difficult"
        return "moderate" if self.steps[0] in MODEL_REWRITES else "easy"

    @property
    def iterative(self) -> str | None:
        """``pair`` or ``tap`` when an attacker model refines one prompt from a scorer's feedback."""
        return self.steps[0] if self.steps and self.steps[0] in ITERATIVE else None

    @property
    def multi_turn(self) -> str | None:
        """``multi_turn``, ``crescendo`` or ``goat`` when an attacker model drives a conversation."""
        return self.steps[0] if self.steps and self.steps[0] in MULTI_TURN else None


BASELINE = Technique(())


def strategy_steps(value: Any, where: str) -> tuple[str, ...]:
    """A strategy's canonical name, or the two of a composition written as one name."""
    text = str(getattr(value, "value", value))
    name = _BY_KEY.get(_key(text))
    if name is not None:
        return (name,)
    composed = _split_composition(text)
    if composed is None:
        raise ConfigError(
            f"{where}: unknown attack strategy {text!r} (known: {', '.join(NAMES)}; bundles easy, moderate, difficult)"
        )
    return composed


def _split_composition(text: str) -> tuple[str, str] | None:
    """``tense_base64`` → (tense, base64): the one split of the name into two known strategies."""
    parts = re.split(r"[_+,\s]+", text.strip())
    for cut in range(1, len(parts)):
        first, second = _BY_KEY.get(_key("".join(parts[:cut]))), _BY_KEY.get(_key("".join(parts[cut:])))
        if first in SINGLE and second in SINGLE:
            return first, second
    return None


def techniques(strategies: Any, where: str = "attack_strategies") -> list[Technique]:
    """The techniques a run uses, the baseline first, each once, bundles expanded."""
    if strategies is None:
        strategies = []
    if not isinstance(strategies, list):
        raise ConfigError(f'{where}: expected a list such as ["Base64", "Flip", ["Tense", "Base64"]]')
    found: list[Technique] = [BASELINE]
    for index, entry in enumerate(strategies):
        for technique in _expand(entry, f"{where}[{index}]"):
            if technique not in found:
                found.append(technique)
    return found


def _expand(entry: Any, where: str) -> list[Technique]:
    if isinstance(entry, list):
        if len(entry) != 2:
            raise ConfigError(f"{where}: a composition takes exactly two strategies, got {len(entry)}")
        steps = tuple(step for part in entry for step in strategy_steps(part, where))
        if len(steps) != 2 or any(step not in SINGLE for step in steps):
            raise ConfigError(f"{where}: only two single-turn strategies can be composed, got {entry!r}")
        return [Technique(steps)]
    steps = strategy_steps(entry, where)
    if steps[0] in BUNDLES:
        return [t for member in BUNDLES[steps[0]] for t in _expand(member, where)]
    return [BASELINE if steps == ("baseline",) else Technique(steps)]
