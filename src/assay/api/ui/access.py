"""Who may see what in the web UI: once the server has API keys, a visitor shows one (a sign-in
form, kept in a cookie) and sees that key's project only, as the API would."""

from __future__ import annotations

import hashlib
import hmac
from typing import Annotated
from urllib.parse import urlencode

from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from assay.api.context import context, presented_key
from assay.report.run_view import TEMPLATES

KEY_COOKIE = "assay_key"
FORM_FIELD = "csrf"
"""The hidden field of every form the UI posts: a token only the server's own pages know."""


class SignInFirst(Exception):
    """The server has API keys and this visitor has not shown one of them."""


def viewer_of(request: Request) -> str | None:
    """The project whose runs this visitor may see; None for every project, which is how the API
    itself serves a server without keys (it then listens on loopback only)."""
    ctx = context(request)
    if not ctx.keys_exist():
        return None
    key = presented_key(request) or request.cookies.get(KEY_COOKIE, "")
    owner = ctx.owner_of(key) if key else None
    if owner is None:
        raise SignInFirst
    return owner


Viewer = Annotated[str | None, Depends(viewer_of)]
"""A page's visitor: the project it may see (None: every project); else it is sent to sign in."""


class ForeignForm(Exception):
    """A form post without the token of the server's own page: another site's, or a stale page's."""


def form_token(request: Request) -> str:
    """The token this visitor's forms carry: the server's secret over the key it signed in with, so
    another site can neither read it (no CORS) nor make it (no secret), signed in or not."""
    signed_in = request.cookies.get(KEY_COOKIE, "")
    return hmac.new(context(request).form_secret, signed_in.encode(), hashlib.sha256).hexdigest()


async def posted_from_this_ui(request: Request) -> None:
    """A dependency of every form post: its token must be the one this server's page gave it."""
    form = await request.form()
    given = str(form.get(FORM_FIELD) or "")
    if not hmac.compare_digest(given.encode(), form_token(request).encode()):
        raise ForeignForm


FromThisUi = Depends(posted_from_this_ui)


def install(app: FastAPI) -> None:
    async def redirect(request: Request, _: Exception) -> RedirectResponse:
        return sign_in_first(request)

    async def refuse(_: Request, __: Exception) -> HTMLResponse:
        return HTMLResponse(TEMPLATES.get_template("refused.html").render(title="Form refused"), status_code=403)

    app.add_exception_handler(SignInFirst, redirect)
    app.add_exception_handler(ForeignForm, refuse)


def sign_in_first(request: Request) -> RedirectResponse:
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/ui/login?{urlencode({'next': here})}", status_code=303)


def back_into_the_ui(target: str) -> str:
    """Where to go after signing in: only somewhere in the UI, so a crafted link cannot send a
    visitor off to another site."""
    return target if target.startswith("/ui") and not target.startswith("/ui/log") else "/ui"
