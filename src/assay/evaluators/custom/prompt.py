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

import re
from typing import Any

import jinja2
import jinja2.meta

from assay.config.yamlfile import safe_load
from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric
from assay.evaluators.judges import render
from assay.evaluators.judges.judge import JudgeDefinition, _ask
from assay.llm import Model
from assay.sandbox.templates import BoundedEnvironment, compile_bounded

ENVIRONMENT = BoundedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)  # noqa: S701 - prompts, not HTML


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        return {}, text
    _, header, body = text.split("---", 2) if text.count("---") >= 2 else ("", "", text)
    meta = safe_load(header, f"{where} (front matter)") or {}
    if not isinstance(meta, dict):
        raise ConfigError(f"{where}: the front matter must be a mapping")
    return meta, body.lstrip("\n")


SINGLE_BRACE = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
"""``{query}``: Foundry's samples write prompt evaluators' placeholders with single braces."""


def jinja_placeholders(body: str) -> str:
    """A prompt written with ``{query}``-style placeholders (and no Jinja of its own) as Jinja."""
    if "{{" in body or "{%" in body:
        return body
    return SINGLE_BRACE.sub(lambda found: "{{ " + found.group(1) + " }}", body)


def prompt_spec(name: str, version: str, text: str, where: str) -> EvaluatorSpec:
    meta, body = split_front_matter(text, where)
    body = jinja_placeholders(body)
    try:
        template = compile_bounded(ENVIRONMENT, body)
        inputs = sorted(jinja2.meta.find_undeclared_variables(ENVIRONMENT.parse(body)))
    except jinja2.TemplateSyntaxError as exc:
        hint = "use only the inputs, their fields and Jinja's filters" if "not allowed" in str(exc.message) else None
        raise ConfigError(f"{where}:{exc.lineno}: {exc.message}", hint=hint) from None
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
                prompt = ENVIRONMENT.render_bounded(template, shown)
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
