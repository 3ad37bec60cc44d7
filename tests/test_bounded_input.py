"""Inputs that used to hold or fill the server (issue 50): regexes in RE2, JSON Schema patterns,
template filters, CSV cells a spreadsheet runs, model names without end."""

from __future__ import annotations

import asyncio
import csv
import io

import jinja2
import pytest

from assay import outbound
from assay.dataset.schema import ItemSchema
from assay.errors import ConfigError
from assay.evaluators.promptfoo.checks import Seen, regex
from assay.regexes import UnsupportedPattern, search
from assay.sandbox.templates import MAX_RENDERED, BoundedEnvironment, TemplateTooLarge, compile_bounded

CATASTROPHIC = r"^(a+)+$"
"""Exponential in Python's backtracking engine: 40 characters would take hours there."""


def test_a_catastrophic_pattern_is_answered_at_once_and_rightly():
    assert search(CATASTROPHIC, "a" * 40 + "!") is False
    assert search(CATASTROPHIC, "a" * 40) is True


def test_a_server_refuses_a_pattern_re2_cannot_run_and_a_local_run_falls_back(monkeypatch):
    seen = Seen(output="abab", sample={}, vars={}, prompt="")
    monkeypatch.setattr(outbound, "_SERVING", True)
    with pytest.raises(Exception, match="linear-time engine"):
        regex({"type": "regex", "value": r"(ab)\1"}, seen, False)
    monkeypatch.setattr(outbound, "_SERVING", False)
    assert regex({"type": "regex", "value": r"(ab)\1"}, seen, False).passed
    with pytest.raises(UnsupportedPattern):
        search(r"(?=a)a", "a")


def test_a_promptfoo_regex_check_on_a_server_uses_re2(monkeypatch):
    monkeypatch.setattr(outbound, "_SERVING", True)
    verdict = regex({"type": "regex", "value": CATASTROPHIC}, Seen("a" * 40 + "!", {}, {}, ""), False)
    assert verdict.passed is False


def test_a_json_schema_pattern_runs_in_re2():
    schema = ItemSchema(
        {
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": CATASTROPHIC}},
            "patternProperties": {CATASTROPHIC: {"type": "integer"}},
            "additionalProperties": False,
        }
    )
    problems = schema.problems({"code": "a" * 40 + "!", "aaaa": 1, "zz": 2})
    messages = " ".join(message for _, message in problems)
    assert "does not match" in messages and "'zz'" in messages and "'aaaa'" not in messages
    with pytest.raises(ConfigError, match=r"item_schema\.properties\.x\.pattern"):
        ItemSchema({"properties": {"x": {"pattern": r"(a)\1"}}})


ENVIRONMENT = BoundedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)  # noqa: S701 - prompts


@pytest.mark.parametrize(
    "template",
    [
        '{{ "x"|center(1000000000) }}',
        '{{ "%999999999s"|format(1) }}',
        '{{ "%*s"|format(1000000000, "x") }}',
        "{{ q|indent(1000000000) }}",
        '{{ range(100000)|join("x" * 999999) }}',
        '{{ "aaaa"|replace("a", "b" * 900000) }}',
        '{{ range(10)|batch(1000000000, "x")|list }}',
        '{{ range(10)|slice(1000000000, "x")|list }}',
        '{{ {"a": q}|tojson(indent=100000000) }}',
        "{{ q|wordwrap(1000000000) }}",
        "{% for i in range(100000) %}{{ q|center(900) }}{% endfor %}",
        "{{ [q] * 1000001 }}",
    ],
)
def test_a_template_may_not_make_more_than_its_bound(template):
    # Refused when it is made where the filter's inputs are constants, else when it renders.
    with pytest.raises((TemplateTooLarge, jinja2.TemplateSyntaxError), match=f"{MAX_RENDERED:,}"):
        ENVIRONMENT.render_bounded(compile_bounded(ENVIRONMENT, template), {"q": "hello"})


def test_a_filter_on_constants_that_would_make_too_much_is_refused_when_the_template_is_made():
    with pytest.raises(jinja2.TemplateSyntaxError, match="center") as refused:
        compile_bounded(ENVIRONMENT, 'Rate this.\n{{ q }}\n{{ ("x"|center(1000000000))|upper }}')
    assert refused.value.lineno == 3


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("{{ q.ljust(1000000000) }}", "calling .ljust()"),
        ("{{ q.format(x=1) }}", "calling .format()"),
        ("{{ range(100000)|batch(1)|sum(start=[]) }}", "adds numbers"),
    ],
)
def test_a_template_may_not_call_what_grows(template, said):
    with pytest.raises(jinja2.exceptions.SecurityError, match=said):
        ENVIRONMENT.render_bounded(compile_bounded(ENVIRONMENT, template), {"q": "hello"})


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("{% macro f(n) %}{{ f(n) }}{{ f(n) }}{% endmacro %}{{ f(q) }}", "a macro"),
        ("{% for a in q %}{% for b in q %}{% endfor %}{% endfor %}", "a loop inside a loop"),
        ("{{ q|attr('__class__') }}{{ q.__class__ }}", "'_'"),
        ("{{ q|shuffle }}", "No filter named 'shuffle'"),
    ],
)
def test_what_a_template_may_not_do_is_refused_when_it_compiles(template, said):
    with pytest.raises(jinja2.TemplateSyntaxError, match=said):
        compile_bounded(ENVIRONMENT, template)


def test_an_ordinary_prompt_renders_as_before():
    template = compile_bounded(ENVIRONMENT, 'Rate {{ q|upper }}: {{ q.split(" ")|join(", ") }} {{ "%5.1f"|format(2) }}')
    assert ENVIRONMENT.render_bounded(template, {"q": "a b"}) == "Rate A B: a, b   2.0"


def test_insight_csv_cells_a_spreadsheet_would_run_are_quoted():
    from assay.api.ui.insights_pages import SpreadsheetSafe

    buffer = io.StringIO()
    SpreadsheetSafe(csv.writer(buffer)).writerow(['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "ok", 3, None])
    assert next(csv.reader(io.StringIO(buffer.getvalue()))) == [
        '\'=HYPERLINK("http://x")',
        "'+1",
        "'-2",
        "'@SUM(A1)",
        "ok",
        "3",
        "",
    ]


def test_the_model_registry_keeps_a_bounded_number_of_unconfigured_names(monkeypatch):
    from assay.llm import ModelRegistry
    from assay.llm.registry import MAX_UNCONFIGURED

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    registry = ModelRegistry()
    for n in range(MAX_UNCONFIGURED):
        registry.get(f"model-{n}")
    assert registry.get("model-0") is registry.get("model-0")  # known names are served still
    with pytest.raises(ConfigError, match="does not configure"):
        registry.get("one-more")
    asyncio.run(registry.aclose())
