"""Prompt evaluators: the user's own judge prompt, from a text or Markdown file.

The file may start with YAML front matter; the rest is a Jinja2 template whose variables are the
evaluator's inputs:

    ---
    scale: [1, 5]        # default; the score must fall inside it
    threshold: 3         # pass mark (score >= threshold)
    ---
    Rate how polite this reply is to the customer.
    Customer: {{ query }}
    Reply: {{ response }}

assay appends the answer format (JSON with ``reason`` and ``score``) and parses the answer like
any judge's, with one repair retry.
"""

from __future__ import annotations

from typing import Any

import jinja2
import jinja2.exceptions
import jinja2.meta
import jinja2.nodes
import jinja2.sandbox

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric
from assay.evaluators.judges import render
from assay.evaluators.judges.judge import JudgeDefinition, _ask
from assay.llm import Model
from assay.yamlfile import safe_load

MAX_RENDERED = 1_000_000
"""Characters one ``*`` or ``**`` in a template may produce (a prompt, not a memory bomb)."""


class PromptEnvironment(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """Jinja2's sandbox (no dunders, no unsafe callables, no mutation of inputs), with repetition and
    powers bounded: prompt templates may arrive over the API."""

    intercepted_binops = frozenset(["*", "**"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int | float) and abs(right) > 64:
            raise jinja2.exceptions.SecurityError("exponents above 64 are not allowed in a prompt template")
        if operator == "*" and any(isinstance(v, str | list | tuple) for v in (left, right)):
            count = right if isinstance(left, str | list | tuple) else left
            sequence = left if isinstance(left, str | list | tuple) else right
            if isinstance(count, int) and count * len(sequence) > MAX_RENDERED:
                raise jinja2.exceptions.SecurityError("a repetition in the template would exceed 1,000,000 items")
        return super().call_binop(context, operator, left, right)


ENVIRONMENT = PromptEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)  # noqa: S701 - prompts, not HTML


def check_template(tree: jinja2.nodes.Template, where: str) -> None:
    """Refuse, at registration, what the sandbox would refuse only when rendering: private attributes,
    and loops inside loops (each may run 100,000 times)."""
    for node in tree.find_all((jinja2.nodes.Getattr, jinja2.nodes.Getitem)):
        key = getattr(node, "attr", None) or getattr(node, "arg", None)
        attribute = getattr(key, "value", key)
        if isinstance(attribute, str) and attribute.startswith("_"):
            raise ConfigError(
                f"{where}:{node.lineno}: the template reads {attribute!r}; attributes starting "
                "with '_' are not allowed",
                hint="use only the inputs and their fields",
            )
    for loop in tree.find_all(jinja2.nodes.For):
        inner = next(iter(loop.find_all(jinja2.nodes.For)), None)
        if inner is not None:
            raise ConfigError(f"{where}:{inner.lineno}: a loop inside a loop is not allowed in a prompt template")


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        return {}, text
    _, header, body = text.split("---", 2) if text.count("---") >= 2 else ("", "", text)
    meta = safe_load(header, f"{where} (front matter)") or {}
    if not isinstance(meta, dict):
        raise ConfigError(f"{where}: the front matter must be a mapping")
    return meta, body.lstrip("\n")


def prompt_spec(name: str, version: str, text: str, where: str) -> EvaluatorSpec:
    meta, body = split_front_matter(text, where)
    try:
        tree = ENVIRONMENT.parse(body)
        check_template(tree, where)
        template = ENVIRONMENT.from_string(tree)
        inputs = sorted(jinja2.meta.find_undeclared_variables(tree))
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"{where}:{exc.lineno}: {exc.message}") from None
    except RecursionError:
        raise ConfigError(f"{where}: the template is nested too deeply") from None
    if not inputs:
        raise ConfigError(f"{where}: the prompt uses no inputs", hint="refer to inputs as {{ query }}, {{ response }}")
    low, high = meta.get("scale", [1, 5])
    threshold = float(meta.get("threshold", (low + high) / 2))
    short = name.split(".")[-1]
    definition = JudgeDefinition(
        name=short,
        description="",
        instructions="",
        rubric={},
        required=tuple(inputs),
        low=int(low),
        high=int(high),
        threshold=threshold,
    )

    def factory(model: Model, temperature: float = 0.0) -> Evaluator:
        async def evaluate(values: dict[str, Any]) -> Any:
            shown = {key: render.value_text(key, values.get(key)) for key in inputs}
            try:
                prompt = template.render(**shown)
            except jinja2.TemplateError as exc:
                raise ItemError(f"the prompt template failed: {exc}") from None
            user = (
                f"{prompt}\n\n# Answer\nReply with only this JSON object: "
                f'{{"reason": "<why>", "score": <integer {low}-{high}>}}'
            )
            return await _ask(definition, model, [{"role": "user", "content": user}], temperature, None)

        return evaluate

    return EvaluatorSpec(
        name=name,
        version=version,
        evaluator_type="custom",
        category="custom",
        description=str(meta.get("description") or f"Prompt evaluator over {', '.join(inputs)}."),
        required_inputs=inputs,
        metrics=[Metric(name=short, type="ordinal", min_value=low, max_value=high, threshold=threshold)],
        init_parameters={"model": {"type": "string"}},
        factory=factory,
    )
