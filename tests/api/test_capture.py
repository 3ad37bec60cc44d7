"""The capture pass-through, then ``azure_ai_responses``: an application's answers evaluated by id."""

from __future__ import annotations

import openai
import pytest

from tests.api.conftest import wait_for

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
JUDGE_RULES = [  # the safety prompt has a "# Property:" heading too, so it is matched first
    {"match": "# Property: violence", "reply": {"content": '{"reason": "no violence at all", "score": 0}'}},
    {"match": "# Property:", "reply": {"content": '{"reason": "reads well", "score": 4}'}},
]


def _application(client: openai.OpenAI) -> list[str]:
    """An application that talks to assay as if it were its provider; returns the ids it got back."""
    chat = client.chat.completions.create(model="judge", messages=[{"role": "user", "content": "Name a prime."}])
    stream = client.chat.completions.create(
        model="judge",
        messages=[{"role": "user", "content": "Say something long."}],
        stream=True,
        stream_options={"include_usage": True},
    )
    streamed_chunks = list(stream)
    first = client.responses.create(model="judge", input="What's the weather in Oslo?", tools=[WEATHER_TOOL])
    follow_up = client.responses.create(model="judge", input="And tomorrow?", previous_response_id=first.id)
    with client.responses.stream(model="judge", input="Tell me a story.") as events:
        story = events.get_final_response()
    assert chat.choices[0].message.content == "Seven is prime."
    assert "".join(c.choices[0].delta.content or "" for c in streamed_chunks if c.choices) == LONG
    assert first.output[0].type == "function_call" and first.output[0].name == "get_weather"
    assert story.output_text == LONG
    return [chat.id, streamed_chunks[0].id, first.id, follow_up.id, story.id]


LONG = "Once upon a time a small model answered in many pieces, one chunk after another."


@pytest.fixture
def provider(llm):
    llm.script(
        rules=[
            *JUDGE_RULES,
            {"match": "Name a prime", "reply": {"content": "Seven is prime."}},
            {"match": "Say something long", "reply": {"content": LONG}},
            {"match": "Tell me a story", "reply": {"content": LONG}},
            {"match": "And tomorrow", "reply": {"content": "Rain tomorrow in Oslo."}},
            {
                "match": "weather in Oslo",
                "reply": {
                    "content": "Let me check.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                        }
                    ],
                },
            },
            {"match": "refuse me", "reply": {"status": 400}},
        ]
    )


def test_capture_then_evaluate_by_id(served, provider, llm):
    client = served.client()
    ids = _application(client)
    assert len(set(ids)) == 5
    stored = client.responses.retrieve(ids[2])
    assert stored.id == ids[2] and stored.output[0].name == "get_weather"
    assert served.store.get_response("default", ids[1])["response"]["choices"][0]["message"]["content"] == LONG

    # The seed's snippet: scenario "responses", criteria without data_mapping, ids in file_content.
    created = client.evals.create(
        name="Agent Response Evaluation",
        data_source_config={"type": "azure_ai_source", "scenario": "responses"},
        testing_criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": "coherence",
                "evaluator_name": "builtin.coherence",
                "initialization_parameters": {"model": "judge"},
            },
            {
                "type": "azure_ai_evaluator",
                "name": "violence",
                "evaluator_name": "builtin.violence",
                "initialization_parameters": {"model": "judge"},
            },
        ],
    )
    content = [{"item": {"resp_id": rid}} for rid in ids] + [{"item": {"resp_id": "resp_nobody_made"}}]
    data_source = {
        "type": "azure_ai_responses",
        "item_generation_params": {
            "type": "response_retrieval",
            "data_mapping": {"response_id": "{{item.resp_id}}"},
            "source": {"type": "file_content", "content": content},
        },
    }
    run = wait_for(client, created.id, client.evals.runs.create(eval_id=created.id, data_source=data_source).id)
    assert run.status == "completed", run
    assert (run.result_counts.passed, run.result_counts.errored) == (5, 1), run.result_counts
    items = {
        i.datasource_item["resp_id"]: i for i in client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)
    }
    missing = items["resp_nobody_made"]
    assert missing.status == "error" and "no response with id 'resp_nobody_made'" in missing.sample.error.message
    follow = items[ids[3]]
    # The follow-up brings the first turn along: its question, the tool call, and then the new question.
    query_text = str(follow.datasource_item["query"])
    assert "weather in Oslo" in query_text and "get_weather" in query_text and "And tomorrow?" in query_text
    assert follow.datasource_item["sample.output_text"] == "Rain tomorrow in Oslo."
    coherence = next(r for r in follow.results if r.name == "coherence")
    assert coherence.score == 4 and coherence.passed
    tool_turn = items[ids[2]]
    assert tool_turn.datasource_item["tool_definitions"][0]["name"] == "get_weather"
    assert tool_turn.datasource_item["tool_calls"][0]["arguments"] == {"city": "Oslo"}


def test_store_false_forwards_without_keeping(served, provider):
    client = served.client()
    reply = client.responses.create(model="judge", input="Name a prime.", store=False)
    assert reply.output_text == "Seven is prime."
    assert served.store.get_response("default", reply.id) is None
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(reply.id)


def test_provider_refusal_is_passed_on(served, provider):
    with pytest.raises(openai.BadRequestError) as refused:
        served.client().chat.completions.create(model="judge", messages=[{"role": "user", "content": "refuse me"}])
    assert "scripted failure" in str(refused.value)


def test_a_prompt_the_providers_content_filter_stopped_is_passed_on_in_azures_shape(served, llm):
    llm.script(rules=[{"match": "filter me", "reply": {"content_filter": "prompt", "categories": {"hate": "high"}}}])
    with pytest.raises(openai.BadRequestError) as refused:
        served.client().chat.completions.create(model="judge", messages=[{"role": "user", "content": "filter me"}])
    error = refused.value.body if isinstance(refused.value.body, dict) else {}
    assert refused.value.code == "content_filter"
    verdicts = error["innererror"]["content_filter_result"]
    assert verdicts["hate"] == {"filtered": True, "severity": "high"} and verdicts["violence"]["filtered"] is False


def test_a_streamed_answer_can_be_retrieved_as_soon_as_the_stream_ends(served, provider, monkeypatch):
    """However slow the store, the stream ends only once its answer is kept."""
    import time

    keep = served.store.put_response

    def slow_keep(*args):
        time.sleep(0.3)
        keep(*args)

    monkeypatch.setattr(served.store, "put_response", slow_keep)
    client = served.client()
    chunks = list(
        client.chat.completions.create(
            model="judge", messages=[{"role": "user", "content": "Say something long."}], stream=True
        )
    )
    assert client.chat.completions.retrieve(chunks[0].id).choices[0].message.content == LONG
    with client.responses.stream(model="judge", input="Tell me a story.") as events:
        story = events.get_final_response()
    assert client.responses.retrieve(story.id).output_text == LONG
