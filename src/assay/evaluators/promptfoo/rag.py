"""promptfoo's ``context-recall``, ``context-relevance`` and ``conversation-relevance``: RAGAS's and
DeepEval's prompts as promptfoo sends them, the grader's answer read as promptfoo reads it, so the same
grader answer gives the same verdict.

The grader answers in lines of text, not JSON: each line of a recall answer classifies one sentence
of the expected answer ``[Attributed]`` or ``[Not Attributed]`` to the context; a relevance answer
quotes the context's sentences the query needs, or says ``Insufficient Information``.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from assay.errors import ItemError
from assay.evaluators.judges.judge import CallLog
from assay.evaluators.promptfoo.assertion import Assertion
from assay.evaluators.promptfoo.checks import Seen, Verdict, json_values_in
from assay.llm import Model, ModelError

CONTEXT_RECALL = """Given a context, and an answer, analyze each sentence in the answer and classify if the sentence can be attributed to the given context or not.
Think in steps and reason before coming to conclusion.

context: Albert Einstein (14 March 1879 – 18 April 1955) was a German-born theoretical physicist,widely held to be one of the greatest and most influential scientists of all time. Best known for developing the theory of relativity, he also made important contributions to quantum mechanics, and was thus a central figure in the revolutionary reshaping of the scientific understanding of nature that modern physics accomplished in the first decades of the twentieth century. His mass–energy equivalence formula E = mc2, which arises from relativity theory, has been called "the world's most famous equation". He received the 1921 Nobel Prize in Physics "for his services to theoretical physics, and especially for his discovery of the law of the photoelectric effect", a pivotal step in the development of quantum theory. His work is also known for its influence on the philosophy of science. In a 1999 poll of 130 leading physicists worldwide by the British journal Physics World, Einstein was ranked the greatest physicist of all time. His intellectual achievements and originality have made Einstein synonymous with genius.
answer: Albert Einstein born in 14 March 1879 was  German-born theoretical physicist, widely held to be one of the greatest and most influential scientists of all time. He received the 1921 Nobel Prize in Physics "for his services to theoretical physics. He published 4 papers in 1905.  Einstein moved to Switzerland in 1895
classification
1. Albert Einstein born in 14 March 1879 was  German-born theoretical physicist, widely held to be one of the greatest and most influential scientists of all time. The date of birth of Einstein is mentioned clearly in the context. So [Attributed]
2. He received the 1921 Nobel Prize in Physics "for his services to theoretical physics. The exact sentence is present in the given context. So [Attributed]
3. He published 4 papers in 1905. There is no mention about papers he wrote in given the context. So [Not Attributed]
4. Einstein moved to Switzerland in 1895. There is not supporting evidence for this in the given the context. So [Not Attributed]

context:{context}
answer:{ground_truth}
classification:
"""  # noqa: E501 - the prompt as promptfoo (RAGAS) words it, line for line
ATTRIBUTED, NOT_ATTRIBUTED = "[attributed]", "[not attributed]"
CONTEXT_RELEVANCE = """Please extract relevant sentences from the provided context that is absolutely required answer the following query. If no relevant sentences are found, or if you believe the query cannot be answered from the given context, return the phrase "Insufficient Information".  While extracting candidate sentences you're not allowed to make any changes to sentences from given context.

query: {query}
context: {context}
candidate sentences:
"""  # noqa: E501
INSUFFICIENT = "Insufficient Information"
ENUMERATION_MARKER_ONLY = re.compile(r"^\d+[.)]$")


def _context(seen: Seen) -> str | list[str]:
    """The test's ``context`` var: a string, or a list of chunks."""
    context = seen.vars.get("context")
    if isinstance(context, list):
        for index, chunk in enumerate(context):
            if not isinstance(chunk, str):
                raise ItemError(
                    f"Invalid context: expected an array of strings, but found {type(chunk).__name__} at index {index}"
                )
    if (isinstance(context, str) and context) or (isinstance(context, list) and context and all(context)):
        return context
    raise ItemError(
        'Context is required for context-based assertions. Provide a "context" variable (string or array of '
        "strings) in your test case."
    )


def _serialised(context: str | list[str]) -> str:
    return "\n\n".join(context) if isinstance(context, list) else context


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _sentences(text: str) -> list[str]:
    """Units of a text: its lines when it has two or more, else its sentences; bare list markers dropped."""
    lines = _lines(text)
    pieces = lines if len(lines) > 1 else re.split(r"(?<=[.!?])\s+", text)
    return [piece.strip() for piece in pieces if piece.strip() and not ENUMERATION_MARKER_ONLY.match(piece.strip())]


async def grade(
    model: Model, prompt: str | list[dict[str, Any]], what: str, spent: CallLog | None = None
) -> tuple[str, dict[str, Any]]:
    """The grader's answer to promptfoo's prompt, sent as promptfoo sends it (a text as one user
    message), and what the calls cost so far (``spent``, when several calls judge one assertion)."""
    spent = spent or CallLog(model=model.config.model)
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
    try:
        completion = await model.generate(messages)
    except ModelError as exc:
        raise ItemError(f"{what}: the grader failed: {exc}") from None
    spent.add(completion)
    return completion.text, spent.usage()


def _threshold(assertion: Assertion) -> float:
    threshold = assertion.get("threshold")
    return 0.5 if threshold is None else float(threshold)


def _inverted(verdict: Verdict, inverse: bool) -> Verdict:
    """promptfoo's ``not-`` for these: pass and score flipped, except when the grader failed."""
    if not inverse or verdict.details.get("grader_error"):
        return verdict
    return Verdict(not verdict.passed, 1 - verdict.score, verdict.reason, verdict.details)


async def context_recall(assertion: Assertion, seen: Seen, inverse: bool, model: Model) -> Verdict:
    expected = assertion.get("value")
    if not isinstance(expected, str):
        raise ItemError("context-recall assertion requires a string value (expected answer or fact to verify)")
    context = _context(seen)
    prompt = CONTEXT_RECALL.replace("{context}", _serialised(context)).replace("{ground_truth}", expected)
    answer, usage = await grade(model, prompt, "context-recall")
    classified = [line for line in _lines(answer) if ATTRIBUTED in line.lower() or NOT_ATTRIBUTED in line.lower()]
    if not classified:
        reason = "Grader returned no [Attributed]/[Not Attributed] classifications"
        return Verdict(False, 0.0, reason, {"usage": usage, "grader_error": True})
    attributed = sum(ATTRIBUTED in line.lower() and NOT_ATTRIBUTED not in line.lower() for line in classified)
    score, threshold = attributed / len(classified), _threshold(assertion)
    passed = score >= threshold - sys.float_info.epsilon
    reason = f"Recall {score:.2f} is {'>=' if passed else '<'} {_shown(threshold)}"
    details = {"usage": usage, "attributed_sentences": attributed, "total_sentences": len(classified)}
    return _inverted(Verdict(passed, score, reason, details), inverse)


async def context_relevance(assertion: Assertion, seen: Seen, inverse: bool, model: Model) -> Verdict:
    query = seen.vars.get("query")
    if not isinstance(query, str):
        raise ItemError('context-relevance assertion requires a "query" variable with the user question')
    context = _context(seen)
    prompt = CONTEXT_RELEVANCE.replace("{query}", query).replace("{context}", _serialised(context))
    answer, usage = await grade(model, prompt, "context-relevance")
    segmented = isinstance(context, list) or len(_lines(context)) > 1
    units = [chunk for chunk in context if chunk.strip()] if isinstance(context, list) else _sentences(context)
    insufficient = INSUFFICIENT in answer
    relevant = [] if insufficient else list(dict.fromkeys(_lines(answer) if segmented else _sentences(answer)))
    score = min(len(relevant), len(units)) / len(units) if units else 0.0
    threshold = _threshold(assertion)

    def normal(text: str) -> str:
        return re.sub(r"\s+", " ", text.lower()).strip()

    whole = normal(_serialised(context))
    quoted = any(normal(re.sub(r"^\s*(?:\d+[.)]|[-*])\s*", "", sentence)) in whole for sentence in relevant)
    if relevant and not quoted:
        reason = "Grader output does not quote the provided context"
        return Verdict(False, 0.0, reason, {"usage": usage, "grader_error": True})
    passed = score >= threshold - sys.float_info.epsilon
    reason = f"Context relevance {score:.2f} is {'>=' if passed else '<'} {_shown(threshold)}"
    details = {"usage": usage, "relevant_sentences": len(relevant), "context_units": len(units)}
    return _inverted(Verdict(passed, score, reason, details), inverse)


def _shown(number: float) -> str:
    """A threshold as JavaScript prints it (0.5, 1, not 1.0)."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


CONVERSATION_RELEVANCE = """Based on the given list of message exchanges between a user and an LLM, generate a JSON object to indicate whether the LAST `assistant` message is relevant to context in messages. The JSON will have 2 fields: 'verdict' and 'reason'.
The 'verdict' key should STRICTLY be either 'yes' or 'no', which states whether the last `assistant` message is relevant according to the context in messages 
Provide a 'reason' ONLY if the answer is 'no'. 
You MUST USE the previous messages (if any) provided in the list of messages to make an informed judgement on relevancy.

**
IMPORTANT: Please make sure to only return in JSON format.
Example Messages:
[
    {
        "role": "user",
        "content": "Hi! I have something I want to tell you"
    },
    {
        "role": "assistant",
        "content": "Sure, what is it?"
    },
    {
        "role": "user",
        "content": "I've a sore throat, what meds should I take?"
    },
    {
        "role": "assistant",
        "content": "Not sure, but isn't it a nice day today?"
    }
]

Example JSON:
{
    "verdict": "no",
    "reason": "The LLM responded 'isn't it a nice day today' to a message that asked about how to treat a sore throat, which is completely irrelevant."
}
===== END OF EXAMPLE ======
You MUST ONLY provide a verdict for the LAST message on the list but MUST USE context from the previous messages.
You DON'T have to provide a reason if the answer is 'yes'.
ONLY provide a 'no' answer if the LLM response is COMPLETELY irrelevant to the message input.
Vague LLM responses to vague inputs, such as greetings DOES NOT count as irrelevancies!
**

Messages:
{messages}

JSON:"""  # noqa: E501, W291 - DeepEval's template as promptfoo sends it, trailing spaces included


CONVERSATION_REASON = """Below is a list of irrelevancies drawn from some messages in a conversation, which you have minimal knowledge of. It is a list of strings explaining why the 'assistant' messages are irrelevant to the 'user' messages.
Given the relevancy score, which is a 0-1 score indicating how irrelevant the OVERALL AI messages are in a conversation (higher the better), CONCISELY summarize the irrelevancies to justify the score. 

** 
IMPORTANT: Please make sure to only return in JSON format, with the 'reason' key providing the reason.
Example JSON:
{
    "reason": "The score is <relevancy_score> because <your_reason>."
}

Always quote WHICH MESSAGE and the INFORMATION in the reason in your final reason.
Be sure in your reason, as if you know what the `assistant` messages from messages in a conversation is from the irrelevancies.
**

Relevancy Score:
{score}

Irrelevancies:
{irrelevancies}

JSON:"""  # noqa: E501 W291 - DeepEval's prompt as promptfoo sends it, trailing spaces too
NOT_RELEVANT = "Response is not relevant to the conversation context"
WINDOW = 5


def _exchanges(seen: Seen) -> list[dict[str, Any]]:
    """The conversation judged: the test's ``_conversation`` var (``[{input, output}]``, the turns of a
    multi-turn test), else the test's one exchange, its prompt and the output."""
    turns = seen.vars.get("_conversation")
    if isinstance(turns, list) and turns:
        return [turn if isinstance(turn, dict) else {"input": turn, "output": ""} for turn in turns]
    return [{"input": seen.prompt, "output": seen.output}]


def _said(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def conversation_relevance(assertion: Assertion, seen: Seen, inverse: bool, model: Model) -> Verdict:
    """DeepEval's conversation relevancy as promptfoo runs it: each turn's answer judged with up to
    ``config.windowSize`` (5) turns before it, the grader's ``yes`` relevant and ``no`` not; the score
    is the share of relevant turns, passing at ``threshold`` (0.5). ``not-`` flips the verdict and the
    score; a grader answer without a verdict fails the assertion."""
    turns = _exchanges(seen)
    size = (assertion.get("config") or {}).get("windowSize") or WINDOW
    spent = CallLog(model=model.config.model)
    usage: dict[str, Any] = {}
    relevant, irrelevancies = 0, []
    for index in range(len(turns)):
        window = [
            message
            for turn in turns[max(0, index - int(size) + 1) : index + 1]
            for message in (
                {"role": "user", "content": _said(turn.get("input"))},
                {"role": "assistant", "content": _said(turn.get("output"))},
            )
        ]
        prompt = CONVERSATION_RELEVANCE.replace("{messages}", json.dumps(window, indent=2, ensure_ascii=False))
        answer, usage = await grade(model, prompt, "conversation-relevance", spent)
        found = next((value for value in json_values_in(answer) if isinstance(value, dict)), None)
        if found is None or found.get("verdict") not in ("yes", "no"):
            problem = (
                "No JSON object found in response"
                if found is None
                else "Conversation relevance grader returned an invalid verdict"
            )
            return Verdict(False, 0.0, f"Error parsing output: {problem}", {"usage": usage, "grader_error": True})
        if found["verdict"] == "yes":
            relevant += 1
        elif found.get("reason") and found["reason"] != NOT_RELEVANT:
            irrelevancies.append(str(found["reason"]))
    score, threshold = relevant / len(turns), _threshold(assertion)
    passed = (score >= threshold - sys.float_info.epsilon) != inverse
    reason = f"{relevant} out of {len(turns)} conversation windows were relevant"
    if irrelevancies and score < 1:
        shown = str(int(score)) if score.is_integer() else repr(score)  # as JavaScript prints it
        asked = CONVERSATION_REASON.replace("{score}", shown).replace(
            "{irrelevancies}", json.dumps(irrelevancies, indent=2, ensure_ascii=False)
        )
        answer, usage = await grade(model, asked, "conversation-relevance", spent)
        summary = next((value for value in json_values_in(answer) if isinstance(value, dict)), None)
        reason = str((summary or {}).get("reason") or reason)
    return Verdict(passed, 1 - score if inverse else score, reason, {"usage": usage})
