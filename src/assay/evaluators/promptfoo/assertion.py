"""A promptfoo assertion as the evaluator reads it: one entry of a test's ``assert:`` list (or of an
``assert-set``'s), after the import checked it (``assay.formats.promptfoo``). Values keep the types
promptfoo's YAML allows (a ``value`` is text, a number, a list or an object, by assertion type)."""

from __future__ import annotations

from typing import Any, Final, Required, TypedDict

TEST_TRANSFORM: Final = "__test_transform__"
"""Where an imported assertion carries its test's ``options.transform``."""

Assertion = TypedDict(
    "Assertion",
    {
        "type": Required[str],
        "value": Any,
        "threshold": Any,
        "weight": Any,
        "metric": str,
        "transform": str,
        "contextTransform": str,
        "config": dict[str, Any],
        "provider": Any,
        "rubricPrompt": Any,
        "assert": list["Assertion"],
        "tools": list[dict[str, Any]],
        "functions": list[dict[str, Any]] | None,
        "source": str,
        "function": str,
        "factuality": dict[str, Any],
        "alpha": float,
        "beta": float,
        "gamma": float,
        "__test_transform__": str,
    },
    total=False,
)
