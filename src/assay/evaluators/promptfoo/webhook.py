"""promptfoo's ``webhook`` assertion: a verdict asked of the user's own HTTP endpoint.

A webhook is POSTed ``{output, context: {prompt, vars}}`` and answers ``{pass, score?, reason?}``;
the call goes through assay's outbound policy (a server calls only the addresses its operator
allows), never follows a redirect, and waits at most ``WEBHOOK_TIMEOUT_S``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from assay.evaluators.promptfoo.assertion import Assertion
from assay.evaluators.promptfoo.checks import Seen, Verdict
from assay.outbound import OutboundRefused, post

WEBHOOK_TIMEOUT_S = 5.0
"""promptfoo's default (``WEBHOOK_TIMEOUT``: 5,000 ms)."""


async def webhook(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    url = assertion.get("value")
    if not isinstance(url, str) or not url:
        return Verdict(False, 0.0, 'Webhook error: "webhook" assertion type must have a URL value')
    body = json.dumps({"output": seen.output, "context": {"prompt": seen.prompt, "vars": seen.vars}}).encode()
    headers = {"Content-Type": "application/json"}
    try:
        status, answer = await asyncio.to_thread(post, url, body, headers, WEBHOOK_TIMEOUT_S, "webhook assertion")
    except (OutboundRefused, OSError) as exc:
        return Verdict(False, 0.0, f"Webhook error: {exc}")
    if not 200 <= status < 300:
        return Verdict(False, 0.0, f"Webhook error: Webhook response status: {status}")
    try:
        found: Any = json.loads(answer)
    except ValueError as exc:
        return Verdict(False, 0.0, f"Webhook error: the answer is not JSON ({exc})")
    if not isinstance(found, dict) or not isinstance(found.get("pass"), bool):
        reason = (
            'Webhook error: Invariant failed: Webhook response must be a JSON object with a boolean "pass" property'
        )
        return Verdict(False, 0.0, reason)
    passed = found["pass"] != inverse
    score = found.get("score")
    if not isinstance(score, (int, float)) or isinstance(score, bool):
        score = 1.0 if passed else 0.0
    elif inverse:
        score = 1 - score
    reason = found.get("reason") or ("Assertion passed" if passed else f"Webhook returned {str(inverse).lower()}")
    return Verdict(passed, float(score), str(reason))
