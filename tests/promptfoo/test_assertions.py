"""promptfoo's deterministic and python assertions: each verdict as promptfoo's documentation and
source define it (pass and fail of every type, and its ``not-`` form), and the test-level rules
(all must pass; a test threshold over the weighted mean instead)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from assay.evaluators.promptfoo import promptfoo_assertions
from assay.evaluators.promptfoo.checks import bleu_score, rouge_n

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def judged(assertions: list[dict[str, Any]], output: str, **inputs: Any) -> dict[str, Any]:
    score = asyncio.run(promptfoo_assertions(tools=TOOLS)({"assertions": assertions, "output": output, **inputs}))
    return {"passed": score.passed, "score": score.value, "reason": score.reason, **score.properties}


def verdict(assertion: dict[str, Any], output: str, **inputs: Any) -> bool:
    return judged([assertion], output, **inputs)["passed"]


XML = "<order><id>7</id><items><item>tea</item></items></order>"
CASES = [
    # (assertion, output, promptfoo's verdict)
    ({"type": "equals", "value": "Paris"}, "Paris", True),
    ({"type": "equals", "value": "Paris"}, "paris", False),
    ({"type": "equals", "value": {"a": 1}}, '{"a": 1}', True),
    ({"type": "not-equals", "value": "Paris"}, "London", True),
    ({"type": "contains", "value": "Par"}, "Paris", True),
    ({"type": "contains", "value": "par"}, "Paris", False),
    ({"type": "not-contains", "value": "Rome"}, "Paris", True),
    ({"type": "icontains", "value": "PAR"}, "Paris", True),
    ({"type": "not-icontains", "value": "PAR"}, "Paris", False),
    ({"type": "contains-any", "value": ["Rome", "Paris"]}, "Paris!", True),
    ({"type": "contains-any", "value": "Rome, Oslo"}, "Paris!", False),
    ({"type": "not-contains-any", "value": ["Rome", "Oslo"]}, "Paris", True),
    ({"type": "contains-all", "value": ["Par", "is"]}, "Paris", True),
    ({"type": "contains-all", "value": "Par, Rome"}, "Paris", False),
    ({"type": "not-contains-all", "value": ["Par", "Rome"]}, "Paris", True),
    ({"type": "icontains-any", "value": ["PARIS", "ROME"]}, "paris", True),
    ({"type": "icontains-all", "value": ["PARIS", "ROME"]}, "paris", False),
    ({"type": "starts-with", "value": "The"}, "The answer", True),
    ({"type": "starts-with", "value": "the"}, "The answer", False),
    ({"type": "not-starts-with", "value": "An"}, "The answer", True),
    ({"type": "regex", "value": r"\d{3}-\d{4}"}, "call 555-1234", True),
    ({"type": "regex", "value": r"^\d+$"}, "12a", False),
    ({"type": "not-regex", "value": "error"}, "all good", True),
    ({"type": "is-json"}, '{"ok": true}', True),
    ({"type": "is-json"}, "ok: true", False),
    ({"type": "is-json", "value": {"type": "object", "required": ["name"]}}, '{"ok": true}', False),
    ({"type": "is-json", "value": "{type: object, required: [ok]}"}, '{"ok": true}', True),
    ({"type": "not-is-json"}, "plain words", True),
    ({"type": "contains-json"}, 'Here: ```json\n{"ok": true}\n``` done', True),
    ({"type": "contains-json"}, "no json { here", False),
    ({"type": "contains-json", "value": {"required": ["id"]}}, 'x {"name": 1} y {"id": 2}', True),
    ({"type": "not-contains-json"}, "nothing", True),
    ({"type": "levenshtein", "value": "kitten"}, "sitting", True),  # distance 3 <= default 5
    ({"type": "levenshtein", "value": "kitten", "threshold": 2}, "sitting", False),
    ({"type": "not-levenshtein", "value": "kitten", "threshold": 2}, "sitting", True),
    ({"type": "rouge-n", "value": "the cat sat on the mat"}, "the cat sat on the mat", True),
    ({"type": "rouge-n", "value": "the cat sat on the mat"}, "the cat sat", False),  # recall 3/6
    ({"type": "rouge-n", "value": "the cat sat on the mat", "threshold": 0.5}, "the cat sat", True),
    ({"type": "not-rouge-n", "value": "the cat sat on the mat"}, "dogs bark", True),
    ({"type": "bleu", "value": "the quick brown fox jumps"}, "the quick brown fox jumps", True),
    ({"type": "bleu", "value": "the quick brown fox jumps"}, "a slow red dog", False),
    ({"type": "not-bleu", "value": "the quick brown fox jumps"}, "a slow red dog", True),
    ({"type": "latency", "threshold": 500}, "x", True),
    ({"type": "latency", "threshold": 100}, "x", False),
    ({"type": "not-latency", "threshold": 100}, "x", True),
    ({"type": "cost", "threshold": 0.01}, "x", True),
    ({"type": "cost", "threshold": 0.0001}, "x", False),
    # Checked against promptfoo 0.123.1 itself by tests/conformance/promptfoo_diff.py.
    ({"type": "word-count", "value": 3}, "one two  three", True),
    ({"type": "word-count", "value": 5}, "<a><b>hi</b></a> three words here", False),  # a tag run is one word
    ({"type": "word-count", "value": {"min": 2, "max": 4}}, "The cat sat on the mat", False),
    ({"type": "word-count", "value": {"max": 6}}, "The cat sat on the mat", True),
    ({"type": "not-word-count", "value": 3}, "one two", True),
    ({"type": "is-xml"}, XML, True),
    ({"type": "is-xml", "value": "order.items.item, order.id"}, XML, True),
    ({"type": "is-xml", "value": {"requiredElements": ["order.customer"]}}, XML, False),
    ({"type": "is-xml"}, "<a>1</a><b>2</b>", False),
    ({"type": "is-xml"}, f"Here it is: {XML}", False),
    ({"type": "is-xml"}, '<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>', False),
    ({"type": "contains-xml"}, f"Here it is: {XML} thanks", True),
    ({"type": "contains-xml", "value": "order.items"}, f"Here: {XML}", True),
    ({"type": "contains-xml"}, "no markup at all", False),
    ({"type": "not-contains-xml"}, "no markup at all", True),
    ({"type": "gleu", "value": "The cat sat on a mat"}, "The cat sat on the mat", True),  # 0.611
    ({"type": "gleu", "value": "The cat sat on a mat"}, "dogs run fast", False),
    ({"type": "finish-reason", "value": "STOP"}, "x", True),
    ({"type": "finish-reason", "value": "length"}, "x", False),
    # Verdicts real promptfoo 0.123.1 gives (tests/conformance/promptfoo_diff.py compares them live).
    ({"type": "is-html"}, "<div><p>Hello</p></div>", True),
    ({"type": "is-html"}, "<!DOCTYPE html><html><body>Hi <b>there</b></body></html>", True),
    ({"type": "is-html"}, "Hello <b>world</b>", False),  # text outside every element, no <body> of its own
    ({"type": "is-html"}, "<foo>bar</foo>", False),  # no element HTML knows
    ({"type": "is-html"}, "<my-card>hi</my-card>", True),  # a custom element
    ({"type": "is-html"}, '<?xml version="1.0"?><a>1</a>', False),
    ({"type": "is-html"}, "", False),
    ({"type": "not-is-html"}, "plain text", True),
    ({"type": "contains-html"}, "Here is a <span>tag</span> inside", True),
    ({"type": "contains-html"}, "Fish &amp; chips", False),  # one indicator is not enough
    ({"type": "contains-html"}, "Fish &amp; chips <!-- note -->", True),
    ({"type": "contains-html"}, "a < b and c > d", False),
    ({"type": "is-refusal"}, "I'm sorry, but I can't help with that.", True),
    ({"type": "is-refusal"}, "I\u2019m unable to assist with that request.", True),  # a curly apostrophe
    ({"type": "is-refusal"}, "Well, as an AI I cannot provide that.", True),
    ({"type": "is-refusal"}, "This is not legalese.", False),  # phrases match whole words
    ({"type": "is-refusal"}, "The capital of France is Paris.", False),
    ({"type": "is-refusal"}, "   ", True),  # an empty answer is a refusal
    ({"type": "not-is-refusal"}, "Sure, here is the recipe.", True),
    ({"type": "is-sql"}, "SELECT id, name FROM users WHERE id = 1", True),
    ({"type": "is-sql"}, "SELECT * FORM users", False),
    ({"type": "is-sql"}, "hello world", False),  # sqlglot alone reads it as `hello AS world`
    ({"type": "is-sql"}, "SELECT FROM users", False),
    ({"type": "is-sql"}, "SELECT id name FROM users", False),  # promptfoo's missing-comma check
    ({"type": "is-sql"}, "SELECT * FROM generate_series(1, 3)", False),  # not MySQL
    ({"type": "is-sql", "value": {"allowedTables": ["select::null::users"]}}, "SELECT * FROM salaries", False),
    ({"type": "is-sql", "value": {"allowedTables": ["(select|delete)::null::logs"]}}, "DELETE FROM logs", True),
    ({"type": "is-sql", "value": {"allowedColumns": ["select::users::name"]}}, "SELECT u.name FROM users u", True),
    ({"type": "is-sql", "value": {"allowedColumns": ["select::null::name"]}}, "SELECT * FROM users", False),
    ({"type": "not-is-sql"}, "The weather is nice.", True),
    ({"type": "contains-sql"}, "Here:\n```sql\nSELECT id FROM users;\n```\nDone.", True),
    ({"type": "contains-sql"}, "```python\nprint(1)\n```", False),
    ({"type": "not-contains-sql"}, "No SQL at all.", True),
    ({"type": "tool-call-f1", "value": ["search", "book"]}, '{"type": "function_call", "name": "search"}', False),
    (
        {"type": "tool-call-f1", "value": ["lookup"]},
        'I will call it.\n{"type": "tool_use", "name": "lookup"}\nOK',
        True,
    ),
    ({"type": "tool-call-f1", "value": ["lookup"]}, '```\n{"type": "tool_use", "name": "lookup"}\n```', False),
    ({"type": "not-tool-call-f1", "value": ["book"]}, '{"tool_calls": [{"function": {"name": "search"}}]}', True),
    ({"type": "meteor", "value": "The cat sat on the mat."}, "The cat sat on the mat.", True),
    ({"type": "meteor", "value": "the cat sat on the mat"}, "completely different words", False),
]


@pytest.mark.parametrize(("assertion", "output", "expected"), CASES, ids=[str(c[0]) for c in CASES])
def test_each_deterministic_assertion_gives_promptfoos_verdict(assertion, output, expected):
    sample = {"latency_ms": 250.0, "cost": 0.002, "finish_reason": "stop"}
    assert verdict(assertion, output, sample=sample) is expected


def test_gleu_is_promptfoos_figure():
    from assay.evaluators.promptfoo.checks import gleu_score

    assert gleu_score("The cat sat on the mat", ["The cat sat on a mat"]) == pytest.approx(0.6111111111111112)
    assert gleu_score("Same words.", ["same words"]) == 1.0 and gleu_score("", ["x"]) == 0.0


@pytest.mark.parametrize(
    ("code", "threshold", "expected"),
    [
        ("output.includes('Paris')", None, (True, 1.0)),
        ("output.startsWith('x')", None, (False, 0.0)),
        ("output.length / 100", None, (True, 0.2)),  # a number passes above 0
        ("output.length / 100", 0.5, (False, 0.2)),  # or at the threshold
        ("({pass: true, score: 0.9, reason: 'fine'})", None, (True, 0.9)),
        ("const n = output.split(' ').length; n === 4", None, (True, 1.0)),
        ("if (context.vars.city === 'Paris') {\n  return true;\n}\nreturn false;", None, (True, 1.0)),
        ("JSON.parse(output).x", None, (False, 0.0)),  # a throw fails the assertion
    ],
)
def test_javascript_assertions_run_in_v8_in_the_sandbox(code, threshold, expected):
    assertion = {"type": "javascript", "value": code}
    if threshold is not None:
        assertion["threshold"] = threshold
    result = judged([assertion], "Paris is the capital", vars={"city": "Paris"})
    assert (result["passed"], pytest.approx(result["score"])) == (expected[0], pytest.approx(expected[1]))
    if code.startswith("JSON.parse"):
        assert result["assertions"][0]["reason"].startswith("Custom function threw error")


def test_transforms_change_the_output_each_assertion_reads():
    from assay.evaluators.promptfoo import TEST_TRANSFORM

    upper = {"type": "equals", "value": "PARIS", "transform": "output.toUpperCase()"}
    as_json = {"type": "equals", "value": '{"b":2}', "transform": "JSON.parse(output).a"}
    assert judged([upper], "Paris")["passed"] is True
    assert judged([as_json], '{"a": {"b": 2}}')["passed"] is True
    # the test's own transform first, then the assertion's
    chained = {"type": "equals", "value": "3", TEST_TRANSFORM: "output.trim()", "transform": "output.length"}
    assert judged([chained], "  abc ")["passed"] is True
    broken = judged([{"type": "equals", "value": "x", "transform": "output.nope()"}], "abc")
    assert broken["passed"] is False and "Transform failed" in broken["assertions"][0]["reason"]


def test_rouge_and_bleu_figures():
    assert rouge_n("the cat sat", "the cat sat on the mat") == pytest.approx(0.5)
    assert rouge_n("The cat", "the cat") == pytest.approx(0.5)  # case is kept, as js-rouge keeps it
    assert bleu_score("the quick brown fox", ["the quick brown fox"]) == pytest.approx(1.0)
    # three words have no 4-gram: that precision is smoothed to 1e-7, so the score is near 0
    assert bleu_score("the quick brown", ["the quick brown fox"]) < 0.05
    # one word short: every precision is 1 and the brevity penalty is exp(1 - 5/6)
    shorter = bleu_score("a b c d e", ["a b c d e f"])
    assert shorter == pytest.approx(2.718281828 ** (1 - 5 / 6), rel=1e-6)


def test_tool_calls_are_checked_against_the_providers_tools():
    good = [{"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]
    wrong_name = [{"type": "function", "function": {"name": "get_time", "arguments": "{}"}}]
    bad_args = [{"type": "function", "function": {"name": "get_weather", "arguments": '{"town": "Oslo"}'}}]
    check = {"type": "is-valid-openai-tools-call"}
    assert verdict(check, "", sample={"output_tools": good})
    assert not verdict(check, "", sample={"output_tools": wrong_name})
    assert not verdict(check, "", sample={"output_tools": bad_args})
    assert not verdict(check, "I would call a tool", sample={})
    assert verdict(check, json.dumps(good))  # a text provider gives the calls as JSON
    assert verdict({"type": "not-is-valid-openai-tools-call"}, "no calls")


def test_a_test_passes_only_when_every_assertion_passes():
    result = judged([{"type": "contains", "value": "a"}, {"type": "contains", "value": "zzz"}], "abc")
    assert result["passed"] is False and result["score"] == pytest.approx(0.5)
    assert result["reason"] == 'Expected output to contain "zzz"'
    assert [c["pass"] for c in result["assertions"]] == [True, False]


def test_a_test_threshold_judges_the_weighted_mean():
    asserts = [{"type": "contains", "value": "zzz"}, {"type": "contains", "value": "a", "weight": 3}]
    passing = judged(asserts, "abc", threshold=0.7)
    assert passing["passed"] is True and passing["score"] == pytest.approx(0.75)
    failing = judged(asserts, "abc", threshold=0.8)
    assert failing["passed"] is False and "0.75 < 0.8" in failing["reason"]


def test_weight_zero_counts_for_nothing_in_the_score_but_still_fails_the_test():
    result = judged([{"type": "contains", "value": "a"}, {"type": "contains", "value": "zzz", "weight": 0}], "abc")
    assert result["score"] == pytest.approx(1.0) and result["passed"] is False


def test_named_metrics_and_assert_sets():
    asserts = [
        {"type": "contains", "value": "a", "metric": "accuracy"},
        {"type": "contains", "value": "zzz", "metric": "accuracy"},
        {
            "type": "assert-set",
            "threshold": 0.5,
            "assert": [{"type": "contains", "value": "b"}, {"type": "contains", "value": "nope"}],
        },
    ]
    result = judged(asserts, "abc")
    assert result["named_scores"] == {"accuracy": pytest.approx(0.5)}
    assert [c["pass"] for c in result["assertions"]] == [True, False, True]  # the set: 0.5 >= 0.5


def test_a_bad_assertion_fails_its_test_with_the_cause():
    result = judged([{"type": "regex", "value": "("}], "abc")
    assert result["passed"] is False and "not a valid regular expression" in result["assertions"][0]["reason"]


PYTHON = "import json\nimport re\n\n\ndef main(output, context):\n    return {body}\n"


@pytest.mark.parametrize(
    ("body", "threshold", "expected"),
    [
        ("'Paris' in output", None, (True, 1.0)),
        ("output.startswith('x')", None, (False, 0.0)),
        ("0.4", None, (True, 0.4)),  # a number passes above 0
        ("0.4", 0.5, (False, 0.4)),  # or at the threshold
        ("{'pass': True, 'score': 0.9, 'reason': 'fine'}", None, (True, 0.9)),
        ("{'pass': True, 'score': 0.3}", 0.5, (False, 0.3)),
        ("len(context['vars']['city']) == 5", None, (True, 1.0)),
    ],
)
def test_python_assertions_run_in_the_sandbox(body, threshold, expected):
    assertion = {"type": "python", "source": PYTHON.format(body=body), "function": "main"}
    if threshold is not None:
        assertion["threshold"] = threshold
    result = judged([assertion], "Paris is the capital", vars={"city": "Paris"})
    assert (result["passed"], pytest.approx(result["score"])) == (expected[0], pytest.approx(expected[1]))


def test_a_python_assertion_that_raises_fails_its_test_with_the_error():
    source = PYTHON.format(body="1 / 0")
    result = judged([{"type": "python", "source": source, "function": "main"}], "x")
    assert result["passed"] is False and "ZeroDivisionError" in result["assertions"][0]["reason"]


@pytest.mark.parametrize(
    ("assertion", "output", "score"),
    [
        # promptfoo 0.123.1's figures (tests/conformance/promptfoo_diff.py compares them live).
        (
            {"type": "tool-call-f1", "value": "search,book", "threshold": 0.5},
            '[{"name": "search"}, {"name": "x"}]',
            0.5,
        ),
        ({"type": "tool-call-f1", "value": ["search", "book"]}, '{"type": "function_call", "name": "search"}', 2 / 3),
    ],
)
def test_tool_call_f1_is_promptfoos_figure(assertion, output, score):
    assert judged([assertion], output)["score"] == pytest.approx(score)


def test_meteor_matches_stems_and_synonyms_as_promptfoo_does():
    """Porter's original stemmer (``runs`` and ``running`` meet at ``run``) and WordNet looked up by
    the exact word (``large`` and ``big``, ``leaped`` and ``jumped``)."""
    stems = judged([{"type": "meteor", "value": "the cat runs quick"}], "The cats were running quickly")
    synonyms = judged([{"type": "meteor", "value": "A large dog leaped", "threshold": 0.3}], "The big dog jumped")
    exact = judged([{"type": "meteor", "value": "the cat sat"}], "the cat sat")
    assert 0 < stems["score"] < exact["score"] and synonyms["passed"] and synonyms["score"] > 0.3


def test_perplexity_reads_the_tokens_log_probabilities():
    """promptfoo's figures on log probabilities −0.1, −0.5, −1.0 (the differential suite checks them
    live): perplexity e^0.533 = 1.70, the score 1 / (1 + e^0.533) = 0.370; no log probabilities, no verdict."""
    sample = {"logprobs": [-0.1, -0.5, -1.0]}
    assert judged([{"type": "perplexity", "threshold": 2}], "x", sample=sample)["passed"] is True
    assert judged([{"type": "perplexity", "threshold": 1.5}], "x", sample=sample)["passed"] is False
    scored = judged([{"type": "perplexity-score", "threshold": 0.3}], "x", sample=sample)
    assert scored["passed"] is True and scored["score"] == pytest.approx(0.36975, abs=1e-4)
    refused = judged([{"type": "perplexity"}], "x", sample={})
    assert refused["passed"] is False and "do not return logProbs" in refused["assertions"][0]["reason"]


def test_is_sql_reads_its_allowed_entries_in_linear_time():
    """``allowedTables`` may come over the API with the item: a pattern that backtracks forever in
    Python's engine (``(a+)+$`` against a long name that almost matches) is answered at once by RE2."""
    name = "a" * 40 + "!"
    assertion = {"type": "is-sql", "value": {"allowedTables": ["select::null::(a+)+$"]}}
    found = judged([assertion], f"SELECT id FROM {name.rstrip('!')}x")
    assert found["passed"] is False and "unauthorized table" in found["reason"]
    allowed = {"type": "is-sql", "value": {"allowedTables": ["select::null::(a+)+"]}}
    assert judged([allowed], f"SELECT id FROM {'a' * 40}")["passed"] is True
