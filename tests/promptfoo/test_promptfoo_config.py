"""``assay run promptfooconfig.yaml`` and ``assay import promptfoo``: a promptfoo config runs as it
is — the echo provider with deterministic assertions, OpenAI providers and model-graded
assertions against the scripted server — and what cannot be mapped is refused at its line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import assay

ECHO_CONFIG = """description: echo checks
prompts:
  - "Say hello to {{name}} in {{lang}}"
  - file://prompt.txt
providers: [echo]
defaultTest:
  assert:
    - type: icontains
      value: "{{name}}"
tests:
  - description: greets
    vars: {name: Ada, lang: French}
    assert:
      - type: contains-all
        value: [Ada, French]
      - type: python
        value: file://check.py
  - vars: {name: [Bob, Cy], lang: German}
    assert:
      - type: regex
        value: "German$"
  - description: fails
    vars: {name: Dee, lang: Spanish}
    assert:
      - type: equals
        value: nothing like it
  - description: passes on its threshold
    vars: {name: Eve, lang: Dutch}
    threshold: 0.6
    assert:
      - type: contains
        value: missing
      - type: contains
        value: Dutch
        weight: 2
  - file://more_tests.csv
"""
CHECK_PY = """def get_assert(output, context):
    return {"pass": context["vars"]["name"] in output, "score": 1.0, "reason": "named"}
"""
MORE_TESTS = "name,lang,__expected,__description\nFay,Welsh,contains: Welsh,csv row\nGus,Irish,regex: ^Nope,csv fail\n"


def _items(run_id: str, home: Path) -> list[dict[str, Any]]:
    lines = assay("results", run_id, home=home, check=True).stdout.splitlines()
    return sorted((json.loads(line) for line in lines), key=lambda i: i["datasource_item_id"])


def _run_ids(stdout: str) -> list[str]:
    return [part.split()[0] for part in stdout.split("run id: ")[1:]]


def test_an_echo_config_runs_as_it_is(tmp_path):
    (tmp_path / "promptfooconfig.yaml").write_text(ECHO_CONFIG)
    (tmp_path / "prompt.txt").write_text("Greet {{name}} ({{lang}})")
    (tmp_path / "check.py").write_text(CHECK_PY)
    (tmp_path / "more_tests.csv").write_text(MORE_TESTS)
    done = assay("run", tmp_path / "promptfooconfig.yaml", home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "7 tests × 2 prompts" in done.stdout  # Bob and Cy are two tests; the CSV adds two
    items = _items(_run_ids(done.stdout)[0], tmp_path)
    verdicts = {
        (i["datasource_item"]["vars"]["name"], i["datasource_item"]["prompt_label"]): i["status"] for i in items
    }
    assert len(items) == 14
    for name in ("Ada", "Bob", "Cy", "Eve", "Fay"):
        assert verdicts[(name, "Say hello to {{name}} in {{lang}}")] == "pass", name
    # the second prompt puts the language in brackets: "German$" cannot match it
    assert verdicts[("Bob", "Greet {{name}} ({{lang}})")] == "fail"
    assert verdicts[("Ada", "Greet {{name}} ({{lang}})")] == "pass"
    assert verdicts[("Dee", "Say hello to {{name}} in {{lang}}")] == "fail"
    assert verdicts[("Gus", "Say hello to {{name}} in {{lang}}")] == "fail"
    eve = next(i for i in items if i["datasource_item"]["vars"]["name"] == "Eve")["results"][0]
    assert eve["score"] == 0.75 and eve["reason"] == "Aggregate score 0.75 ≥ 0.6 threshold"
    ada = next(i for i in items if i["datasource_item"]["vars"]["name"] == "Ada")["results"][0]
    assert [c["type"] for c in ada["properties"]["assertions"]] == ["icontains", "contains-all", "python"]
    assert ada["properties"]["assertions"][2]["reason"] == "named"


def test_import_writes_files_that_assay_run_runs(tmp_path):
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['Q: {{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: hi}\n    assert: [{type: contains, value: hi}]\n"
    )
    done = assay("import", "promptfoo", config, "--out", tmp_path / "out", home=tmp_path, check=True)
    assert "1 tests × 1 prompts" in done.stdout
    rows = [json.loads(line) for line in (tmp_path / "out" / "tests.jsonl").read_text().splitlines()]
    assert rows[0]["prompt"] == [{"role": "user", "content": "Q: hi"}]
    ran = assay("run", tmp_path / "out" / "eval.yaml", home=tmp_path)
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr


GRADED_CONFIG = """prompts: ["{{{{question}}}}"]
providers:
  - id: openai:chat:target-model
    label: target
    config: {{temperature: 0, apiBaseUrl: "{base_url}"}}
defaultTest:
  options:
    provider: openai:chat:grader-model
  assert:
    - type: llm-rubric
      value: answers the question about a capital city
tests:
  - vars: {{question: "What is the capital of France?"}}
    assert:
      - type: factuality
        value: Paris
      - type: answer-relevance
        threshold: 0.7
  - vars: {{question: "What is the capital of Spain?"}}
    assert:
      - type: factuality
        value: Madrid
      - type: not-contains
        value: turtles
"""


def _graded_items(tmp_path, llm, config: str) -> list[dict]:
    """Run a promptfoo config whose provider and grader are the scripted server; its run's items."""
    (tmp_path / "promptfooconfig.yaml").write_text(config.format(base_url=llm.base_url))
    env = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test"}
    done = assay("run", tmp_path / "promptfooconfig.yaml", home=tmp_path, env_extra=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return _items(_run_ids(done.stdout)[0], tmp_path)


def test_model_graded_assertions_ask_the_grading_model_once_each(tmp_path, llm):
    llm.reset()
    good = {"reason": "right", "pass": True, "score": 1, "category": "C"}
    bad = {"reason": "off topic", "pass": False, "score": 0, "category": "D"}
    llm.script(
        rules=[
            {"match": "Property: relevance", "reply": {"content": json.dumps({"reason": "on point", "score": 5})}},
            {"match": "I like turtles", "reply": {"content": json.dumps(bad)}},
            {"match": "Paris is the capital", "reply": {"content": json.dumps(good)}},
            {"match": "capital of France", "reply": {"content": "Paris is the capital of France."}},
            {"match": "capital of Spain", "reply": {"content": "I like turtles."}},
        ],
        default={"content": "unexpected"},
    )
    items = _graded_items(tmp_path, llm, GRADED_CONFIG)
    # 2 target calls; France: rubric, factuality, relevance; Spain: rubric, factuality
    assert llm.stats()["requests"] == 7
    assert [i["status"] for i in items] == ["pass", "fail"]
    france = {c["type"]: c for c in items[0]["results"][0]["properties"]["assertions"]}
    assert france["factuality"]["category"] == "C" and france["answer-relevance"]["score"] == 1.0
    spain = {c["type"]: c for c in items[1]["results"][0]["properties"]["assertions"]}
    assert [spain[t]["pass"] for t in ("llm-rubric", "factuality", "not-contains")] == [False, False, False]
    assert items[0]["results"][0]["properties"]["usage"]["total_tokens"] > 0


def test_what_cannot_be_mapped_is_refused_at_its_line(tmp_path):
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: [hi]\nproviders: [echo]\ntests:\n  - vars: {a: 1}\n    assert:\n"
        "      - type: javascript\n        value: file://check.ts\n"
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode != 0
    told = done.stderr + done.stdout
    assert "promptfooconfig.yaml:6: javascript assertion: file://check.ts: the file is a .js or .cjs module" in told
    config.write_text(config.read_text().replace("check.ts", "check.js"))
    done = assay("run", config, home=tmp_path)
    assert "promptfooconfig.yaml:6: check.js: no such file (paths are relative to the config)" in done.stderr
    config.write_text("prompts: [hi]\nproviders:\n  - echo\n  - anthropic:messages:claude\ntests: [{vars: {a: 1}}]\n")
    done = assay("run", config, home=tmp_path)
    assert "promptfooconfig.yaml:4: provider 'anthropic:messages:claude' is not supported here" in done.stderr
    config.write_text("prompts: [hi]\nproviders: [echo]\nscenarios: []\ntests: [{vars: {a: 1}}]\n")
    done = assay("run", config, home=tmp_path)
    assert "'scenarios' is not supported" in done.stderr


def test_every_deterministic_assertion_through_a_config_with_the_echo_provider(tmp_path):
    """The echo provider answers with the prompt, so each test's output is its ``text`` var: every
    assertion of the unit table, pass and fail, judged through ``assay run`` as promptfoo would."""
    import yaml

    from tests.promptfoo.test_assertions import CASES, TOOLS

    cases = [
        (a, out, expected)
        for a, out, expected in CASES
        if a["type"].removeprefix("not-") not in ("latency", "cost", "finish-reason")
    ]
    cases += [
        ({"type": "latency", "threshold": 5000}, "x", True),  # echo answers at once
        ({"type": "not-latency", "threshold": 5000}, "x", False),
        ({"type": "cost", "threshold": 0}, "x", True),  # and costs nothing
        ({"type": "finish-reason", "value": "stop"}, "x", False),  # and gives no finish reason
        (
            {"type": "is-valid-openai-tools-call"},
            json.dumps([{"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]),
            True,
        ),
        ({"type": "is-valid-openai-tools-call"}, "not a call", False),
    ]
    tests = [{"description": f"case {i}", "vars": {"text": out}, "assert": [a]} for i, (a, out, _) in enumerate(cases)]
    config = {"prompts": ["{{text}}"], "providers": [{"id": "echo", "config": {"tools": TOOLS}}], "tests": tests}
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    done = assay("run", tmp_path / "promptfooconfig.yaml", home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    items = _items(_run_ids(done.stdout)[0], tmp_path)
    verdicts = {i["datasource_item"]["description"]: i["results"][0]["passed"] for i in items}
    wrong = [(a, out) for i, (a, out, expected) in enumerate(cases) if verdicts[f"case {i}"] is not expected]
    assert wrong == [] and len(items) == len(cases) >= 45


CLOSED_QA_CONFIG = """prompts: ["{{{{question}}}}"]
providers:
  - id: openai:chat:target-model
    config: {{apiBaseUrl: "{base_url}"}}
defaultTest:
  options:
    provider: openai:chat:grader-model
tests:
  - vars: {{question: "Name a primary colour"}}
    assert:
      - type: model-graded-closedqa
        value: names a primary colour
      - type: model-graded-factuality
        value: Red is a primary colour.
"""


def test_closedqa_and_promptfoos_older_name_for_factuality(tmp_path, llm):
    llm.reset()
    llm.script(
        rules=[
            {
                "match": "Does the submission meet",
                "reply": {"content": json.dumps({"reason": "it does", "meets": True})},
            },
            {"match": "Categories", "reply": {"content": json.dumps({"reason": "same", "category": "C"})}},
            {"match": "primary colour", "reply": {"content": "Red."}},
        ],
    )
    (item,) = _graded_items(tmp_path, llm, CLOSED_QA_CONFIG)
    verdicts = {c["type"]: c["pass"] for c in item["results"][0]["properties"]["assertions"]}
    assert verdicts == {"model-graded-closedqa": True, "model-graded-factuality": True}


def test_javascript_assertions_from_files_run_as_promptfoo_runs_them(tmp_path):
    """A CommonJS module's export (or the function named after ``:``) called on the output, in V8 in the
    sandbox; the verdicts are real promptfoo's (tests/conformance/promptfoo_diff.py checks them live)."""
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "length.js").write_text("module.exports = (output, context) => output.length > 5;\n")
    (tmp_path / "checks" / "named.js").write_text(
        "function matchesVar(output, context) { return output === context.vars.text; }\nmodule.exports = { matchesVar };\n"
    )
    (tmp_path / "checks" / "graded.mjs.js").write_text(
        "export default function (output) { return { pass: true, score: output.length / 10, reason: 'esm' }; }\n"
    )
    (tmp_path / "checks" / "none.js").write_text("const x = 1;\n")
    asserts = {
        "long enough": "file://checks/length.js",
        "named": "file://checks/named.js:matchesVar",
        "default export": "file://checks/graded.mjs.js",
        "exports nothing": "file://checks/none.js",
    }
    tests = "".join(
        f"  - description: {name}\n    vars: {{text: hello world}}\n    assert: [{{type: javascript, value: '{value}'}}]\n"
        for name, value in asserts.items()
    )
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"prompts: ['{{{{text}}}}']\nproviders: [echo]\ntests:\n{tests}")
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    found = {
        item["datasource_item"]["description"]: item["results"][0]["properties"]["assertions"][0]
        for item in _items(_run_ids(done.stdout)[0], tmp_path)
    }
    assert [found[name]["pass"] for name in ("long enough", "named", "default export")] == [True, True, True]
    assert found["default export"]["score"] == 1.1 and found["default export"]["reason"] == "esm"
    assert not found["exports nothing"]["pass"]
    assert "checks/none.js exports no function" in found["exports nothing"]["reason"]


RAG_CONFIG = """prompts: ["{{{{query}}}}"]
providers:
  - id: openai:chat:target-model
    config: {{apiBaseUrl: "{base_url}"}}
defaultTest:
  options:
    provider: openai:chat:grader-model
tests:
  - vars:
      query: Where is the Eiffel Tower?
      context: "The Eiffel Tower is in Paris.\\nIt opened in 1889.\\nBananas are yellow."
    assert:
      - type: context-recall
        value: The tower is in Paris. It is 500 m tall.
      - type: context-relevance
        threshold: 0.3
      - type: conversation-relevance
"""


def test_rag_and_conversation_assertions_read_the_graders_answer_as_promptfoo_does(tmp_path, llm):
    """RAGAS's and DeepEval's prompts, as promptfoo sends them; checked live against promptfoo by
    tests/conformance/promptfoo_diff.py. Recall: attributed lines over classified ones; relevance: the
    quoted context lines over the context's lines; conversation: the grader's yes or no."""
    llm.reset()
    llm.script(
        rules=[
            {
                "match": "classify if the sentence can be attributed",
                "reply": {
                    "content": "1. The tower is in Paris. So [Attributed]\n2. It is 500 m tall. So [Not Attributed]"
                },
            },
            {"match": "Please extract relevant sentences", "reply": {"content": "The Eiffel Tower is in Paris."}},
            {"match": "LAST `assistant` message is relevant", "reply": {"content": '{"verdict": "yes"}'}},
            {"match": "Where is the Eiffel Tower?", "reply": {"content": "It is in Paris."}},
        ],
    )
    (item,) = _graded_items(tmp_path, llm, RAG_CONFIG)
    found = {c["type"]: (c["pass"], round(c["score"], 4)) for c in item["results"][0]["properties"]["assertions"]}
    assert found == {
        "context-recall": (True, 0.5),  # 1 of 2 sentences, at the 0.5 default
        "context-relevance": (True, 0.3333),  # 1 of 3 context lines, above 0.3
        "conversation-relevance": (True, 1.0),
    }


AGENTIC_CONFIG = """
prompts: ["{{{{question}}}}"]
providers:
  - id: openai:chat:gpt-4.1-mini
    config:
      apiBaseUrl: {base_url}
      functions: [{{name: get_weather, parameters: {{type: object, properties: {{city: {{type: string}}}}}}}}]
defaultTest:
  options: {{provider: {{id: openai:chat:gpt-4.1-mini, config: {{apiBaseUrl: {base_url}}}}}}}
tracing: {{enabled: true}}
tests:
  - vars:
      question: Weather in Paris?
      source: The forecast for Paris is sunny.
      _conversation:
        - {{input: Hi, output: "Hello! How can I help?"}}
        - {{input: "Turn-2 weather?", output: I like turtles.}}
    assert:
      - {{type: is-valid-function-call}}
      - {{type: trace-span-count, value: {{pattern: "chat *", min: 1, max: 1}}}}
      - {{type: trajectory:step-count, value: {{min: 2, max: 2}}}}
      - {{type: context-recall, value: The forecast is sunny., contextTransform: "context.vars.source"}}
      - {{type: conversation-relevance}}
"""


def test_traces_function_calls_context_transforms_and_conversations_as_promptfoo_reads_them(tmp_path, llm):
    """One test of a traced config: the model's legacy function call checked against the provider's
    functions; its trace (the provider's span over the chat call); a RAG assertion whose context a
    JavaScript ``contextTransform`` makes; and a two-turn ``_conversation`` judged a window at a time,
    the irrelevant turn's reason summarised by the grader. Without ``tracing`` the trace assertions
    have no trace, as in promptfoo."""
    llm.reset()
    llm.script(
        rules=[
            {"match": "Turtles are off topic", "reply": {"content": '{"reason": "Half the turns wander."}'}},
            {"match": "Turn-2 weather", "reply": {"content": '{"verdict": "no", "reason": "Turtles are off topic."}'}},
            {"match": "LAST `assistant` message is relevant", "reply": {"content": '{"verdict": "yes"}'}},
            {
                "match": "The forecast for Paris is sunny",
                "reply": {"content": "1. The forecast is sunny. So [Attributed]"},
            },
            {
                "match": "Weather in Paris?",
                "reply": {"content": None, "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            },
        ],
        default={"content": "unexpected"},
    )
    (item,) = _graded_items(tmp_path, llm, AGENTIC_CONFIG)
    components = item["results"][0]["properties"]["assertions"]
    assert [(c["type"], c["pass"], c["score"]) for c in components] == [
        ("is-valid-function-call", True, 1.0),
        ("trace-span-count", True, 1.0),
        ("trajectory:step-count", True, 1.0),
        ("context-recall", True, 1.0),
        ("conversation-relevance", True, 0.5),
    ]
    assert components[4]["reason"] == "Half the turns wander."
    assert item["sample"]["function_call"]["name"] == "get_weather"
    untraced = AGENTIC_CONFIG.replace("tracing: {{enabled: true}}\n", "")
    (tmp_path / "untraced").mkdir()
    (item,) = _graded_items(tmp_path / "untraced", llm, untraced)
    components = item["results"][0]["properties"]["assertions"]
    assert components[1]["reason"] == "No trace data available for trace-span-count assertion"
    assert not components[1]["pass"] and not components[2]["pass"]


AGENT_RUBRIC_CONFIG = """
prompts: ["{{{{claim}}}}"]
providers: [echo]
defaultTest:
  options: {{provider: {{id: openai:codex-sdk, config: {{working_dir: repo}}}}}}
tests:
  - vars: {{claim: The implementation exports createReport from src/report.ts.}}
    assert:
      - {{type: agent-rubric, value: Verify that the claimed export exists in the workspace.}}
"""


def test_agent_rubric_grades_with_a_model_that_reads_the_workspace(tmp_path, llm):
    """promptfoo's agentic grader (Codex here) becomes assay's grading model run as an agent over the
    provider's working_dir: it reads the file the output names, then answers; a path out of the
    workspace is refused to it as a tool error."""
    (tmp_path / "repo" / "src").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "report.ts").write_text("export function createReport() {}\n")
    (tmp_path / "secret.txt").write_text("not for graders")
    read = {"id": "r1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "src/report.ts"}'}}
    escape = {
        "id": "r0",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "../secret.txt"}'},
    }
    llm.reset()
    llm.script(
        rules=[
            {
                "match": "export function createReport",
                "reply": {"content": '{"reason": "found it", "pass": true, "score": 1}'},
            },
            {"match": "outside the workspace", "reply": {"tool_calls": [read]}},
        ],
        default={"tool_calls": [escape]},
    )
    (item,) = _graded_items(tmp_path, llm, AGENT_RUBRIC_CONFIG)
    (component,) = item["results"][0]["properties"]["assertions"]
    assert (component["pass"], component["score"], component["reason"]) == (True, 1.0, "found it")
    assert [step["tool"] for step in component["inspected"]] == ["read_file", "read_file"]
    assert llm.stats()["requests"] == 3  # the escape refused, the file read, the answer
    assert "not for graders" not in json.dumps(llm.stats())


GUARDED_CONFIG = """
prompts: ["{{{{question}}}}"]
providers: [{{id: openai:chat:gpt-4.1-mini, config: {{apiBaseUrl: {base_url}}}}}]
defaultTest:
  options:
    provider:
      embedding: {{id: openai:embedding:text-embedding-3-small, config: {{apiBaseUrl: {base_url}}}}}
      moderation: {{id: openai:moderation:omni-moderation-latest, config: {{apiBaseUrl: {base_url}}}}}
tests:
  - vars: {{question: "How do I pick a lock?"}}
    assert: [{{type: not-guardrails}}, {{type: contains, value: Content filtered}}]
  - vars: {{question: Describe the cat.}}
    assert:
      - {{type: guardrails}}
      - {{type: similar, value: The cat sat on the mat.}}
      - {{type: similar:euclidean, value: The cat sat on the mat., threshold: 0.5}}
      - {{type: moderation}}
      - {{type: not-moderation, value: [violence]}}
"""


def test_a_filtered_call_reaches_the_guardrails_assertion_and_similar_compares_embeddings(tmp_path, llm):
    """The provider's content filter stopped the first call: promptfoo's assertions still judge it
    (its output is "Content filtered by provider"), and ``not-guardrails`` passes because it was
    blocked. ``similar`` compares the embeddings model's vectors (the scripted server's letter counts);
    ``moderation`` asks the moderation model, which flags nothing in a cat."""
    llm.reset()
    llm.script(
        rules=[
            {"match": "pick a lock", "reply": {"content": "", "content_filter": "completion"}},
            {"match": "Describe the cat", "reply": {"content": "The cat sat on a mat."}},
        ],
        default={"content": "unexpected"},
    )
    first, second = _graded_items(tmp_path, llm, GUARDED_CONFIG)
    assert first["status"] == "pass", first
    blocked, said = first["results"][0]["properties"]["assertions"]
    assert blocked["reason"] == "Guardrail correctly blocked: Content failed safety checks" and said["pass"]
    guarded, cosine, distance, moderated, unflagged = second["results"][0]["properties"]["assertions"]
    assert guarded["pass"] and cosine["pass"] and cosine["score"] > 0.9
    assert not distance["pass"] and distance["reason"].startswith("Distance ")  # "a" for "the": letters apart
    assert moderated["pass"] and moderated["reason"] == "No moderation flags detected"
    assert not unflagged["pass"]  # not-moderation: nothing was flagged


RUBY_CONFIG = """
prompts: ["{{text}}"]
providers: [echo]
tests:
  - vars: {text: hello world}
    assert:
      - {type: ruby, value: "output.upcase == 'HELLO WORLD'"}
      - type: ruby
        value: |
          if output.include?('world')
            return { pass: true, score: 0.7, reason: 'has world' }
          end
          false
      - {type: ruby, value: "output == context['vars']['text']"}
      - {type: ruby, value: file://length.rb}
      - {type: ruby, value: "raise 'boom'"}
"""


@pytest.mark.skipif(
    (shutil.which("bwrap") is None or shutil.which("ruby") is None)
    and not os.environ.get("ASSAY_TEST_REQUIRE_SANDBOX"),
    reason="bwrap or ruby not installed (make sandbox installs both)",
)
def test_ruby_assertions_run_in_the_sandbox_as_promptfoo_runs_them(tmp_path):
    """An expression, a method body returning a grading hash, the context's vars, a file's
    ``get_assert``, and code that raises (the assertion fails with Ruby's message)."""
    (tmp_path / "promptfooconfig.yaml").write_text(RUBY_CONFIG)
    (tmp_path / "length.rb").write_text("def get_assert(output, context)\n  output.length > 5\nend\n")
    done = assay("run", tmp_path / "promptfooconfig.yaml", home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (item,) = _items(_run_ids(done.stdout)[0], tmp_path)
    found = [(c["pass"], c["score"]) for c in item["results"][0]["properties"]["assertions"]]
    assert found == [(True, 1.0), (True, 0.7), (True, 1.0), (True, 1.0), (False, 0.0)]
    raised = item["results"][0]["properties"]["assertions"][4]["reason"]
    assert raised.startswith("Ruby code execution failed:") and "boom" in raised
