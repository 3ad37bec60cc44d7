"""The support agent's tools: a small order book, the refund policy, and a hand-off to a human.

Each tool is a plain function from JSON arguments to a JSON-able result; ``TOOLS`` describes them
in the chat-completions format the model sees, and ``DESCRIPTIONS`` the way evaluators want them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
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

DESCRIPTIONS = [
    {"name": "lookup_order", "description": "Status, carrier, delivery date and items of an order.",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
    {"name": "refund_policy", "description": "The refund policy for a product category (standard, electronics).",
     "parameters": {"type": "object", "properties": {"category": {"type": "string"}}}},
    {"name": "escalate_to_human", "description": "Open a ticket for a human agent when the request needs one.",
     "parameters": {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}},
]  # fmt: skip
TOOLS = [{"type": "function", "function": d} for d in DESCRIPTIONS]
