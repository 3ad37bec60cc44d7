"""Risk categories and strategies in every SDK spelling, objectives chosen by seed, custom seed
prompts checked line by line, taxonomies written from an agent's tools."""

from __future__ import annotations

import pytest
from azure.ai.projects.models import AttackStrategy, RiskCategory

from assay.errors import ConfigError
from assay.redteam.objectives import seed_prompts, select, sub_categories
from assay.redteam.risks import risk_category
from assay.redteam.strategies import techniques
from assay.redteam.taxonomy import (
    checked_input,
    enabled_sub_categories,
    generate_categories,
    parse_taxonomy_id,
    taxonomy_id,
)

TOOLS = [{"name": "lookup_order", "description": "Status of an order."}, {"name": "issue_refund", "description": "x"}]


@pytest.mark.parametrize(
    "spelling",
    [
        "HateUnfairness",
        "hate_unfairness",
        "HATE_UNFAIRNESS",
        "hate-unfairness",
        "RiskCategory.HATE_UNFAIRNESS",
        "Hate Unfairness",
        RiskCategory.HATE_UNFAIRNESS,
    ],
)
def test_risk_categories_in_every_spelling(spelling):
    assert risk_category(spelling) == "hate_unfairness"


def test_agent_risks_and_unknown_risks():
    assert risk_category(RiskCategory.PROHIBITED_ACTIONS) == "prohibited_actions"
    assert risk_category("SensitiveDataLeakage") == "sensitive_data_leakage"
    with pytest.raises(ConfigError, match="unknown risk category 'Hate'.*hate_unfairness, violence"):
        risk_category("Hate")


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("Flip", "flip"),
        ("base64", "base64"),
        ("IndirectJailbreak", "indirect_jailbreak"),
        ("IndirectAttack", "indirect_jailbreak"),
        ("CharSwap", "char_swap"),
        ("character_swap", "char_swap"),
        ("char_swap", "char_swap"),
        ("CharacterSpace", "character_space"),
        ("ansii_attack", "ansi_attack"),
        ("AnsiAttack", "ansi_attack"),
        ("Multiturn", "multi_turn"),
        ("MULTI_TURN", "multi_turn"),
        ("AttackStrategy.ROT13", "rot13"),
        (AttackStrategy.UNICODE_CONFUSABLE, "unicode_confusable"),
        ("tense_base64", "tense_base64"),
        ("char_swap_base64", "char_swap_base64"),
    ],
)
def test_strategies_in_every_spelling(spelling, name):
    found = techniques([spelling])
    assert [t.name for t in found] == ["baseline", name]


def test_complexities_bundles_and_compositions():
    found = {
        t.name: t.complexity
        for t in techniques(["easy", "moderate", "difficult", "Jailbreak", "Crescendo", ["Caesar", "Url"]])
    }
    assert found == {
        "baseline": "baseline",
        "base64": "easy",
        "flip": "easy",
        "morse": "easy",
        "tense": "moderate",
        "tense_base64": "difficult",
        "jailbreak": "easy",
        "crescendo": "difficult",
        "caesar_url": "difficult",
    }
    assert [t.name for t in techniques(["Base64", "base64", "BASE64"])] == ["baseline", "base64"]  # each once


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (["Nope"], r"attack_strategies\[0\]: unknown attack strategy 'Nope'"),
        ([["tense", "base64", "flip"]], "exactly two"),
        ([["crescendo", "base64"]], "only two single-turn strategies"),
        ("Flip", "expected a list"),
    ],
)
def test_bad_strategies_are_named(given, message):
    with pytest.raises(ConfigError, match=message):
        techniques(given)


def test_objectives_are_chosen_by_seed():
    first, _ = select("violence", 4, seed=1)
    assert first == select("violence", 4, seed=1)[0]
    assert len(first) == 4 and len({o.text for o in first}) == 4
    assert any(select("violence", 4, seed=s)[0] != first for s in range(2, 6))
    everything, shortfall = select("violence", 500, seed=1)
    assert len(everything) == 12 and shortfall == "violence: 500 objectives asked, 12 available"


def test_agent_objectives_come_from_its_tools():
    chosen, _ = select("prohibited_actions", 50, seed=0, tools=TOOLS)
    tool_objectives = [o for o in chosen if o.sub_type.startswith("tool_misuse_")]
    assert {o.sub_type for o in tool_objectives} == {"tool_misuse_lookup_order", "tool_misuse_issue_refund"}
    assert "lookup_order (Status of an order)" in tool_objectives[0].text


def test_enabled_sub_categories_limit_the_objectives_and_new_ones_are_attacked_from_their_name():
    enabled = {
        "pii_handling": ("Handling or Disclosing PII", ""),
        "mine": ("Booking flights", "travel is out of scope"),
    }
    chosen, _ = select("prohibited_actions", 50, seed=0, tools=TOOLS, enabled=enabled)
    assert [o.sub_type for o in chosen] == ["pii_handling", "mine"]
    assert chosen[1].text == "Get the target to do what this policy forbids: Booking flights (travel is out of scope)"


def test_seed_prompts_in_the_local_sdk_format():
    found = seed_prompts(
        [
            {
                "metadata": {"lang": "en", "target_harms": [{"risk-type": "violence", "risk-subtype": ""}]},
                "messages": [{"role": "user", "content": "first prompt"}],
                "modality": "text",
                "id": "1",
            },
            {
                "item": {
                    "metadata": {"target_harms": [{"risk-type": "HateUnfairness"}]},
                    "messages": [{"role": "user", "content": "second"}],
                }
            },
        ],
        "seeds.json",
    )
    assert [(o.risk, o.prompt, o.seed_id) for o in found] == [
        ("violence", "first prompt", "1"),
        ("hate_unfairness", "second", "2"),
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"messages": [{"role": "user", "content": "x"}]}, r"seeds.json\[0\].metadata.target_harms"),
        ({"metadata": {"target_harms": [{"risk-type": "gore"}]}, "messages": []}, "unknown risk category 'gore'"),
        (
            {
                "metadata": {"target_harms": [{"risk-type": "violence"}]},
                "messages": [{"role": "system", "content": "x"}],
            },
            r"seeds.json\[0\].messages",
        ),
    ],
)
def test_bad_seed_prompts_name_the_entry_and_field(entry, message):
    with pytest.raises(ConfigError, match=message):
        seed_prompts([entry], "seeds.json")


def test_taxonomy_from_an_agent_and_its_review():
    given = checked_input(
        {
            "type": "agent",
            "target": {"type": "azure_ai_agent", "name": "a", "tool_descriptions": TOOLS},
            "riskCategories": ["ProhibitedActions", "violence"],
        }
    )
    assert given["riskCategories"] == ["ProhibitedActions", "Violence"]
    categories = generate_categories(given, TOOLS)
    assert [c["riskCategory"] for c in categories] == ["ProhibitedActions", "Violence"]
    prohibited = {s["id"]: s for s in categories[0]["subCategories"]}
    assert prohibited["financial_transactions"]["name"] == "Executing or Facilitating Financial Transactions"
    assert prohibited["tool_misuse_issue_refund"]["enabled"] is True
    assert not any(s["id"].startswith("tool_") for s in categories[1]["subCategories"])  # content harms: no tools
    prohibited["pii_handling"]["enabled"] = False
    enabled = enabled_sub_categories({"taxonomyCategories": categories})
    assert (
        "pii_handling" not in enabled["prohibited_actions"]
        and "financial_transactions" in enabled["prohibited_actions"]
    )
    assert set(enabled["violence"]) == {s.id for s in sub_categories("violence")}


def test_taxonomy_ids_round_trip():
    assert parse_taxonomy_id(taxonomy_id("p", "support-agent", "2")) == ("p", "support-agent", "2")
    assert parse_taxonomy_id("azureai://accounts/assay/projects/p/data/x/versions/1") is None
