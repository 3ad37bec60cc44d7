"""Shared input coercion for evaluators: turn mapped values into what a metric needs."""

from __future__ import annotations

import json
from typing import Any

from assay.errors import MissingInput
from assay.mapping import as_text
from assay.messages import MessageFormatError, response_text


def text_input(inputs: dict[str, Any], name: str) -> str:
    """A required text input; message lists give their assistant text."""
    value = inputs.get(name)
    if type(value) is str:  # most inputs (a hot path: once per item and text input of each metric)
        return value
    if value is None:
        raise MissingInput(f"input {name!r} is missing")
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict)):
        try:
            return response_text(value)
        except MessageFormatError:
            return as_text(value)
    return as_text(value)


def json_input(inputs: dict[str, Any], name: str) -> Any:
    """A structured input that CSV cells or templates may have given as a JSON string."""
    if name not in inputs or inputs[name] is None:
        raise MissingInput(f"input {name!r} is missing")
    value = inputs[name]
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
