"""Quality and RAG judges: 1–5 scales, pass at 3 or above."""

from __future__ import annotations

from assay.evaluators.judges.judge import JudgeDefinition

COHERENCE = JudgeDefinition(
    name="coherence",
    description="How logically organised and easy to follow the response is, given the query.",
    instructions=(
        "Judge how well the RESPONSE holds together as an answer to the QUERY: ideas follow in a sensible order, "
        "each sentence connects to the ones around it, transitions are clear, and the reader never has to guess "
        "how one point leads to the next. Do not judge factual accuracy or style, only logical flow and structure. "
        "When a whole conversation is given, judge the agent's side of it as one piece of communication."
    ),
    rubric={
        1: "incoherent: disconnected fragments, no discernible line of thought",
        2: "poorly coherent: some related ideas but jumps and gaps make it hard to follow",
        3: "partly coherent: the main point is clear, but order or links between ideas are weak in places",
        4: "coherent: well ordered with clear links and only minor rough spots",
        5: "highly coherent: every part builds on the last; effortless to follow",
    },
    required=("query", "response"),
    levels=("conversation", "turn"),
)

FLUENCY = JudgeDefinition(
    name="fluency",
    description="How well written the response is: grammar, word choice, sentence structure, readability.",
    instructions=(
        "Judge only the language quality of the RESPONSE: grammar and spelling, precise and varied vocabulary, "
        "well-formed sentences, and how easily it reads. Ignore whether it is correct or relevant."
    ),
    rubric={
        1: "barely readable: pervasive errors make the meaning hard to recover",
        2: "weak: frequent errors and awkward phrasing interfere with reading",
        3: "adequate: understandable with some errors or clumsy sentences",
        4: "good: well written with only rare slips",
        5: "excellent: polished, precise and natural throughout",
    },
    required=("response",),
)

RELEVANCE = JudgeDefinition(
    name="relevance",
    description="How well the response addresses the query with pertinent, complete information.",
    instructions=(
        "Judge whether the RESPONSE actually answers the QUERY: it stays on the question asked, covers what the "
        "user needs, and does not drift into unrelated material. A correct but off-topic answer scores low; a "
        "refusal or a request for clarification scores by how appropriate it is for this query."
    ),
    rubric={
        1: "irrelevant: does not address the query at all",
        2: "slightly relevant: touches the topic but misses what was asked",
        3: "partly relevant: addresses the query but leaves out important parts",
        4: "relevant: answers the query with minor omissions",
        5: "fully relevant: answers exactly what was asked, completely, and may add useful insight",
    },
    required=("query", "response"),
)

GROUNDEDNESS = JudgeDefinition(
    name="groundedness",
    description="Whether the response's claims are supported by the given context.",
    instructions=(
        "Judge whether every claim in the RESPONSE is supported by the CONTEXT (the source material it should rely "
        "on). Unsupported additions, contradictions and fabricated details lower the score, even if they happen to "
        "be true in the world. The QUERY, when given, tells you what the response was trying to answer. When a "
        "conversation is given, tool results inside it count as context."
    ),
    rubric={
        1: "ungrounded: the response is unrelated to or contradicts the context",
        2: "mostly ungrounded: it relates to the context but key claims are unsupported or wrong",
        3: "partly grounded: some claims are supported, others are not",
        4: "mostly grounded: supported apart from minor unsupported details",
        5: "fully grounded: every claim is supported by the context and nothing important is left out",
    },
    required=("response", "context"),
    optional=("query", "tool_definitions"),
    category="rag",
    levels=("conversation", "turn"),
)

RETRIEVAL = JudgeDefinition(
    name="retrieval",
    description="How relevant and well ranked the retrieved context is for the query.",
    instructions=(
        "Judge the retrieved CONTEXT as search results for the QUERY: are the passages relevant, is the most useful "
        "material near the top, and is the information the query needs actually present? Do not judge any answer."
    ),
    rubric={
        1: "irrelevant: nothing retrieved helps with the query",
        2: "poor: little relevance, the useful parts are buried or missing",
        3: "fair: some relevant material but poorly ranked or incomplete",
        4: "good: relevant material, mostly well ranked",
        5: "excellent: highly relevant, complete and well ranked",
    },
    required=("query", "context"),
    category="rag",
    max_tokens=1600,
)

SIMILARITY = JudgeDefinition(
    name="similarity",
    description="How closely the response's meaning matches the ground truth answer.",
    instructions=(
        "Compare the meaning of the RESPONSE with the GROUND TRUTH answer to the QUERY. Wording may differ freely; "
        "what matters is whether the response conveys the same facts and conclusions."
    ),
    rubric={
        1: "not equivalent: different or contradictory meaning",
        2: "mostly different: shares only a small part of the meaning",
        3: "somewhat equivalent: the core is shared but important parts differ or are missing",
        4: "mostly equivalent: same meaning with minor differences",
        5: "fully equivalent: conveys exactly the ground truth's meaning",
    },
    # Foundry's own sample scores similarity from response and ground truth alone: the query helps, when given.
    required=("response", "ground_truth"),
    optional=("query",),
)

RESPONSE_COMPLETENESS = JudgeDefinition(
    name="response_completeness",
    description="How much of the ground truth's necessary information the response contains.",
    instructions=(
        "List the claims in the GROUND TRUTH that an answer needs, then check which of them the RESPONSE states. "
        "Extra material in the response neither helps nor hurts; missing claims do."
    ),
    rubric={
        1: "fully incomplete: none of the necessary claims",
        2: "barely complete: a small part of the necessary claims",
        3: "moderately complete: about half of the necessary claims",
        4: "mostly complete: most claims, with a minor omission",
        5: "fully complete: every necessary claim",
    },
    required=("ground_truth", "response"),
    category="rag",
)

QUALITY = (COHERENCE, FLUENCY, RELEVANCE, GROUNDEDNESS, RETRIEVAL, SIMILARITY, RESPONSE_COMPLETENESS)
