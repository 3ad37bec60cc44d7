"""A simulated user talking to an agent with tools: every agent request after the first carries the
conversation so far with the agent's own tool calls and their results (the simulated user sees
only the text), and the run's usage counts every call either side made."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading

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


def run_the_one_scenario(config, home):
    """``assay run`` of a config with one scenario: what it said, its run id and its one output item."""
    done = assay("run", config, home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split("run id: ")[1].split()[0]
    (item,) = map(json.loads, assay("results", run_id, home=home, check=True).stdout.splitlines())
    return done, run_id, item


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
    done, run_id, item = run_the_one_scenario(config, tmp_path)
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


@contextlib.contextmanager
def stateful_agent(searches: bool = False):
    """A Responses agent that keeps its conversations (``store``): a request with
    ``previous_response_id`` continues the one that reply ended. Its URL and the bodies it got.
    ``searches``: it reasons and searches its files (a hosted tool) before each answer."""
    held: dict[str, list] = {}
    bodies: list[dict] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            bodies.append(body)
            earlier = held.get(body.get("previous_response_id") or "", [])
            history = earlier + list(body["input"])
            users = [m for m in history if m.get("role") == "user"]
            reply_id = f"resp_{len(bodies)}"
            text = f"I hold {len(users)} of your messages."
            history.append({"role": "assistant", "content": text})
            held[reply_id] = history
            message = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
            output = [*(SEARCHED if searches else []), message]
            answer = json.dumps({"id": reply_id, "object": "response", "output": output}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    finally:
        server.shutdown()
        server.server_close()


def desk_config(home, llm, url, *, max_turns, held):
    """An eval.yaml simulating its scenarios against the stateful agent at ``url``, passing an answer that says ``held``."""
    config = home / "eval.yaml"
    config.write_text(
        "name: desk\ndataset: {local_uri: scenarios.jsonl}\n"
        f"models:\n  user: {{model: user-model, base_url: '{llm.base_url}', api_key: t}}\n"
        f"agents:\n  desk: {{endpoint: '{url}', stateful: true}}\n"
        "target: {type: agent, name: desk}\n"
        f"simulation: {{model: user, max_turns: {max_turns}}}\n"
        "evaluators:\n"
        f"  - {{type: string_check, name: held, input: '{{{{sample.output_text}}}}', reference: '{held}', operation: like}}\n"
    )
    return config


SEARCHED = [
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "file_search_call", "id": "fs_1", "queries": ["lamp"], "results": [{"text": "Lamps ship in 2 days."}]},
]


def test_an_agents_hosted_tool_calls_are_kept_in_the_simulated_conversation(tmp_path, llm):
    """The agent searched its files before answering: the conversation holds the search and what it
    found, where a tool judge and groundedness read them."""
    llm.reset()
    llm.script(rules=[{"match": "AGENT: I hold 1", "reply": user_says("", done=True)}], default=user_says("Lamp?"))
    (tmp_path / "scenarios.jsonl").write_text(json.dumps({"test_case_description": "You ask once."}) + "\n")
    with stateful_agent(searches=True) as (url, _):
        _, _, item = run_the_one_scenario(desk_config(tmp_path, llm, url, max_turns=2, held="hold 1"), tmp_path)
    messages = item["datasource_item"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    (searched,) = messages[1]["tool_calls"]
    assert searched["function"]["name"] == "file_search" and json.loads(searched["function"]["arguments"]) == {
        "queries": ["lamp"]
    }
    assert messages[2]["tool_call_id"] == "fs_1" and "Lamps ship in 2 days." in messages[2]["content"]


def test_a_stateful_agent_is_sent_only_what_is_new_with_its_last_replys_id(tmp_path, llm):
    llm.reset()
    llm.script(
        rules=[
            {"match": "AGENT: I hold 3", "reply": user_says("", done=True)},
            {"match": "AGENT: I hold 2", "reply": user_says("And a third thing.")},
            {"match": "AGENT: I hold 1", "reply": user_says("A second thing.")},
        ],
        default=user_says("A first thing."),
    )
    (tmp_path / "scenarios.jsonl").write_text(json.dumps({"test_case_description": "You say three things."}) + "\n")
    with stateful_agent() as (url, bodies):
        _, _, item = run_the_one_scenario(desk_config(tmp_path, llm, url, max_turns=5, held="hold 3"), tmp_path)
    assert [body.get("previous_response_id") for body in bodies] == [None, "resp_1", "resp_2"]
    sent = [[(m["role"], m["content"]) for m in body["input"]] for body in bodies]
    assert sent == [
        [("user", "A first thing.")],
        [("user", "A second thing.")],  # only what is new: the agent holds the rest
        [("user", "And a third thing.")],
    ]
    assert item["results"][0]["passed"] is True  # it answered from the whole conversation
    assert len(item["datasource_item"]["messages"]) == 6  # the conversation kept whole all the same
