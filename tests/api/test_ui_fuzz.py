"""The web UI is not in the OpenAPI document, so schemathesis never reaches it: this property-based
test does. Every UI route the app serves (pages, exports, form posts, found from the app itself so
a new page is fuzzed the day it is added) gets generated path values, query values and form
fields, the real ones among them (a run's id, a queue's id, the page's own form token), against a
real server on each store. No answer may be a server error."""

from __future__ import annotations

import re
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.api import create_app
from tests.api.conftest import wait_for
from tests.api.test_safe_to_expose import EVAL, call
from tests.support.fixtures import poll
from tests.support.servers import ui_form_token

NUMBERS = st.sampled_from(["0", "-1", "1", "7", str(2**63), str(2**64), "1" + "0" * 30, "1e400", "nan", "-0"])
TEXTS = st.one_of(
    NUMBERS,
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40),
    st.sampled_from(["evalrun_", "%", "_", "..", "/", "'", "<script>", "\x00", "a" * 600]),
)
QUERY_NAMES = ["page", "status", "criterion", "verdict", "q", "sort", "a", "b", "pick", "margin", "as", "next"]


def served_routes(routes, prefix: str = "") -> list[tuple[str, str]]:
    """(method, path template) of every route, included routers' too (FastAPI keeps them nested)."""
    found = []
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            found += served_routes(included.routes, prefix + route.include_context.prefix)
        elif hasattr(route, "methods") and hasattr(route, "path"):
            found += [(method, prefix + route.path) for method in sorted(route.methods or ()) if method != "HEAD"]
    return found


def ui_routes(app) -> list[tuple[str, str]]:
    """(method, path template) of every UI route the app serves."""
    return sorted({(m, p) for m, p in served_routes(app.routes) if p == "/" or p.startswith("/ui")})


@pytest.fixture
def populated(served):
    client = served.client()
    made = client.evals.create(**EVAL)
    source = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": {"a": "a"}}]}}
    run = wait_for(client, made.id, client.evals.runs.create(eval_id=made.id, data_source=source).id)
    assert run.status == "completed"
    from assay.review.queues import create_queue

    queue = create_queue(served.store, "default", run.id, criteria=["s"])
    known = {"run_id": run.id, "queue_id": queue["id"], "item_id": "0", "position": "0"}
    return served, known, ui_routes(create_app(served.store))


EXAMPLES_PER_ROUTE = 50
FORM_FIELDS = ["key", "next", "reviewers", "items", "limit", "against", "reviewer", "comment", "verdict:s", "score:s"]


def test_no_generated_ui_request_gets_a_server_error(populated):
    """Each route gets its own examples (a route drawn among twenty would be reached a few times),
    first from a visitor of a server without keys, then from one signed in to a server with keys
    (pages then see one project, and short ids resolve within it)."""
    served, known, routes = populated
    for method, template in routes:
        fuzz_route(served, known, method, template, cookie="")
    key = served.store.create_key("default")
    signed_in = f"assay_key={key}"
    status, _ = poll(lambda: call(f"{served.url}/v1/evals"), lambda answer: answer[0] == 401, seconds=10)
    assert status == 401, "the server did not see its new key"
    for method, template in routes:
        fuzz_route(served, known, method, template, cookie=signed_in)


def fuzz_route(served, known: dict[str, str], method: str, template: str, cookie: str) -> None:
    @settings(
        max_examples=EXAMPLES_PER_ROUTE,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(data=st.data())
    def one_request(data: st.DataObject) -> None:
        path = template
        for name in re.findall(r"\{(\w+)(?::path)?\}", template):
            value = data.draw(st.one_of(st.just(known.get(name, "x")), NUMBERS, TEXTS), label=name)
            path = re.sub(r"\{" + name + r"(?::path)?\}", urllib.parse.quote(value, safe=""), path)
        query = data.draw(st.fixed_dictionaries({}, optional=dict.fromkeys(QUERY_NAMES, TEXTS)), label="query")
        url = f"{served.url}{path}?{urllib.parse.urlencode(query)}"
        body = None
        headers: dict[str, str] = {"Cookie": cookie} if cookie else {}
        if method == "POST":
            fields = data.draw(st.dictionaries(st.sampled_from(FORM_FIELDS), TEXTS, max_size=5), label="form")
            if data.draw(st.booleans(), label="with the page's token"):
                fields["csrf"] = ui_form_token(f"{served.url}/ui/login", cookie)
            body = urllib.parse.urlencode(fields).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        status, text = call(url, body, headers, method=method)
        assert status < 500, (method, url, status, text[:500])

    one_request()
