"""``assay init``: a runnable eval.yaml and a small dataset to start from, chosen from templates.

Every template runs offline at once (model-free evaluators only); its judges wait, commented out
under a commented ``models:`` block, for an endpoint to be named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

MODELS_BLOCK = """\
# To add LLM judges, name a model (any OpenAI-compatible endpoint) and uncomment the judges below:
# models:
#   judge:
#     model: gpt-4.1-mini                      # or llama3.1 on Ollama:
#     # base_url: http://localhost:11434/v1    # a local endpoint needs no key
#     api_key_env: OPENAI_API_KEY
# options: {eval_model: judge}
"""


@dataclass(frozen=True)
class Template:
    summary: str
    evaluators: str
    judges: str
    rows: list[dict[str, Any]]


QA = Template(
    "answers to questions, scored against reference answers",
    """\
  - builtin.f1_score
  - name: rougeL
    evaluator_name: builtin.rouge_score
    initialization_parameters:
      {rouge_type: rougeL, f1_score_threshold: 0.4, precision_threshold: 0.4, recall_threshold: 0.4}
  - type: string_check
    name: names_the_product
    input: "{{item.response}}"
    reference: "{{item.product}}"
    operation: ilike
""",
    """\
  # - builtin.relevance
  # - builtin.coherence
""",
    [
        {
            "query": "How do I reset my password?",
            "product": "Acme",
            "response": "Open Acme settings, choose Security, then Reset password.",
            "ground_truth": "In Acme settings, go to Security and click Reset password.",
        },
        {
            "query": "Can I export my data?",
            "product": "Acme",
            "response": "Yes: Acme exports everything as CSV from the Account page.",
            "ground_truth": "Acme lets you export all data as CSV from Account.",
        },
        {
            "query": "Is there a free plan?",
            "product": "Acme",
            "response": "There is a free plan for up to three users.",
            "ground_truth": "Acme is free for up to three users.",
        },
        {
            "query": "Which browsers are supported?",
            "product": "Acme",
            "response": "Chrome, Firefox and Safari, in their two latest versions.",
            "ground_truth": "Acme supports the latest two versions of Chrome, Firefox and Safari.",
        },
        {
            "query": "How do I delete my account?",
            "product": "Acme",
            "response": "Please contact support.",
            "ground_truth": "Delete your Acme account from Account, then Danger zone.",
        },
    ],
)

RAG = Template(
    "retrieval-augmented answers: the retrieved documents ranked against labels, the answer against a reference",
    """\
  - builtin.document_retrieval
  - builtin.f1_score
""",
    """\
  # - builtin.groundedness
  # - builtin.retrieval
  # - builtin.response_completeness
""",
    [
        {
            "query": "What is the refund window?",
            "context": "Refunds are accepted within 30 days of purchase.",
            "response": "You can get a refund within 30 days.",
            "ground_truth": "Refunds are accepted for 30 days.",
            "retrieval_ground_truth": [
                {"document_id": "refunds", "query_relevance_label": 4},
                {"document_id": "shipping", "query_relevance_label": 0},
            ],
            "retrieved_documents": [
                {"document_id": "refunds", "relevance_score": 9.1},
                {"document_id": "shipping", "relevance_score": 2.3},
            ],
        },
        {
            "query": "Do you ship abroad?",
            "context": "We ship to the EU, the UK and Canada.",
            "response": "We ship to the EU, the UK and Canada.",
            "ground_truth": "Shipping covers the EU, UK and Canada.",
            "retrieval_ground_truth": [
                {"document_id": "shipping", "query_relevance_label": 4},
                {"document_id": "refunds", "query_relevance_label": 0},
            ],
            "retrieved_documents": [
                {"document_id": "refunds", "relevance_score": 7.5},
                {"document_id": "shipping", "relevance_score": 6.9},
            ],
        },
        {
            "query": "How long does delivery take?",
            "context": "Standard delivery takes 3 to 5 business days.",
            "response": "Delivery takes about a week.",
            "ground_truth": "Standard delivery takes 3-5 business days.",
            "retrieval_ground_truth": [{"document_id": "delivery", "query_relevance_label": 4}],
            "retrieved_documents": [
                {"document_id": "delivery", "relevance_score": 8.8},
                {"document_id": "refunds", "relevance_score": 1.2},
            ],
        },
    ],
)

AGENT_TOOLS = Template(
    "an agent's tool calls against the expected tools, and its final answer against a reference",
    """\
  - name: tools_in_order
    evaluator_name: builtin.task_navigation_efficiency
    initialization_parameters: {matching_mode: in_order_match}
    data_mapping:
      response: "{{item.messages}}"
      ground_truth: "{{item.expected_tools}}"
  - name: answer_f1
    evaluator_name: builtin.f1_score
    data_mapping:
      response: "{{item.messages}}"
      ground_truth: "{{item.ground_truth}}"
""",
    """\
  # - name: tool_calls
  #   evaluator_name: builtin.tool_call_accuracy
  #   data_mapping: {query: "{{item.messages}}", response: "{{item.messages}}", tool_definitions: "{{item.tools}}"}
  # - name: intent
  #   evaluator_name: builtin.intent_resolution
  #   data_mapping: {query: "{{item.messages}}", response: "{{item.messages}}"}
""",
    [
        {
            "messages": [
                {"role": "user", "content": "Where is order 1042?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "lookup_order", "arguments": '{"order_id": "1042"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped", "carrier": "UPS"}'},
                {"role": "assistant", "content": "Order 1042 has shipped with UPS."},
            ],
            "expected_tools": ["lookup_order"],
            "ground_truth": "Order 1042 shipped with UPS.",
            "tools": [
                {
                    "name": "lookup_order",
                    "description": "Look up an order by id.",
                    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
                }
            ],
        },
        {
            "messages": [
                {"role": "user", "content": "Cancel order 2002."},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "cancel_order", "arguments": '{"order_id": "2002"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c2", "content": '{"canceled": true}'},
                {"role": "assistant", "content": "Done, order 2002 is canceled."},
            ],
            "expected_tools": ["lookup_order", "cancel_order"],
            "ground_truth": "Order 2002 has been canceled.",
            "tools": [
                {
                    "name": "cancel_order",
                    "description": "Cancel an order by id.",
                    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
                }
            ],
        },
    ],
)

CONVERSATION = Template(
    "whole multi-turn conversations: the final answer against a reference, a must-say check",
    """\
  - name: final_answer_f1
    evaluator_name: builtin.f1_score
    data_mapping:
      response: "{{item.messages}}"
      ground_truth: "{{item.ground_truth}}"
  - type: string_check
    name: says_the_fix
    input: "{{item.messages}}"
    reference: "{{item.must_mention}}"
    operation: ilike
""",
    """\
  # - name: coherence
  #   evaluator_name: builtin.coherence
  #   data_mapping: {conversation: "{{item.messages}}"}
  # - name: satisfaction
  #   evaluator_name: builtin.customer_satisfaction
  #   data_mapping: {messages: "{{item.messages}}"}
""",
    [
        {
            "messages": [
                {"role": "user", "content": "My thermostat shows E4."},
                {"role": "assistant", "content": "E4 means the sensor lost contact. Is the battery door closed?"},
                {"role": "user", "content": "Yes, closed."},
                {"role": "assistant", "content": "Reseat the sensor cable, then hold the button for 10 s to restart."},
            ],
            "ground_truth": "Reseat the sensor cable and restart the thermostat.",
            "must_mention": "sensor cable",
        },
        {
            "messages": [
                {"role": "user", "content": "The app will not log me in."},
                {"role": "assistant", "content": "Are you on the latest version?"},
                {"role": "user", "content": "I think so."},
                {"role": "assistant", "content": "Please clear the app cache, then sign in again."},
            ],
            "ground_truth": "Update the app, clear its cache and sign in again.",
            "must_mention": "update",
        },
    ],
)

TEMPLATES = {"qa": QA, "rag": RAG, "agent-tools": AGENT_TOOLS, "conversation": CONVERSATION}


def eval_yaml(name: str, template: Template) -> str:
    return (
        f"# {template.summary}.\n"
        "# Run it: assay run eval.yaml   (then: assay view, or assay report RUN --html report.html)\n"
        f"name: {name}\ndataset:\n  local_uri: data.jsonl\n{MODELS_BLOCK}evaluators:\n{template.evaluators}"
        f"{template.judges}"
    )


def write(folder: Path, template_name: str, *, force: bool = False) -> list[Path]:
    """Write ``eval.yaml`` and ``data.jsonl`` into ``folder``; refuses to overwrite without ``force``."""
    if template_name not in TEMPLATES:
        raise ConfigError(f"no template {template_name!r}", hint=f"choose one of {', '.join(TEMPLATES)}")
    template = TEMPLATES[template_name]
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in template.rows)
    files = {folder / "eval.yaml": eval_yaml(folder.resolve().name or "my-eval", template), folder / "data.jsonl": data}
    existing = [path for path in files if path.exists()]
    if existing and not force:
        raise ConfigError(
            f"{existing[0]} exists; assay init writes only new files",
            hint="pass --force to overwrite, or choose another folder",
        )
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)
