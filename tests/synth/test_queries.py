"""Synthetic queries: a generator that repeats itself still yields distinct queries (or says how
many it got); none is a near-duplicate of another; plain-text answers are understood."""

from __future__ import annotations

import asyncio
import json

import pytest

from assay.errors import ItemError
from assay.sampling.minhash import distance, normalize_text, signatures
from assay.synth import Brief, generate_queries

RETURNS = "Write customer questions about returning defective products"


def batch(*queries: str) -> dict:
    return {"content": json.dumps({"queries": [{"query": q, "ground_truth": ""} for q in queries]})}


def jaccard_distances(texts):
    sig = signatures([normalize_text(t) for t in texts])
    return [float(distance(sig[i], sig[j : j + 1])[0]) for i in range(len(texts)) for j in range(i + 1, len(texts))]


def generate(models, brief, count, seed=0):
    model = models.get("judge")

    async def go():
        try:
            return await generate_queries(model, brief, count, seed=seed)
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_a_repetitive_generator_still_yields_distinct_queries(llm, models):
    llm.script(
        rules=[
            {
                "match": "Write 5 new queries",
                "reply": batch(
                    "How do I return a broken kettle?",
                    "How do I return a broken kettle?",
                    "how do i return a broken kettle??",
                    "My blender arrived cracked, what now?",
                ),
            },
            {
                "match": "Write 3 new queries",
                "reply": batch(
                    "My blender arrived cracked, what now?",
                    "Can I get a refund for a faulty toaster without the receipt?",
                ),
            },
            {
                "match": "Write 2 new queries",
                "reply": batch("How do I return a broken kettle?", "Do you pay return shipping for defective items?"),
            },
            {"match": "Write 1 new queries", "reply": batch("Is a cracked phone screen covered as a defect?")},
        ]
    )
    generated = generate(models, Brief(prompt=RETURNS), 5, seed=3)
    queries = [row["query"] for row in generated.rows]
    assert queries == [
        "How do I return a broken kettle?",
        "My blender arrived cracked, what now?",
        "Can I get a refund for a faulty toaster without the receipt?",
        "Do you pay return shipping for defective items?",
        "Is a cracked phone screen covered as a defect?",
    ]
    assert min(jaccard_distances(queries)) >= 0.3  # no two share 70% of their 5-grams
    assert (generated.dropped_duplicates, generated.rounds, generated.shortfall) == (4, 4, None)
    assert [row["generator"]["seed"] for row in generated.rows] == [3, 3, 4, 5, 6]
    assert all(row["generator"]["model"] == "gpt-4.1-mini" for row in generated.rows)


def test_a_generator_that_only_repeats_itself_says_how_many_it_got(llm, models):
    llm.script(default=batch("How do I return a broken kettle?", "How do I return a broken kettle!"))
    generated = generate(models, Brief(prompt=RETURNS), 4)
    assert [row["query"] for row in generated.rows] == ["How do I return a broken kettle?"]
    assert generated.shortfall is not None and "1 distinct queries of the 4 asked for" in generated.shortfall


def test_plain_text_lists_are_read_one_query_per_line(llm, models):
    llm.script(default={"content": "1. Where is my refund?\n2. Can I swap a faulty charger?\n- Is there a fee?"})
    generated = generate(models, Brief(prompt=RETURNS), 3)
    assert [row["query"] for row in generated.rows] == [
        "Where is my refund?",
        "Can I swap a faulty charger?",
        "Is there a fee?",
    ]


def test_the_brief_says_what_the_queries_are_about(llm, models):
    llm.script(default=batch("Track order 7?"))
    brief = Brief(
        agent_instructions="You help customers of a bike shop.",
        tools=[{"name": "track_order", "description": "Where an order is"}],
        document="Returns: 30 days.",
    )
    generate(models, brief, 1)
    sent = llm.stats()["last"]["messages"][-1]["content"]
    assert "bike shop" in sent and "track_order" in sent and "Returns: 30 days." in sent
    with pytest.raises(ItemError, match="nothing to generate queries from"):
        generate(models, Brief(), 1)


def distinct_question(seed: int) -> str:
    """A question no other seed's resembles (the generator drops near-duplicates)."""
    import random

    words = "refund lamp invoice courier warranty battery voucher parcel ladder cushion kettle drill mirror".split()
    return "How does the " + " ".join(random.Random(seed).sample(words, 6)) + f" policy {seed} apply?"


def test_queries_from_a_long_document_cover_all_of_it(llm, models):
    from assay.synth.queries import chunk_text, coverage_plan

    sections = [f"Section {i}: " + " ".join(f"policy{i}-{w}" for w in range(400)) for i in range(12)]
    document = "\n\n".join(sections)
    assert len(document) > 30_000
    chunks = chunk_text(document)
    plan = coverage_plan(len(chunks), seed=0)
    assert sorted(i for shown in plan for i in shown) == list(range(len(chunks)))  # every section, once
    rules = []
    for shown in plan:  # each round's prompt shows its own sections only
        first = shown[0]
        rows = [{"query": distinct_question(i), "ground_truth": "", "section": i + 1} for i in shown]
        rules.append(
            {"match": f"[section {first + 1} of {len(chunks)}]", "reply": {"content": json.dumps({"queries": rows})}}
        )
    llm.script(rules=rules, default=batch("unused"))
    generated = generate(models, Brief(document=document), len(chunks))  # a query per section, at least
    covered = {i for row in generated.rows for i in row["generator"]["sections"]}
    assert covered == set(range(len(chunks))) and generated.rounds == len(plan)
    assert all(row["generator"]["of_sections"] == len(chunks) for row in generated.rows)
    assert all(len(row["generator"]["sections"]) == 1 for row in generated.rows)  # the section each named
    asked = llm.stats()["last"]["response_format"]["json_schema"]["schema"]
    assert "section" in asked["properties"]["queries"]["items"]["required"]


def test_a_document_longer_than_the_rounds_can_show_is_drawn_from_all_of_it():
    """100 sections, five rounds of eight: forty are shown, one from each fortieth of the document,
    so its last pages are as likely as its first (30,000 characters was all that used to be read)."""
    from assay.synth.queries import SECTIONS_PER_ROUND, coverage_plan

    for seed in range(5):
        plan = coverage_plan(100, seed=seed)
        shown = sorted(i for used in plan for i in used)
        assert len(plan) == 5 and all(len(used) <= SECTIONS_PER_ROUND for used in plan)
        assert len(shown) == len(set(shown)) == 40
        assert [i * 100 // 40 <= found < (i + 1) * 100 // 40 for i, found in enumerate(shown)] == [True] * 40


def test_queries_from_a_very_long_document_come_from_across_it_and_say_so(llm, models):
    sections = [f"Section {i}: " + " ".join(f"policy{i}-{w}" for w in range(300)) for i in range(100)]
    document = "\n\n".join(sections)
    assert len(document) > 289_000
    llm.script(
        rules=[],
        default={
            "content": json.dumps({"queries": [{"query": distinct_question(n), "ground_truth": ""} for n in range(3)]})
        },
    )
    from assay.synth.queries import chunk_text

    total = len(chunk_text(document))
    generated = generate(models, Brief(document=document), 3)
    prompt = json.dumps(llm.stats()["last"]["messages"])
    assert f"of {total}]" in prompt and len(prompt) < 40_000  # a round's sections, not the whole document
    assert generated.sections_total == total > 90 and 0 < generated.sections_shown <= 16
    assert generated.coverage == (
        f"the queries come from {generated.sections_shown} of the document's {total} sections, "
        "drawn from across all of it"
    )
    assert all(row["generator"]["of_sections"] == total for row in generated.rows)
