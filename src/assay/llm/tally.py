"""What one role's model calls cost across one item (an attack, a conversation, an agent loop)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.llm.model import Completion


@dataclass
class UsageTally:
    """Calls and tokens of one model; ``calls`` are the calls made, cache answers are ``cache_hits``."""

    model: str | None = None
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add_completion(self, completion: Completion) -> None:
        """A call, under the model that answered it."""
        self.model = completion.model or self.model
        self.count(completion)

    def count(self, completion: Completion) -> None:
        """A call's counts, under the model this tally already names."""
        self.cache_hits += completion.cached
        self.calls += not completion.cached
        self.prompt_tokens += completion.usage.prompt_tokens
        self.completion_tokens += completion.usage.completion_tokens

    def add_sample(self, sample: dict[str, Any]) -> None:
        """A target's sample: one call, or as many as it says it made (an agent's loop)."""
        usage: dict[str, Any] = sample["usage"] if isinstance(sample.get("usage"), dict) else {}
        self.model = str(sample.get("model") or sample.get("agent") or self.model or "") or None
        calls, hits = sample.get("calls"), sample.get("cache_hits")
        if isinstance(calls, int) and isinstance(hits, int):
            self.calls += calls
            self.cache_hits += hits
        else:
            cached = bool(sample.get("cached"))
            self.cache_hits += cached
            self.calls += not cached
        self.prompt_tokens += int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or usage.get("output_tokens") or 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }

    def as_role(self, role: str) -> dict[str, Any]:
        """An entry of a sample's ``usage_by_role`` (stored per role and model)."""
        return {"role": role, **self.as_dict()}
