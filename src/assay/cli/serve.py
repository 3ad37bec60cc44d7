"""``assay serve``, ``assay view``, ``assay worker`` and ``assay keys create``."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from assay.cli.common import CACHE_OPTION, catalog, executor_options, make_executor, open_store, out
from assay.collector import tune_for_throughput
from assay.errors import ConfigError

if TYPE_CHECKING:
    import uvicorn

    from assay.llm import CacheMode, ModelRegistry
    from assay.store import Store


def models_from_file(
    models_file: Path | None, cache: Store | None = None, cache_mode: CacheMode = "use"
) -> ModelRegistry:
    from assay.config.yamlfile import safe_load
    from assay.llm import ModelRegistry, parse_models
    from assay.targets.agents import parse_agents

    if models_file is None:
        return ModelRegistry(cache=cache, cache_mode=cache_mode)

    try:
        section = safe_load(models_file.read_text(encoding="utf-8-sig"), str(models_file)) or {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{models_file}: cannot read models ({exc})") from None
    sections = {"agents", "tools", "default"} & set(section)
    models = parse_models(section.get("models", {} if sections else section), where=str(models_file))
    agents = parse_agents(section.get("agents"), where=f"{models_file}: agents")
    tool_sets = parse_tool_sets(section.get("tools"), models_file)
    default = section.get("default")
    if default is not None and default not in {model.name for model in models}:
        raise ConfigError(
            f"{models_file}: default: {str(default)[:100]!r} is not a model of the models: section",
            hint="name the model a criterion uses when it names none (a key under models:)",
        )
    return ModelRegistry(
        models, agents=agents, cache=cache, cache_mode=cache_mode, tool_sets=tool_sets, default=default
    )


def parse_tool_sets(section: Any, models_file: Path) -> dict[str, list[dict[str, Any]]]:
    """``tools: {orders: [{python: tools.py}, {mcp: {url: ...}}]}``: the tool sets the operator lets
    requests name, files and commands resolved beside the models file."""
    from assay.targets.tools import check_sources

    if section is None:
        return {}
    if not isinstance(section, dict):
        raise ConfigError(f"{models_file}: tools: expected a mapping of tool set name to its sources")
    return {
        str(name): check_sources(sources, f"{models_file}: tools.{name}", models_file.parent)
        for name, sources in section.items()
    }


def _sandbox_for_others() -> None:
    """A server takes code over the API (a key-less one too: any web page its user opens may post to
    it), so that code runs in the sandbox or not at all, unless the operator opted out by name
    (``ASSAY_SANDBOX=unsandboxed``). Either way the operator is told as the server starts."""
    from assay.config.settings import settings
    from assay.sandbox import INSTALL_HINT, Sandbox

    if settings().sandbox != "unsandboxed":
        os.environ.update(ASSAY_SANDBOX="require")  # heard by every later settings() of this process
    if Sandbox.configured().isolated:
        return
    if settings().sandbox == "unsandboxed":
        out.print(
            "[red]ASSAY_SANDBOX=unsandboxed and bwrap not found: code posted to this server (code evaluators, "
            "python graders, promptfoo python checks) runs as your user in a plain subprocess, not isolated[/]"
        )
    else:
        out.print(
            "[yellow]bwrap not found: code evaluators, python graders and promptfoo python checks will be "
            f"refused ({INSTALL_HINT}; ASSAY_SANDBOX=unsandboxed runs them unisolated, at your own risk)[/]"
        )


def _allow_hosts(names: tuple[str, ...]) -> None:
    """``--allowed-host``: names the server answers to besides loopback, added to ``ASSAY_ALLOWED_HOSTS``."""
    from assay.config.settings import settings

    if names:
        given = [entry for entry in settings().allowed_hosts.split(",") if entry.strip()]
        os.environ.update(ASSAY_ALLOWED_HOSTS=",".join([*given, *names]))


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", "worker_count", default=2, show_default=True, help="Run workers in this process.")
@click.option(
    "--models", "models_file", type=click.Path(path_type=Path, exists=True), help="YAML with a models: section."
)
@CACHE_OPTION
@click.option("--tls", is_flag=True, help="Serve https with a self-signed certificate made under $ASSAY_HOME/tls.")
@click.option("--certfile", type=click.Path(path_type=Path, exists=True, dir_okay=False), help="Serve https with it.")
@click.option("--keyfile", type=click.Path(path_type=Path, exists=True, dir_okay=False), help="The certificate's key.")
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="A host name the server answers to besides loopback (repeat; *.example.com); others get 421.",
)
def serve(
    host: str,
    port: int,
    worker_count: int,
    models_file: Path | None,
    cache_mode: CacheMode,
    tls: bool,
    certfile: Path | None,
    keyfile: Path | None,
    allowed_hosts: tuple[str, ...],
) -> None:
    """Serve the OpenAI Evals API, the OTLP trace receiver, the capture pass-through and the web UI
    (and run evaluations) on HOST:PORT."""
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    from assay.api import create_app
    from assay.api import tls as certificates
    from assay.api.announce import announced
    from assay.api.background import for_workers
    from assay.api.rules import start_firer
    from assay.config.settings import settings
    from assay.outbound import is_loopback_host, serve_others
    from assay.run.worker import start_workers

    _allow_hosts(allowed_hosts)
    settings()  # a bad ASSAY_* value stops the server here, not a request or a run later
    serve_others()  # URLs from API callers must pass the operator's allow-list
    pair = certificates.given(certfile, keyfile) if certfile or keyfile else None
    if tls and pair is None:
        pair = certificates.self_signed(host)

    store = open_store()
    registry = models_from_file(models_file, store, cache_mode)
    _sandbox_for_others()
    if not store.has_keys() and not is_loopback_host(host):
        raise ConfigError(
            f"no API keys exist, so assay serves loopback only and will not listen on {host}",
            hint="create one with `assay keys create --project NAME`, or serve on 127.0.0.1",
        )
    listener = listen(host, port)  # a taken port is said before anything starts or claims to serve
    if not store.has_keys():
        out.print("[yellow]no API keys configured: anyone on this machine can call the API (loopback only)[/]")
    jobs = for_workers(store, lambda project: catalog(store, project), lambda: registry)
    stop, _ = start_workers(
        store, lambda project: catalog(store, project), lambda: registry, worker_count, background=jobs
    )
    app = create_app(store, catalog=lambda project: catalog(store, project), models=lambda: registry)
    start_firer(app.state.assay, stop, f"{socket.gethostname()}:{os.getpid()}")  # evaluation rules' runs
    base = f"{'https' if pair else 'http'}://{_netloc(host, listener)}"
    certfile_, keyfile_ = (str(pair[0]), str(pair[1])) if pair else (None, None)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", ssl_certfile=certfile_, ssl_keyfile=keyfile_
    )
    server = uvicorn.Server(config)
    tune_for_throughput()
    try:
        with _terminable(server):  # before the address is out: a Ctrl-C from then on ends quietly
            out.print(f"assay serving on {base}/v1 with {worker_count} workers; store {store.url}")
            if pair:
                trust = f"SSL_CERT_FILE={pair[0]} REQUESTS_CA_BUNDLE={pair[0]}"
                out.print(f"[dim]certificate {pair[0]}: trust it with {trust}[/]")
            out.print(
                f"[dim]web UI {base}/ui · OTLP traces {base}/v1/traces · pass-through "
                f"{base}/v1/chat/completions, {base}/v1/responses[/]"
            )
            with announced(base, store.url):
                server.run(sockets=[listener])
        if not server.started:  # as uvicorn.run ends when the port is taken or the app's startup failed
            raise SystemExit(STARTUP_FAILURE)
    finally:
        stop.set()


@click.command("worker")
@click.option(
    "--models", "models_file", type=click.Path(path_type=Path, exists=True), help="YAML with a models: section."
)
@click.option("--threads", default=2, show_default=True, help="Runs executed at once by this process.")
@CACHE_OPTION
@executor_options
def worker(
    models_file: Path | None,
    threads: int,
    cache_mode: CacheMode,
    executor: str,
    ray_address: str | None,
    actors: int | None,
) -> None:
    """Execute queued runs from the store (ASSAY_DATABASE_URL); run several on several machines.

    Between runs a worker makes the insights and agent insight runs the API queued."""
    from assay.api.background import for_workers
    from assay.config.settings import settings
    from assay.outbound import serve_others
    from assay.run.worker import start_workers

    settings()  # a bad ASSAY_* value stops the worker here, not a run later
    serve_others()  # the runs it executes come from API callers
    make_executor(executor, ray_address, actors)  # a missing Ray fails here, with the install command
    store = open_store()
    registry = models_from_file(models_file, store, cache_mode)
    _sandbox_for_others()
    stop, running = start_workers(
        store,
        lambda project: catalog(store, project),
        lambda: registry,
        threads,
        executor=lambda: make_executor(executor, ray_address, actors),
        background=for_workers(store, lambda project: catalog(store, project), lambda: registry),
    )
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    tune_for_throughput()
    on = f" (items on Ray actors{f' at {ray_address}' if ray_address else ''})" if executor == "ray" else ""
    out.print(f"assay worker: {threads} threads on {store.url}{on}", soft_wrap=True)
    try:
        while any(t.is_alive() for t in running):
            stop.wait(0.5)
    except KeyboardInterrupt:
        stop.set()


@click.group("keys")
def keys_group() -> None:
    """API keys for `assay serve`."""


@keys_group.command("create")
@click.option("--project", required=True, help="The project the key can see.")
def create_key(project: str) -> None:
    """Create an API key for PROJECT; it is shown once and stored hashed."""
    key = open_store().create_key(project)
    out.print(key, markup=False)  # alone on stdout, for KEY=$(assay keys create ...)
    click.echo(
        f"this is the key of project {project!r}, shown once: the store keeps only its hash, so keep it now "
        "(send it as 'Authorization: Bearer KEY' or 'api-key: KEY')",
        err=True,
    )


@click.command("view")
@click.argument("run_id", metavar="[RUN]", required=False)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Another free port when this one is taken (0: any free port).",
)
@click.option("--no-browser", is_flag=True, help="Print the link; do not open a browser.")
@click.pass_context
def view(ctx: click.Context, run_id: str | None, host: str, port: int, no_browser: bool) -> None:
    """Open the web UI on this store, read-only, at RUN's page (or the runs list).

    With --port given, the UI is served on exactly that port (an error when it is taken); without,
    a running `assay serve` of this store is used, else port 8000 or another free one."""
    from assay.api.announce import server_for
    from assay.outbound import is_loopback_host

    store = open_store()
    page = f"/ui/runs/{store.run_id_for(run_id)}" if run_id else "/ui"
    chosen = ctx.get_parameter_source("port") is not click.core.ParameterSource.DEFAULT
    running = None if chosen else server_for(store.url)
    if running is not None:  # `assay serve` has this store already: use it
        out.print(f"{running}{page}  (served by a running `assay serve`; store {store.url})", soft_wrap=True)
        if not no_browser:
            webbrowser.open(running + page)
        return
    if not is_loopback_host(host):
        raise ConfigError(f"assay view serves loopback only, not {host}", hint="use assay serve with API keys")
    listener = listen(host, port, or_any=not chosen)
    base = f"http://{_netloc(host, listener)}"
    _serve_read_only(store, listener, base, page, open_browser=not no_browser)


def listen(host: str, port: int, *, or_any: bool = False) -> socket.socket:
    """A socket bound to HOST:PORT and listening (connections from here on wait for the server
    instead of being refused); with ``or_any``, any free port when PORT is taken."""
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: no wait after a restart
    try:
        listener.bind((host, port))
    except OSError as exc:
        if not or_any:
            listener.close()
            raise ConfigError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                hint="another program holds the port: choose another with --port (0: any free port)",
            ) from None
        listener.bind((host, 0))
    listener.listen(2048)
    return listener


def _netloc(host: str, listener: socket.socket) -> str:
    return f"{f'[{host}]' if ':' in host else host}:{listener.getsockname()[1]}"


def _serve_read_only(store: Store, listener: socket.socket, base: str, page: str, *, open_browser: bool) -> None:
    import uvicorn

    from assay.api import create_app
    from assay.api.announce import announced

    app = create_app(store, catalog=lambda project: catalog(store, project), read_only=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    tune_for_throughput()
    with _terminable(server):  # before the link is out: a Ctrl-C from then on ends quietly
        out.print(f"{base}{page}  (read-only; store {store.url}; Ctrl-C stops)", soft_wrap=True)
        if open_browser:
            webbrowser.open(base + page)
        with announced(base, store.url):
            server.run(sockets=[listener])


@contextlib.contextmanager
def _terminable(server: uvicorn.Server) -> Iterator[None]:
    """SIGTERM and Ctrl-C end the process through ``finally`` blocks (the announcement is withdrawn,
    the workers stopped), quietly, with the shell's code for the signal. The first signal only asks
    the server to stop: raised at once, it could land while asyncio is still setting up the loop and
    leave ``Server.serve`` never awaited (a warning and an ignored exception on the way out). While
    it serves, uvicorn's own handlers catch the signal, shut down, and raise it again under this one.
    A second signal while the server is not serving yet ends the process at once."""
    received: list[int] = []

    def leave(signum: int, _: Any) -> None:
        if received:
            raise SystemExit(128 + signum)
        received.append(signum)
        server.should_exit = True  # a server not started yet starts, then stops before it serves

    previous = {number: signal.signal(number, leave) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if received:
        raise SystemExit(128 + received[0])
