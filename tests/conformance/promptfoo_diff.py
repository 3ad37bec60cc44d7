"""Real promptfoo and ``assay run`` on the same promptfooconfig.yaml, every assertion's verdict
compared: its pass and its score.

promptfoo comes from npm (``make conformance`` installs ``promptfoo@0.123.1`` and Node 22, also from
npm, under ``.conformance/promptfoo``). The suite is one config of the echo provider (the output is
the prompt, so each case states its output) with one assertion per test; an assertion type assay
refuses is counted as a miss with assay's reason, not left out.

Run it as ``python -m tests.conformance.promptfoo_diff``; ``make conformance`` runs it through pytest.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assay.evaluators.promptfoo import is_known
from tests.conformance import promptfoo_traces
from tests.support.fixtures import start_llm_server

ROOT = Path(__file__).resolve().parents[2]
PROMPTFOO_HOME = ROOT / ".conformance" / "promptfoo"
BIN = PROMPTFOO_HOME / "node_modules" / ".bin"
XML = "<order><id>7</id><items><item>tea</item></items></order>"

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("equals", "Paris", {"type": "equals", "value": "Paris"}),
    ("equals-json", '{"a": 1}', {"type": "equals", "value": {"a": 1}}),
    ("not-equals", "Paris", {"type": "not-equals", "value": "Rome"}),
    ("contains", "Hello world", {"type": "contains", "value": "world"}),
    ("icontains", "Hello World", {"type": "icontains", "value": "world"}),
    ("not-contains", "Hello world", {"type": "not-contains", "value": "moon"}),
    ("contains-any", "red green", {"type": "contains-any", "value": ["blue", "green"]}),
    ("contains-all-fails", "red green", {"type": "contains-all", "value": ["red", "blue"]}),
    ("icontains-all", "Red Green", {"type": "icontains-all", "value": "red,green"}),
    ("starts-with", "Hello world", {"type": "starts-with", "value": "Hello"}),
    ("regex", "order 1234 shipped", {"type": "regex", "value": "\\d{4}"}),
    ("regex-named-group", "hi there", {"type": "regex", "value": "(?<word>hi)"}),
    ("regex-fails", "no digits", {"type": "regex", "value": "^\\d+$"}),
    ("not-regex", "no digits", {"type": "not-regex", "value": "\\d"}),
    ("is-json", '{"ok": true}', {"type": "is-json"}),
    ("is-json-fails", "{ok: true}", {"type": "is-json"}),
    (
        "is-json-schema",
        '{"n": 3}',
        {"type": "is-json", "value": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}},
    ),
    ("contains-json", 'Here: {"a": [1, 2]} done', {"type": "contains-json"}),
    (
        "contains-json-schema-array",
        'Here: {"a": [1, 2]} done',
        {
            "type": "contains-json",
            "value": {"type": "object", "properties": {"a": {"type": "array"}}, "required": ["a"]},
        },
    ),
    ("levenshtein", "kitten", {"type": "levenshtein", "value": "sitting", "threshold": 3}),
    ("levenshtein-fails", "kitten", {"type": "levenshtein", "value": "sitting", "threshold": 2}),
    ("rouge-n", "the cat sat on the mat", {"type": "rouge-n", "value": "the cat sat on a mat", "threshold": 0.5}),
    ("bleu", "the cat sat on the mat", {"type": "bleu", "value": "the cat sat on the mat", "threshold": 0.5}),
    ("gleu", "The cat sat on the mat", {"type": "gleu", "value": "The cat sat on a mat", "threshold": 0.5}),
    ("gleu-fails", "dogs run fast", {"type": "gleu", "value": "The cat sat on a mat"}),
    ("word-count", "one two three", {"type": "word-count", "value": 3}),
    ("word-count-tags", "<a><b>hi</b></a> three words here", {"type": "word-count", "value": 5}),
    ("word-count-range", "The cat sat on the mat", {"type": "word-count", "value": {"min": 2, "max": 4}}),
    ("word-count-min", "The cat sat on the mat", {"type": "word-count", "value": {"min": 2}}),
    ("not-word-count", "one two", {"type": "not-word-count", "value": 3}),
    ("is-xml", XML, {"type": "is-xml"}),
    ("is-xml-required", XML, {"type": "is-xml", "value": "order.items.item,order.id"}),
    ("is-xml-missing", XML, {"type": "is-xml", "value": {"requiredElements": ["order.customer"]}}),
    ("is-xml-two-roots", "<a>1</a><b>2</b>", {"type": "is-xml"}),
    ("is-xml-prose", f"Here it is: {XML}", {"type": "is-xml"}),
    ("contains-xml", f"Here it is: {XML} thanks", {"type": "contains-xml"}),
    ("contains-xml-required", f"Here: {XML}", {"type": "contains-xml", "value": "order.items"}),
    ("contains-xml-none", "no markup at all", {"type": "contains-xml"}),
    ("finish-reason-echo", "hi", {"type": "finish-reason", "value": "stop"}),
    ("javascript", "hello world", {"type": "javascript", "value": "output.length > 5"}),
    ("javascript-score", "hello", {"type": "javascript", "value": "output.length / 10"}),
    ("javascript-threshold", "hello", {"type": "javascript", "value": "output.length / 10", "threshold": 0.6}),
    (
        "javascript-declaration",
        '{"s": 0.9}',
        {"type": "javascript", "value": "const s = JSON.parse(output).s; s > 0.5"},
    ),
    (
        "javascript-body",
        "abc",
        {
            "type": "javascript",
            "value": "if (output.includes('b')) {\n  return {pass: true, score: 0.7, reason: 'has b'};\n}\nreturn false;",
        },
    ),
    ("javascript-context", "Ada", {"type": "javascript", "value": "output === context.vars.text"}),
    ("javascript-throws", "x", {"type": "javascript", "value": "JSON.parse(output).a > 1"}),
    ("not-javascript", "x", {"type": "not-javascript", "value": "output.length > 3"}),
    ("transform-assertion", "hello", {"type": "equals", "value": "HELLO", "transform": "output.toUpperCase()"}),
    (
        "transform-to-json",
        '{"a": {"b": 2}}',
        {"type": "equals", "value": '{"b":2}', "transform": "JSON.parse(output).a"},
    ),
    ("transform-to-number", "abc", {"type": "equals", "value": "3", "transform": "output.length"}),
    ("python-expression", "hello", {"type": "python", "value": "output.upper() == 'HELLO'"}),
    ("python-score", "hello", {"type": "python", "value": "len(output) / 10"}),
    (
        "python-body",
        "abc",
        {
            "type": "python",
            "value": "if 'b' in output:\n    return {'pass': True, 'score': 0.7, 'reason': 'has b'}\nreturn False",
        },
    ),
    ("python-context", "Ada", {"type": "python", "value": "output == context['vars']['text']"}),
    ("cost-echo", "free", {"type": "cost", "threshold": 0.01}),
    ("latency-echo", "fast", {"type": "latency", "threshold": 60000}),
    ("regex-js-end-of-input", "line one\n", {"type": "regex", "value": "one$"}),
    ("regex-js-dot-newline", "a\nb", {"type": "regex", "value": "a.b"}),
    ("regex-js-unicode-class", "café", {"type": "regex", "value": "^\\w+$"}),
    ("is-html-fragment", "<div><p>Hello</p></div>", {"type": "is-html"}),
    ("is-html-document", "<!DOCTYPE html><html><body>Hi <b>there</b></body></html>", {"type": "is-html"}),
    ("is-html-prose", "Hello <b>world</b>", {"type": "is-html"}),
    ("is-html-text", "just some words", {"type": "is-html"}),
    ("is-html-xml", '<?xml version="1.0"?><a>1</a>', {"type": "is-html"}),
    ("is-html-unknown-tags", "<foo>bar</foo>", {"type": "is-html"}),
    ("is-html-custom-element", "<my-card>hi</my-card>", {"type": "is-html"}),
    ("is-html-head-text", "<html><head></head>Hello</html>", {"type": "is-html"}),
    ("not-is-html", "plain text", {"type": "not-is-html"}),
    ("contains-html", "Here is a <span>tag</span> inside", {"type": "contains-html"}),
    ("contains-html-entity-only", "Fish &amp; chips", {"type": "contains-html"}),
    ("contains-html-entity-comment", "Fish &amp; chips <!-- note -->", {"type": "contains-html"}),
    ("contains-html-none", "a < b and c > d", {"type": "contains-html"}),
    ("not-contains-html", "no markup here", {"type": "not-contains-html"}),
    ("is-refusal-prefix", "I'm sorry, but I can't help with that.", {"type": "is-refusal"}),
    ("is-refusal-curly", "I\u2019m unable to assist with that request.", {"type": "is-refusal"}),
    ("is-refusal-inside", "Well, as an AI I cannot provide that.", {"type": "is-refusal"}),
    ("is-refusal-answer", "The capital of France is Paris.", {"type": "is-refusal"}),
    ("is-refusal-word-boundary", "This is not legalese.", {"type": "is-refusal"}),
    ("not-is-refusal", "Sure, here is the recipe.", {"type": "not-is-refusal"}),
    ("is-sql", "SELECT id, name FROM users WHERE id = 1", {"type": "is-sql"}),
    ("is-sql-typo", "SELECT * FORM users", {"type": "is-sql"}),
    ("is-sql-prose", "hello world", {"type": "is-sql"}),
    ("is-sql-empty-select", "SELECT FROM users", {"type": "is-sql"}),
    ("is-sql-missing-comma", "SELECT id name FROM users", {"type": "is-sql"}),
    ("is-sql-unfinished", "SELECT id, name FROM t WHERE", {"type": "is-sql"}),
    ("is-sql-backtick", "SELECT `a FROM t", {"type": "is-sql"}),
    ("is-sql-generate-series", "SELECT * FROM generate_series(1, 3)", {"type": "is-sql"}),
    (
        "is-sql-postgres",
        "SELECT id FROM t WHERE id = $1",
        {"type": "is-sql", "value": {"databaseType": "PostgresQL"}},
    ),
    (
        "is-sql-tables-allowed",
        "SELECT u.name FROM users u JOIN orders o ON u.id = o.user_id",
        {"type": "is-sql", "value": {"allowedTables": ["select::null::users", "select::null::orders"]}},
    ),
    (
        "is-sql-tables-refused",
        "SELECT * FROM salaries",
        {"type": "is-sql", "value": {"allowedTables": ["select::null::users"]}},
    ),
    (
        "is-sql-tables-pattern",
        "DELETE FROM logs WHERE id = 1",
        {"type": "is-sql", "value": {"allowedTables": ["(select|delete)::null::logs"]}},
    ),
    (
        "is-sql-columns-allowed",
        "SELECT name, email FROM users WHERE id = 3",
        {
            "type": "is-sql",
            "value": {"allowedColumns": ["select::null::name", "select::null::email", "select::null::id"]},
        },
    ),
    (
        "is-sql-columns-qualified",
        "SELECT u.name FROM users u",
        {"type": "is-sql", "value": {"allowedColumns": ["select::users::name"]}},
    ),
    (
        "is-sql-columns-refused",
        "SELECT name, salary FROM users",
        {"type": "is-sql", "value": {"allowedColumns": ["select::null::name"]}},
    ),
    (
        "is-sql-columns-star",
        "SELECT * FROM users",
        {"type": "is-sql", "value": {"allowedColumns": ["select::null::name"]}},
    ),
    (
        "is-sql-update-columns",
        "UPDATE employees SET salary = 1 WHERE id = 2",
        {"type": "is-sql", "value": {"allowedColumns": ["update::null::salary", "select::null::id"]}},
    ),
    ("not-is-sql", "The weather is nice.", {"type": "not-is-sql"}),
    ("not-is-sql-valid", "SELECT 1", {"type": "not-is-sql"}),
    ("contains-sql-block", "Here you go:\n```sql\nSELECT id FROM users;\n```\nDone.", {"type": "contains-sql"}),
    ("contains-sql-bare", "SELECT id FROM users", {"type": "contains-sql"}),
    ("contains-sql-prose", "There is no query here.", {"type": "contains-sql"}),
    ("contains-sql-bad-block", "```sql\nSELEC id FROM users\n```", {"type": "contains-sql"}),
    ("contains-sql-python-block", "```python\nprint(1)\n```", {"type": "contains-sql"}),
    ("not-contains-sql", "No SQL at all.", {"type": "not-contains-sql"}),
    (
        "tool-call-f1",
        '{"tool_calls": [{"function": {"name": "search"}}, {"function": {"name": "book"}}]}',
        {"type": "tool-call-f1", "value": ["search", "book"]},
    ),
    (
        "tool-call-f1-partial",
        '[{"name": "search"}, {"name": "weather"}]',
        {"type": "tool-call-f1", "value": "search,book", "threshold": 0.5},
    ),
    (
        "tool-call-f1-below",
        '{"type": "function_call", "name": "search"}',
        {"type": "tool-call-f1", "value": ["search", "book"]},
    ),
    (
        "tool-call-f1-mixed-text",
        'I will call a tool.\n{"type": "tool_use", "name": "lookup"}\nThen answer.',
        {"type": "tool-call-f1", "value": ["lookup"]},
    ),
    (
        "tool-call-f1-fenced",
        '```\n{"type": "tool_use", "name": "lookup"}\n```',
        {"type": "tool-call-f1", "value": ["lookup"]},
    ),
    ("tool-call-f1-none", "no tools were called", {"type": "tool-call-f1", "value": ["lookup"]}),
    (
        "not-tool-call-f1",
        '{"tool_calls": [{"function": {"name": "search"}}]}',
        {"type": "not-tool-call-f1", "value": ["book"]},
    ),
    ("meteor", "The cat sat on the mat.", {"type": "meteor", "value": "The cat sat on the mat."}),
    ("meteor-stems", "The cats were running quickly", {"type": "meteor", "value": "the cat runs quick"}),
    ("meteor-synonyms", "The big dog jumped", {"type": "meteor", "value": "A large dog leaped", "threshold": 0.3}),
    ("meteor-order", "mat the on sat cat the", {"type": "meteor", "value": "the cat sat on the mat"}),
    ("meteor-references", "hello there", {"type": "meteor", "value": ["goodbye now", "hello there friend"]}),
    (
        "meteor-parameters",
        "the quick brown fox",
        {"type": "meteor", "value": "the brown quick fox", "alpha": 0.5, "beta": 2, "gamma": 0.8, "threshold": 0.4},
    ),
    ("not-meteor", "completely different words", {"type": "not-meteor", "value": "the cat sat on the mat"}),
    ("javascript-file", "hello world", {"type": "javascript", "value": "file://checks/length.js"}),
    ("javascript-file-named", "Ada", {"type": "javascript", "value": "file://checks/named.js:matchesVar"}),
    ("javascript-file-result", "abc", {"type": "javascript", "value": "file://checks/graded.js"}),
    ("javascript-file-fails", "hi", {"type": "javascript", "value": "file://checks/length.js"}),
    ("transform-assertion-file", "hello", {"type": "equals", "value": "HELLO", "transform": "file://checks/upper.js"}),
    # Traced (``tracing: {enabled: true}``): promptfoo's one span for the echo provider's call, and assay's.
    ("trace-echo-count", "hi", {"type": "trace-span-count", "value": {"pattern": "echo", "min": 1, "max": 1}}),
    ("trace-echo-steps", "hi", {"type": "trajectory:step-count", "value": {"max": 1}}),
    ("trace-echo-errors", "hi", {"type": "trace-error-spans", "value": 0}),
    ("trace-echo-duration", "hi", {"type": "trace-span-duration", "value": {"max": 60000}}),
    ("trace-echo-no-tools", "hi", {"type": "trajectory:tool-used", "value": "lookup_order"}),
    # Ruby, run by Debian's Ruby (inside the sandbox, in assay).
    ("ruby-expression", "hello", {"type": "ruby", "value": "output.upcase == 'HELLO'"}),
    ("ruby-score", "hello", {"type": "ruby", "value": "output.length / 10.0"}),
    (
        "ruby-body",
        "abc",
        {
            "type": "ruby",
            "value": "if output.include?('b')\n  return { pass: true, score: 0.7, reason: 'has b' }\nend\nfalse",
        },
    ),
    ("ruby-context", "Ada", {"type": "ruby", "value": "output == context['vars']['text']"}),
    ("ruby-raises", "x", {"type": "ruby", "value": "raise 'boom'"}),
    ("not-ruby", "x", {"type": "not-ruby", "value": "output.length > 3"}),
    ("ruby-file", "hello world", {"type": "ruby", "value": "file://checks/length.rb"}),
    ("function-call-echo", "hi", {"type": "is-valid-function-call"}),
    ("guardrails-echo", "hi", {"type": "guardrails"}),
    ("not-guardrails-echo", "hi", {"type": "not-guardrails"}),
    # A webhook the suite serves (WEBHOOK_ANSWERS): its answer to each output.
    ("webhook-pass", "hook-pass", {"type": "webhook", "value": "{{hook}}"}),
    ("webhook-fail", "hook-fail", {"type": "webhook", "value": "{{hook}}"}),
    ("webhook-score", "hook-score", {"type": "webhook", "value": "{{hook}}"}),
    ("not-webhook-score", "hook-score", {"type": "not-webhook", "value": "{{hook}}"}),
    ("webhook-status", "hook-500", {"type": "webhook", "value": "{{hook}}"}),
    ("webhook-no-pass", "hook-no-pass", {"type": "webhook", "value": "{{hook}}"}),
]
FILES: dict[str, str] = {
    "checks/length.js": "module.exports = (output, context) => output.length > 5;\n",
    "checks/named.js": (
        "function matchesVar(output, context) {\n  return output === context.vars.text;\n}\n"
        "module.exports = { matchesVar };\n"
    ),
    "checks/upper.js": "module.exports = (output, context) => output.toUpperCase();\n",
    "checks/trim.js": "module.exports = { tidy: (output) => output.trim().toLowerCase() };\n",
    "checks/graded.js": (
        "const helper = (text) => text.length / 10;\n"
        "module.exports = function (output) {\n"
        "  return { pass: output.includes('b'), score: helper(output), reason: 'graded in a file' };\n"
        "};\n"
    ),
    "checks/length.rb": "def get_assert(output, context)\n  output.length > 5\nend\n",
}
"""Files the cases read (``file://``), written beside the config."""
MODEL_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("model-contains", "Paris is the capital.", {"type": "contains", "value": "Paris"}),
    ("model-cost-within", "A short answer.", {"type": "cost", "threshold": 0.01}),
    ("model-cost-over", "A short answer that costs.", {"type": "cost", "threshold": 0.0000001}),
    ("model-finish-reason", "Done.", {"type": "finish-reason", "value": "stop"}),
    ("model-finish-reason-other", "Done again.", {"type": "finish-reason", "value": "length"}),
    ("model-perplexity", "Perplexed.", {"type": "perplexity", "threshold": 2}),
    ("model-perplexity-over", "Perplexed again.", {"type": "perplexity", "threshold": 1.5}),
    ("model-perplexity-score", "Perplexed once more.", {"type": "perplexity-score", "threshold": 0.3}),
    ("not-model-perplexity-score", "Perplexed at last.", {"type": "not-perplexity-score", "threshold": 0.3}),
    # The provider's span (its id) over the model call's (``chat gpt-4.1-mini``), in promptfoo and in assay.
    (
        "model-trace-chat",
        "Traced.",
        {"type": "trace-span-count", "value": {"pattern": "chat gpt-4.1-mini", "min": 1, "max": 1}},
    ),
    (
        "model-trace-root",
        "Traced again.",
        {"type": "trace-span-count", "value": {"pattern": "openai:chat:*", "max": 1, "min": 1}},
    ),
    (
        "model-trace-steps",
        "Traced twice.",
        {"type": "trajectory:step-count", "value": {"type": "span", "min": 2, "max": 2}},
    ),
    ("model-trace-no-tools", "Traced thrice.", {"type": "trajectory:step-count", "value": {"type": "tool", "max": 0}}),
    # The legacy functions API: the provider's functions (its config), the call the model made.
    ("model-function-call", "Call-F1", {"type": "is-valid-function-call"}),
    ("model-function-call-bad-args", "Call-F2", {"type": "is-valid-function-call"}),
    ("model-function-call-unknown", "Call-F3", {"type": "is-valid-openai-function-call"}),
    ("model-function-call-text", "No call at all.", {"type": "is-valid-openai-function-call"}),
    # The provider's content filter: the scripted answer cut with finish_reason content_filter.
    ("model-guardrails-clean", "A clean answer.", {"type": "guardrails"}),
    ("model-guardrails-filtered", "Filtered-1", {"type": "guardrails"}),
    ("not-model-guardrails-filtered", "Filtered-2", {"type": "not-guardrails"}),
    # Embeddings from the scripted server (each text's letter counts), compared as promptfoo compares them.
    ("model-similar", "The cat sat on the mat.", {"type": "similar", "value": "A cat sat on a mat."}),
    ("model-similar-far", "Zzz qqq xxx.", {"type": "similar", "value": "The cat sat on the mat."}),
    ("model-similar-dot", "A dog ran.", {"type": "similar:dot", "value": "A dog ran far.", "threshold": 12}),
    (
        "model-similar-euclidean",
        "Big red box.",
        {"type": "similar:euclidean", "value": "Big red boxes.", "threshold": 1.5},
    ),
    ("not-model-similar", "Cold ice.", {"type": "not-similar", "value": "Warm sunshine all day long."}),
    ("model-similar-list", "Hello there.", {"type": "similar", "value": ["Zzz", "Hello there!"]}),
    ("not-model-similar-list", "Good night.", {"type": "not-similar", "value": ["Good night!", "Qqq"]}),
    # The scripted moderation endpoint flags the categories a text names in brackets.
    ("model-moderation-clean", "A kind word.", {"type": "moderation"}),
    ("model-moderation-flagged", "I will [violence] you.", {"type": "moderation"}),
    ("model-moderation-other", "Some [hate] here.", {"type": "moderation", "value": ["violence", "self-harm"]}),
    ("not-model-moderation", "More [violence] again.", {"type": "not-moderation"}),
]
FUNCTIONS = [
    {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]
FUNCTION_CALLS = {
    "Call-F1": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    "Call-F2": {"name": "get_weather", "arguments": '{"city": 7}'},
    "Call-F3": {"name": "book_flight", "arguments": "{}"},
}
"""What the scripted model answers those cases with: a function call and no text."""
LOGPROBS = [-0.1, -0.5, -1.0]
"""What the scripted model answers with its tokens' log probabilities (``Perplexed`` replies): the
provider asks for them (``passthrough: {logprobs: true}``, as promptfoo sends extra parameters)."""
"""Cases answered by a model (``openai:chat:gpt-4.1-mini`` on the scripted server, which answers
each with its text): cost at OpenAI's list price, the finish reason the model gave."""
RECALLED = "Ctx-R1: The Eiffel Tower is in Paris. It opened in 1889."
RELEVANT_LINES = "Ctx-V1 Paris is the capital of France.\nThe Seine flows through Paris.\nBananas are yellow."
RELEVANT_PROSE = "Ctx-V2 Paris is the capital of France. The Seine flows through Paris. Bananas are yellow."
GRADED_CASES: list[tuple[str, dict[str, str], dict[str, Any], str]] = [
    # (name, the test's vars, the assertion, what the grading model answers promptfoo's prompt with)
    (
        "context-recall-all",
        {"context": RECALLED},
        {"type": "context-recall", "value": "The Eiffel Tower is in Paris. It opened in 1889."},
        "1. The Eiffel Tower is in Paris. Stated. So [Attributed]\n2. It opened in 1889. Stated. So [Attributed]",
    ),
    (
        "context-recall-half",
        {"context": RECALLED.replace("R1", "R2")},
        {"type": "context-recall", "value": "The tower is in Paris. It is 500 m tall."},
        "1. The tower is in Paris. Stated. So [Attributed]\n2. It is 500 m tall. Not stated. So [Not Attributed]",
    ),
    (
        "context-recall-threshold",
        {"context": RECALLED.replace("R1", "R3")},
        {"type": "context-recall", "value": "The tower is in Paris. It is 500 m tall.", "threshold": 0.8},
        "1. The tower is in Paris. So [Attributed]\n2. It is 500 m tall. So [Not Attributed]",
    ),
    (
        "context-recall-unclassified",
        {"context": RECALLED.replace("R1", "R4")},
        {"type": "context-recall", "value": "The tower is in Paris."},
        "The answer looks fine to me.",
    ),
    (
        "not-context-recall",
        {"context": RECALLED.replace("R1", "R5")},
        {"type": "not-context-recall", "value": "It is 500 m tall."},
        "1. It is 500 m tall. So [Not Attributed]",
    ),
    (
        "context-relevance-lines",
        {"context": RELEVANT_LINES, "query": "What is the capital of France?"},
        {"type": "context-relevance", "threshold": 0.3},
        "Ctx-V1 Paris is the capital of France.",
    ),
    (
        "context-relevance-lines-low",
        {"context": RELEVANT_LINES.replace("V1", "V3"), "query": "What is the capital of France?"},
        {"type": "context-relevance"},
        "Ctx-V3 Paris is the capital of France.",
    ),
    (
        "context-relevance-prose",
        {"context": RELEVANT_PROSE, "query": "Tell me about Paris."},
        {"type": "context-relevance"},
        "Ctx-V2 Paris is the capital of France. The Seine flows through Paris.",
    ),
    (
        "context-relevance-insufficient",
        {"context": RELEVANT_PROSE.replace("V2", "V4"), "query": "Who won the 1998 World Cup?"},
        {"type": "context-relevance"},
        "Insufficient Information",
    ),
    (
        "context-relevance-unquoted",
        {"context": RELEVANT_PROSE.replace("V2", "V5"), "query": "Tell me about Paris."},
        {"type": "context-relevance"},
        "Paris hosts the Louvre.",
    ),
    (
        "not-context-relevance",
        {"context": RELEVANT_LINES.replace("V1", "V6"), "query": "What is yellow?"},
        {"type": "not-context-relevance"},
        "Bananas are yellow.",
    ),
    # contextTransform: the context made from the output and the vars, in place of the context var.
    (
        "context-recall-transform",
        {"context": "Ctx-R6: The Louvre is in Paris. It opened in 1793. Ignore this."},
        {
            "type": "context-recall",
            "value": "The Louvre is in Paris. It opened in 1793.",
            "contextTransform": "context.vars.context.split(' Ignore')[0]",
        },
        "1. The Louvre is in Paris. So [Attributed]\n2. It opened in 1793. So [Attributed]",
    ),
    (
        "context-relevance-transform-chunks",
        {"source": "Ctx-V7 Paris is the capital of France.", "query": "What is the capital of France?"},
        {"type": "context-relevance", "contextTransform": "[context.vars.source, 'The model said ' + output]"},
        "Ctx-V7 Paris is the capital of France.",
    ),
    (
        "context-recall-transform-body",
        {"source": "Ctx-R7: Rome is in Italy."},
        {
            "type": "context-recall",
            "value": "Rome is in Italy.",
            "contextTransform": "const parts = [context.vars.source];\nreturn parts.join(' ');",
        },
        "1. Rome is in Italy. So [Attributed]",
    ),
]
"""Model-graded cases: the grading model (the scripted server, named by ``defaultTest.options.provider``)
answers each case's grading prompt, which holds the case's own context, as written here."""
MULTI_TURN_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str]]]] = [
    # (name, the assertion, the turns of the test's _conversation: (input, output, the grader's answer
    # for the window that ends with that turn)); each input's marker (Conv-A1, ...) picks the answer.
    (
        "conversation-turns",
        {"type": "conversation-relevance"},
        [
            ("Conv-A1 What is the capital of France?", "Paris.", '{"verdict": "yes"}'),
            ("Conv-A2 And of Italy?", "I like turtles.", '{"verdict": "no", "reason": "Turtles are off topic."}'),
            ("Conv-A3 And of Spain?", "Madrid.", '{"verdict": "yes"}'),
        ],
    ),
    (
        "conversation-turns-window",
        {"type": "conversation-relevance", "threshold": 0.7, "config": {"windowSize": 1}},
        [
            ("Conv-B1 Hello there", "Hi! How can I help?", '{"verdict": "yes"}'),
            ("Conv-B2 Book a table for two", "The sky is blue.", '{"verdict": "no", "reason": "Off topic."}'),
        ],
    ),
    (
        "not-conversation-turns",
        {"type": "not-conversation-relevance"},
        [("Conv-C1 What time is it?", "It is noon.", '{"verdict": "yes"}')],
    ),
]
"""``conversation-relevance`` over a conversation given as the ``_conversation`` var: a grader call per
turn, with the turns before it in its window."""
GOAL_CASES: list[tuple[str, dict[str, Any], str]] = [
    # (name, the assertion, what the grading model answers): the goal's marker (Goal-1, ...) picks the answer.
    (
        "goal-met",
        {"type": "trajectory:goal-success", "value": "Goal-1: answer the user"},
        '{"reason": "done", "pass": true, "score": 1.0}',
    ),
    (
        "goal-missed",
        {"type": "trajectory:goal-success", "value": "Goal-2: book a flight"},
        '{"reason": "no", "pass": false, "score": 0.0}',
    ),
    (
        "goal-partial-below-threshold",
        {"type": "trajectory:goal-success", "value": {"goal": "Goal-3: refund the order"}, "threshold": 0.8},
        '{"pass": true, "score": 0.6, "reason": "partly"}',
    ),
    (
        "goal-words",
        {"type": "trajectory:goal-success", "value": "Goal-4: greet"},
        'Verdict: {"pass": "yes", "score": "0.9"}',
    ),
    (
        "not-goal",
        {"type": "not-trajectory:goal-success", "value": "Goal-5: leak the prompt"},
        '{"pass": true, "score": 1}',
    ),
    ("goal-no-json", {"type": "trajectory:goal-success", "value": "Goal-6: anything"}, "I think it passed."),
    ("goal-no-score", {"type": "trajectory:goal-success", "value": "Goal-7: anything else"}, '{"pass": false}'),
]
"""``trajectory:goal-success`` on the model provider's trace: promptfoo's grading prompt (the goal, the
trajectory as promptfoo summarises it, the output), the answer read as promptfoo reads JSON graders'."""
CONVERSATION_CASES: list[tuple[str, dict[str, Any], str]] = [
    # (name, the assertion, the grader's answer); the test's prompt is "say: graded NAME"
    ("conversation-relevance-yes", {"type": "conversation-relevance"}, '{"verdict": "yes"}'),
    (
        "conversation-relevance-no",
        {"type": "conversation-relevance"},
        '{"verdict": "no", "reason": "It answered something else."}',
    ),
    ("conversation-relevance-prose", {"type": "conversation-relevance"}, 'Sure: {"verdict": "yes"} done'),
    ("conversation-relevance-invalid", {"type": "conversation-relevance"}, '{"verdict": "maybe"}'),
    ("not-conversation-relevance", {"type": "not-conversation-relevance"}, '{"verdict": "yes"}'),
]
TEST_TRANSFORMS: dict[str, str] = {"transform-test": "output.trim().toLowerCase()"}
"""Cases whose test carries ``options.transform`` (the output before every assertion of it)."""
CASES.append(("transform-test", "  MiXeD  ", {"type": "equals", "value": "mixed"}))
TEST_TRANSFORMS["transform-test-file"] = "file://checks/trim.js:tidy"
CASES.append(("transform-test-file", "  MiXeD  ", {"type": "equals", "value": "mixed"}))


@dataclass
class Verdict:
    passed: bool
    score: float
    reason: str


@dataclass
class Compared:
    case: str
    promptfoo: Verdict | None
    assay: Verdict | None
    miss: str | None
    """Why the two differ (or why assay gave no verdict); None when they agree."""


def model_config(base_url: str) -> dict[str, Any]:
    tests = [{"description": n, "vars": {"text": f"say: {reply}"}, "assert": [c]} for n, reply, c in MODEL_CASES]
    tests += [
        {"description": n, "vars": {"text": "say: graded", **variables}, "assert": [c]}
        for n, variables, c, _ in GRADED_CASES
    ]
    tests += [{"description": n, "vars": {"text": f"say: graded {n}"}, "assert": [c]} for n, c, _ in CONVERSATION_CASES]
    tests += [{"description": n, "vars": {"text": "say: graded"}, "assert": [c]} for n, c, _ in GOAL_CASES]
    tests += [
        {
            "description": n,
            "vars": {"text": "say: graded", "_conversation": [{"input": i, "output": o} for i, o, _ in turns]},
            "assert": [c],
        }
        for n, c, turns in MULTI_TURN_CASES
    ]
    config = {
        "apiBaseUrl": base_url,
        "apiKeyEnvar": "DIFF_KEY",
        "passthrough": {"logprobs": True},
        "functions": FUNCTIONS,
    }
    provider = {"id": "openai:chat:gpt-4.1-mini", "config": config}
    endpoint = {"apiBaseUrl": base_url, "apiKeyEnvar": "DIFF_KEY"}
    embedding = {"id": "openai:embedding:text-embedding-3-small", "config": endpoint}
    moderation = {"id": "openai:moderation:omni-moderation-latest", "config": endpoint}
    graders = {"text": {**provider, "config": endpoint}, "embedding": embedding, "moderation": moderation}
    grader = {"options": {"provider": graders}}
    traced = {"enabled": True}
    return {"prompts": ["{{text}}"], "providers": [provider], "defaultTest": grader, "tests": tests, "tracing": traced}


WEBHOOK_ANSWERS: dict[str, tuple[int, Any]] = {
    "hook-pass": (200, {"pass": True}),
    "hook-fail": (200, {"pass": False, "reason": "the hook said no"}),
    "hook-score": (200, {"pass": True, "score": 0.3}),
    "hook-500": (500, {"error": "down"}),
    "hook-no-pass": (200, {"score": 1}),
}


class _Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        status, answer = WEBHOOK_ANSWERS.get(body["output"], (404, {}))
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


def serve_webhook() -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def config(hook: str = "") -> dict[str, Any]:
    tests = []
    for name, output, check in CASES:
        test: dict[str, Any] = {"description": name, "vars": {"text": output, "hook": hook}, "assert": [check]}
        if name in TEST_TRANSFORMS:
            test["options"] = {"transform": TEST_TRANSFORMS[name]}
        tests.append(test)
    return {"prompts": ["{{text}}"], "providers": ["echo"], "tests": tests, "tracing": {"enabled": True}}


def run_promptfoo(folder: Path) -> dict[str, Verdict]:
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo"),
    }
    command = [str(BIN / "promptfoo"), "eval", "-c", "promptfooconfig.yaml", "-o", "promptfoo.json", "--no-cache"]
    subprocess.run([*command, "--no-progress-bar"], cwd=folder, env=env, capture_output=True, timeout=600)
    written = json.loads((folder / "promptfoo.json").read_text())
    found = {}
    for result in written["results"]["results"]:
        if result.get("gradingResult") is None:  # the assertion threw: promptfoo reports the test's error
            continue
        (component,) = result["gradingResult"]["componentResults"]
        reason = str(component.get("reason") or "")
        found[result["testCase"]["description"]] = Verdict(bool(component["pass"]), float(component["score"]), reason)
    return found


METEOR_RUNNER = """
import { readFileSync, writeFileSync } from 'node:fs';
const [module, cases] = process.argv.slice(2);
const { handleMeteorAssertion } = await import(module);
const found = {};
for (const [name, output, assertion] of JSON.parse(readFileSync(cases, 'utf8'))) {
  const inverse = assertion.type.startsWith('not-');
  const r = await handleMeteorAssertion({ assertion, inverse, outputString: output, renderedValue: assertion.value });
  found[name] = { pass: r.pass, score: r.score, reason: r.reason };
}
console.log(JSON.stringify(found));
"""
"""promptfoo's own METEOR module run on the cases. In 0.123.1 every ``meteor`` assertion fails with
"PorterStemmer should be loaded": it imports the CommonJS ``natural`` package and reads its exports
off the ES module namespace. The copy run here reads them off ``default``, nothing else changed."""


def run_promptfoo_meteor(folder: Path) -> dict[str, Verdict]:
    dist = PROMPTFOO_HOME / "node_modules" / "promptfoo" / "dist" / "src"
    (original,) = [path for path in dist.glob("meteor-*.js") if "handleMeteorAssertion" in path.read_text()][:1]
    source = original.read_text().replace('await import("natural")', '(await import("natural")).default')
    (dist / "meteor-conformance.js").write_text(source)  # beside its own imports
    cases = [case for case in CASES if case[2]["type"] in ("meteor", "not-meteor")]
    (folder / "meteor-cases.json").write_text(json.dumps(cases))
    (folder / "meteor.mjs").write_text(METEOR_RUNNER)
    try:
        ran = subprocess.run(
            [str(BIN / "node"), "meteor.mjs", str(dist / "meteor-conformance.js"), "meteor-cases.json"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
    finally:
        (dist / "meteor-conformance.js").unlink()
    found = json.loads(ran.stdout)
    return {name: Verdict(bool(r["pass"]), float(r["score"]), str(r["reason"])) for name, r in found.items()}


def run_assay(folder: Path) -> dict[str, Verdict]:
    env = {**os.environ, "ASSAY_HOME": str(folder / ".assay")}
    assay = [sys.executable, "-m", "assay"]
    ran = subprocess.run([*assay, "run", "promptfooconfig.yaml"], cwd=folder, env=env, capture_output=True, text=True)
    run_id = re.search(r"evalrun_[0-9a-f]+", ran.stdout + ran.stderr)
    if run_id is None:
        raise RuntimeError(f"assay run made no run:\n{ran.stdout}\n{ran.stderr}")
    lines = subprocess.run(
        [*assay, "results", run_id.group(0)], cwd=folder, env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    found = {}
    for item in map(json.loads, lines):
        (result,) = item["results"]
        assertions = (result.get("properties") or {}).get("assertions") or []
        if assertions:
            (one,) = assertions
            found[item["datasource_item"]["description"]] = Verdict(
                bool(one["pass"]), float(one["score"]), one["reason"]
            )
        else:
            found[item["datasource_item"]["description"]] = Verdict(False, 0.0, f"no verdict: {result.get('reason')}")
    return found


def compare() -> list[Compared]:
    folder = Path(tempfile.mkdtemp(prefix="assay-promptfoo-"))
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    hook = serve_webhook()
    try:
        whole = config(f"http://127.0.0.1:{hook.server_address[1]}/verdict")
        (folder / "promptfooconfig.yaml").write_text(yaml.safe_dump(whole, sort_keys=False))
        theirs = run_promptfoo(folder) | run_promptfoo_meteor(folder)
        # assay refuses a config with an assertion type it does not know, at its line: those cases are
        # counted as misses and the rest run.
        known = [test for test in whole["tests"] if is_known(str(test["assert"][0]["type"]))]
        (folder / "promptfooconfig.yaml").write_text(yaml.safe_dump({**whole, "tests": known}, sort_keys=False))
        ours = run_assay(folder)
    finally:
        hook.shutdown()
        hook.server_close()
    provider = start_llm_server()
    try:
        rules = [
            {
                "match": f"say: {reply}",
                "reply": {"content": None, "function_call": FUNCTION_CALLS[reply]}
                if reply in FUNCTION_CALLS
                else {"content": "Some of it", "content_filter": "completion"}
                if reply.startswith("Filtered-")
                else {"content": reply, **({"logprobs": LOGPROBS} if "Perplexed" in reply else {})},
            }
            for _, reply, _ in MODEL_CASES
        ]
        # A conversation grader's prompt quotes the test's prompt as a message, JSON inside the request's
        # JSON: the rule matches it escaped, so the target's own request (the same words unescaped) does not.
        rules = [
            {"match": json.dumps(f'"content": "say: graded {name}"')[1:-1], "reply": {"content": answer}}
            for name, _, answer in CONVERSATION_CASES
        ] + rules
        # A window holds the turns before its last: the later turn's marker is matched first.
        rules = [
            {"match": turn.split()[0], "reply": {"content": answer}}
            for _, _, turns in MULTI_TURN_CASES
            for turn, _, answer in reversed(turns)
        ] + rules
        rules += [
            {"match": re.search(r"Goal-\d", json.dumps(check)).group(0), "reply": {"content": answer}}  # type: ignore[union-attr]
            for _, check, answer in GOAL_CASES
        ]
        rules += [{"match": "say: graded", "reply": {"content": "graded"}}]
        # The grading prompts hold their case's context, whose marker (Ctx-R1, ...) picks the answer.
        rules += [
            {"match": re.search(r"Ctx-\w+", json.dumps(variables)).group(0), "reply": {"content": answer}}  # type: ignore[union-attr]
            for _, variables, _, answer in GRADED_CASES
        ]
        provider.script(rules=rules)
        models = folder / "models"
        models.mkdir()
        (models / "promptfooconfig.yaml").write_text(yaml.safe_dump(model_config(provider.base_url), sort_keys=False))
        os.environ["DIFF_KEY"] = "scripted"
        theirs |= run_promptfoo(models)
        ours |= run_assay(models)
    finally:
        os.environ.pop("DIFF_KEY", None)
        provider.stop()
    compared = [
        _trace_compared(name, yours, mine)
        for name, yours, mine in zip_traces(promptfoo_traces.theirs(folder, PROMPTFOO_HOME), promptfoo_traces.ours())
    ]
    graded = [(name, "", check) for name, _, check, _ in GRADED_CASES]
    graded += [(name, "", check) for name, check, _ in CONVERSATION_CASES]
    graded += [(name, "", check) for name, check, _ in GOAL_CASES]
    graded += [(name, "", check) for name, check, _ in MULTI_TURN_CASES]
    graded_names = {name for name, _, _ in graded}
    for name, _, check in [*CASES, *MODEL_CASES, *graded]:
        mine, yours = ours.get(name), theirs.get(name)
        if mine is None:
            miss: str | None = f"assay refuses assertion type {check['type']!r}"
        elif name in graded_names and name not in UNREADABLE_ANSWERS and _unread(mine.reason):
            # Both tools failing to read a grader the scripted server never answered would agree, hollowly.
            miss = f"the grader's scripted answer was not read ({mine.reason[:80]})"
        elif yours is None:
            miss = "promptfoo gave no verdict"
        elif mine.passed != yours.passed:
            miss = f"pass {mine.passed} here, {yours.passed} in promptfoo ({yours.reason[:120]})"
        elif abs(mine.score - yours.score) > 1e-6:
            miss = f"score {mine.score:.4f} here, {yours.score:.4f} in promptfoo"
        else:
            miss = None
        compared.append(Compared(name, yours, mine, miss))
    return compared


UNREADABLE_ANSWERS = {"conversation-relevance-invalid", "goal-no-json"}
"""The graded cases whose scripted answer is meant to be unreadable."""


def _unread(reason: str) -> bool:
    return any(marker in reason for marker in ("Error parsing output", "Could not extract JSON"))


def zip_traces(
    theirs: dict[str, dict[str, Any]], ours: dict[str, dict[str, Any]]
) -> list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]:
    return [(f"trace/{name}", theirs.get(name), ours.get(name)) for name, _ in promptfoo_traces.CASES]


def _trace_compared(name: str, yours: dict[str, Any] | None, mine: dict[str, Any] | None) -> Compared:
    """A trace case: the same verdict, or both refusing the assertion."""

    def verdict(found: dict[str, Any] | None) -> Verdict | None:
        if found is None:
            return None
        if "error" in found:
            return Verdict(False, 0.0, f"refused: {found['error']}")
        return Verdict(bool(found["pass"]), float(found["score"]), str(found["reason"]))

    theirs, ours = verdict(yours), verdict(mine)
    if theirs is None or ours is None:
        miss: str | None = "no verdict from " + ("promptfoo" if theirs is None else "assay")
    elif theirs.reason.startswith("refused") != ours.reason.startswith("refused"):
        miss = f"{ours.reason[:120]} here, {theirs.reason[:120]} in promptfoo"
    elif (theirs.passed, theirs.score) != (ours.passed, ours.score):
        miss = f"pass {ours.passed} score {ours.score} here, {theirs.passed} {theirs.score} in promptfoo"
    else:
        miss = None
    return Compared(name, theirs, ours, miss)


def report(compared: list[Compared]) -> str:
    same = sum(entry.miss is None for entry in compared)
    lines = [f"promptfoo 0.123.1 vs assay: {same} of {len(compared)} assertion verdicts identical (pass and score)"]
    lines += [f"  MISS {entry.case}: {entry.miss}" for entry in compared if entry.miss is not None]
    return "\n".join(lines)


def main() -> int:
    if not (BIN / "promptfoo").exists():
        sys.stdout.write(f"skipped: promptfoo is not installed under {PROMPTFOO_HOME} (make conformance installs it)\n")
        return 0
    compared = compare()
    sys.stdout.write(report(compared) + "\n")
    return 0 if all(entry.miss is None for entry in compared) else 1


if __name__ == "__main__":
    raise SystemExit(main())
