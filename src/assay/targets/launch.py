"""Agents assay starts itself: an ``agents:`` entry with a ``command`` runs as a child process on
a free loopback port for as long as it is needed (the optimizer starts one per candidate, with
that candidate's configuration in its environment, as Foundry starts a temporary agent version)."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from assay.errors import ConfigError
from assay.targets.agents import AgentConfig

PORT = "{port}"


@contextmanager
def launched(agent: AgentConfig, env: dict[str, str] | None = None) -> Iterator[AgentConfig]:
    """Start ``agent.command`` and yield the agent with its real endpoint once the port accepts
    connections; stopped on exit. An agent without a command is yielded as it is."""
    if not agent.command:
        yield agent
        return
    port = str(_free_port())
    command = [part.replace(PORT, port) for part in agent.command]
    endpoint = agent.endpoint.replace(PORT, port)
    child_env = {**os.environ, "PORT": port, **(env or {})}
    # A file, not a pipe: a chatty agent (access logs) would fill a pipe nobody reads and stall.
    with tempfile.TemporaryFile() as stderr:
        try:
            process = subprocess.Popen(  # noqa: S603 - the operator's own command, from their config file
                command, env=child_env, stdout=subprocess.DEVNULL, stderr=stderr
            )
        except OSError as exc:
            raise ConfigError(f"agent {agent.name}: could not start {command[0]!r} ({exc.strerror})") from None
        try:
            _wait_for(agent, process, int(port), stderr)
            yield agent.model_copy(update={"endpoint": endpoint, "command": None})
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(agent: AgentConfig, process: subprocess.Popen[bytes], port: int, stderr: IO[bytes]) -> None:
    """Until the port takes a connection; the process dying or the timeout is an error with its stderr."""
    deadline = time.monotonic() + agent.startup_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            stderr.seek(0)
            tail = stderr.read().decode(errors="replace")[-800:]
            raise ConfigError(f"agent {agent.name} exited with status {process.returncode} at start:\n{tail}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise ConfigError(
        f"agent {agent.name} did not listen on port {port} within {agent.startup_timeout:g}s",
        hint="it must serve on the port given as {port} or $PORT; raise startup_timeout if it is slow to start",
    )
