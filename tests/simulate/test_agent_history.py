"""A simulated user talking to an agent with tools: every agent request after the first carries the
conversation so far with the agent's own tool calls and their results (the simulated user sees
only the text), and the run's usage counts every call either side made."""

from __future__ import annotations

import json

from assay.store import Store
from tests.cli.test_cli import assay
from tests.targets.test_agent_loop import TOOLS, call

# Matches only a request that carries the tool call's result in its history, in chat form.
HISTORY = (
    '"content": "order 42: shipped on 2026-11-30"}, {"role": "assistant", "content": '
    '"Your order 42 shipped on 2026-11-30."}, {"role": "user", "content": "When will it arrive?"}'
)


def user_says(message: str, done: bool = False) -> dict:
    return {"content": json.dumps({"message": message, "done": done})}


def test_the_agent_gets_its_whole_history_and_every_call_is_counted(tmp_path, llm):
    llm.reset()
    llm.script(
        rules=[  # the first rule whose text is in the request answers it
            {"match": "It arrives on 2026-12-03", "reply": user_says("", done=True)},
            {"match": HISTORY, "reply": {"content": "It arrives on 2026-12-03."}},
            {"match": "AGENT: Your order 42 shipped", "reply": user_says("When will it arrive?")},
            {"match": "shipped on 2026-11-30", "reply": {"content": "Your order 42 shipped on 2026-11-30."}},
            {
                "match": "support agent of a small shop",
                "reply": {"tool_calls": [call("lookup_order", {"order_id": "42"}, "c_lookup")]},
            },
        ],
        default=user_says("Where is order 42?"),
    )
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "scenarios.jsonl").write_text(json.dumps({"test_case_description": "You ordered a lamp."}) + "\n")
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: simulated\ndataset: {local_uri: scenarios.jsonl}\n"
        f"models:\n  bot: {{model: bot-model, base_url: '{llm.base_url}', api_key: t}}\n"
        f"  user: {{model: user-model, base_url: '{llm.base_url}', api_key: t}}\n"
        "target:\n  type: model\n  model: bot\n  instructions: You are the support agent of a small shop.\n"
        "  tools: [{python: tools.py}]\n"
        "simulation: {model: user, max_turns: 4}\n"
        "evaluators:\n"
        "  - {type: string_check, name: arrival, input: '{{sample.output_text}}', reference: '2026-12-03', operation: like}\n"
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split("run id: ")[1].split()[0]
    (item,) = map(json.loads, assay("results", run_id, home=tmp_path, check=True).stdout.splitlines())
    said = [(m["role"], m.get("content")) for m in item["datasource_item"]["messages"]]
    assert said[-1] == ("assistant", "It arrives on 2026-12-03.")  # answered from the history it was sent
    assert item["results"][0]["passed"] is True
    assert item["datasource_item"]["termination_reason"] == "user_stop"

    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        summary = store.get_run(run_id).summary
    finally:
        store.close()
    roles = {(u.role, u.model_name): u.invocation_count for u in summary.per_role_usage}
    assert roles == {("target", "bot-model"): 3, ("simulated_user", "user-model"): 3}
    assert sum(roles.values()) == llm.stats()["completions"] == 6
    assert "simulated user model user-model: 3 calls" in done.stdout
