"""``input_messages``: what a target is sent for an item.

    {"type": "template", "template": [{"role": "user", "content": "{{item.query}}"}, ...]}
    {"type": "item_reference", "item_reference": "item.messages"}

Without ``input_messages`` a target is sent the item's ``messages`` (up to the last user message)
or its ``query`` as one user message.
"""

from __future__ import annotations

from typing import Any

from assay.errors import ConfigError, ItemError
from assay.mapping import Template, parse_path
from assay.messages import Message, MessageFormatError, normalize, split_turn, to_chat


class InputMessages:
    def __init__(self, spec: dict[str, Any] | None, where: str = "input_messages") -> None:
        self.spec = spec
        self.template: Template | None = None
        self.reference = None
        if spec is None:
            return
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind == "template" and isinstance(spec.get("template"), list):
            self.template = Template(spec["template"], f"{where}.template")
        elif kind == "item_reference" and isinstance(spec.get("item_reference"), str):
            self.reference = parse_path(spec["item_reference"], f"{where}.item_reference")
        else:
            raise ConfigError(
                f"{where}: use {{type: template, template: [...]}} or {{type: item_reference, item_reference: item.x}}"
            )

    def render(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """Chat-completions messages, the conversation's tool calls and results kept."""
        return to_chat(self.render_messages(item))

    def render_messages(self, item: dict[str, Any]) -> list[Message]:
        if self.template is not None:
            raw = self.template.render(item, None)
        elif self.reference is not None:
            raw = self.reference.lookup(item, None)
        elif item.get("messages") is not None:
            raw = item["messages"]
        elif item.get("query") is not None:
            raw = item["query"]
        else:
            raise ItemError("the item has neither messages nor query to send; give the run input_messages")
        return input_messages(raw)


def input_messages(raw: Any) -> list[Message]:
    """The messages to send; a conversation that ends with the agent is cut after its last user turn."""
    try:
        messages = normalize(raw, where="input_messages")
    except MessageFormatError as exc:
        raise ItemError(str(exc)) from None
    if messages and messages[-1].role == "assistant":
        messages, _ = split_turn(messages)
    return messages


def render_input_messages(raw: Any) -> list[dict[str, Any]]:
    """Chat-completions messages (``input_messages`` then ``to_chat``)."""
    return to_chat(input_messages(raw))
