"""The support agent's tools: a small order book, the refund policy, and a hand-off to a human.

Each tool is a plain function from JSON arguments to a JSON-able result; ``TOOLS`` describes them
in the chat-completions format the model sees, and ``DESCRIPTIONS`` the way evaluators want them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ORDERS = {
    "1042": {"status": "shipped", "carrier": "DHL", "eta": "2026-12-03", "items": ["kettle"]},
    "2001": {"status": "processing", "carrier": None, "eta": "2026-12-08", "items": ["desk lamp", "bulbs"]},
    "3107": {"status": "delivered", "carrier": "UPS", "eta": None, "items": ["headphones"]},
}
POLICIES = {
    "standard": "Full refund within 30 days of delivery, to the original payment method.",
    "electronics": "Refund within 14 days of delivery if the seal is unbroken; otherwise store credit.",
}
_tickets = itertools.count(501)


def lookup_order(order_id: str) -> dict[str, Any]:
    order = ORDERS.get(str(order_id).strip().lstrip("#"))
    return {"order_id": order_id, **order} if order else {"error": f"no order {order_id}"}


def refund_policy(category: str = "standard") -> dict[str, Any]:
    return {"category": category, "policy": POLICIES.get(category, POLICIES["standard"])}


def escalate_to_human(reason: str) -> dict[str, Any]:
    return {"ticket": f"T-{next(_tickets)}", "reason": reason, "queue": "support-tier-2"}


IMPLEMENTATIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "lookup_order": lookup_order,
    "refund_policy": refund_policy,
    "escalate_to_human": escalate_to_human,
}

# tools.json is the one copy of what the model is told (``assay eval generate`` reads it too).
DESCRIPTIONS: list[dict[str, Any]] = json.loads((Path(__file__).parent / "tools.json").read_text(encoding="utf-8"))
TOOLS = [{"type": "function", "function": d} for d in DESCRIPTIONS]
