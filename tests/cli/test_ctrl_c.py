"""Ctrl-C ends `assay run`, `assay view` and `assay serve` cleanly: the resume hint or nothing,
exit code 130, and no noise after it (unclosed aiohttp sessions, click's bare "Aborted!", a
traceback from the server's lifespan)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pytest

from tests.support.fixtures import free_port, poll

NOISE = ("Unclosed client session", "client_session:", "Aborted!", "Traceback", "Unclosed connector")


def start(args: list[str], home, cwd=None) -> subprocess.Popen[str]:
    env = {**os.environ, "ASSAY_HOME": str(home), "COLUMNS": "160"}
    env.pop("ASSAY_DATABASE_URL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "assay", *args],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def interrupt(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return process.returncode, out + err


def test_ctrl_c_during_a_run_says_how_to_resume_and_nothing_else(tmp_path, llm):
    llm.reset()
    llm.script(default={"content": '{"reason": "fine", "score": 4}'}, hold_after=0)  # every call hangs
    (tmp_path / "data.jsonl").write_text(
        "".join(json.dumps({"query": f"q{i}", "response": "a"}) + "\n" for i in range(30))
    )
    (tmp_path / "eval.yaml").write_text(
        "name: interrupted\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        "evaluators:\n  - {name: coherence, evaluator_name: builtin.coherence, initialization_parameters: {model: judge}}\n"
    )
    process = start(["run", "eval.yaml"], tmp_path, cwd=tmp_path)
    try:
        assert poll(lambda: llm.stats()["requests"], lambda n: n > 0, seconds=60) > 0  # calls are in flight
        code, said = interrupt(process)
    finally:
        process.kill()
        process.communicate()
        llm.reset()
    assert code == 130, said
    assert "--resume" in said
    assert not [noise for noise in NOISE if noise in said], said


def test_ctrl_c_stops_view_and_serve_quietly(tmp_path):
    for args in (["view", "--no-browser", "--port", "0"], ["serve", "--port", str(free_port()), "--workers", "1"]):
        process = start(args, tmp_path)
        try:
            printed = process.stdout.readline()
            while printed and "http://127.0.0.1" not in printed:  # its address: it is about to serve
                printed = process.stdout.readline()
            assert printed
            code, said = interrupt(process)
        finally:
            process.kill()
            process.communicate()
        assert code == 130, (args, said)
        assert not [noise for noise in NOISE if noise in said], (args, said)


def test_a_ctrl_c_before_the_server_serves_stops_it_before_it_serves(recwarn):
    """The window the test above can only hit by chance: the signal lands after the address is out
    and before uvicorn's loop runs. The server still starts and stops cleanly, then the process
    leaves with the signal's code."""
    import gc

    import uvicorn

    from assay.cli.serve import _terminable

    served: list[str] = []

    async def app(scope, receive, send):
        served.append(scope["type"])
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(SystemExit) as leaving, _terminable(server):
        signal.raise_signal(signal.SIGINT)  # between the printed address and the loop
        server.run(sockets=[listener])
    listener.close()
    gc.collect()  # a never-awaited coroutine warns when it is collected
    assert leaving.value.code == 130
    assert server.started and served == ["lifespan"]  # it started, then stopped before serving
    assert signal.getsignal(signal.SIGINT) == before  # the handler is put back
    assert not [w for w in recwarn if "never awaited" in str(w.message)]
