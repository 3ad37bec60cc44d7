"""The database goes away under a run: PostgreSQL restarted mid-run (the server's workers wait and
reconnect), SQLite's disk filling up (the run stops with a clear error and resumes once there is
room). Either way every item ends up stored exactly once and nothing stored before is lost."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from openai import OpenAI

from tests.api.test_leases import item_rows
from tests.cli.test_cli import assay, write_eval
from tests.support.fixtures import free_port
from tests.support.servers import judged_run, start_assay_server

IS_ROOT = os.geteuid() == 0


def _pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return found[-1].parent if found else None


class OwnPostgres:
    """A throwaway PostgreSQL cluster of this test's own, so stopping it disturbs nothing else."""

    def __init__(self) -> None:
        self.bin = _pg_bin()
        # Not under pytest's tmp_path: as root, the server runs as postgres, which may not enter it.
        self.data = Path(tempfile.mkdtemp(prefix="assay-test-pg-"))
        self.port = free_port()
        self.as_user = ["runuser", "-u", "postgres", "--"] if IS_ROOT else []
        if IS_ROOT:
            shutil.chown(self.data, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust")
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self.as_user, str(self.bin / tool), *args], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1"
        # -l: the server logs to a file, so it does not hold our pipes open after pg_ctl returns.
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.data / "server.log"), "-o", options, "-w", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        subprocess.run(
            [*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.mark.skipif(_pg_bin() is None, reason="needs PostgreSQL's server binaries (initdb, pg_ctl)")
def test_postgres_restarted_mid_run_the_run_completes_with_each_item_once(tmp_path, llm):
    total = 2000
    llm.reset()
    llm.script(default={"content": '{"reason": "fine", "score": 4}'}, latency_ms=40)
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t, max_concurrency: 16}}\n")
    postgres = OwnPostgres()
    postgres.start()
    engine = sa.create_engine(postgres.url, pool_pre_ping=True)
    server, client = start_assay_server(tmp_path / "home", models, database_url=postgres.url)
    try:
        eval_id, run_id = judged_run(client, total)
        deadline = time.monotonic() + 120
        while len(item_rows(engine, run_id)) < 300 and time.monotonic() < deadline:
            time.sleep(0.1)
        engine.dispose()
        postgres.stop()
        time.sleep(10)  # the outage the issue asks for: ten seconds without a database
        postgres.start()
        finished = _wait_through_outage(client, eval_id, run_id)
        assert finished.status == "completed", finished.error
        assert finished.result_counts.total == total
        ids = item_rows(engine, run_id)
        assert sorted(ids) == list(range(total))  # each item once
        assert server.poll() is None
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=20)
        engine.dispose()
        postgres.remove()


def _wait_through_outage(client: OpenAI, eval_id: str, run_id: str):
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            run = client.evals.runs.retrieve(run_id=run_id, eval_id=eval_id)
            if run.status in ("completed", "failed", "canceled"):
                return run
        except Exception:  # noqa: BLE001 - 503 while the database was away
            pass
        time.sleep(0.2)
    raise AssertionError("the run did not finish")


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB file system for ASSAY_HOME (a tmpfs; mounting needs root)."""
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "none", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {made.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_sqlite_disk_full_stops_the_run_clearly_and_it_resumes_once_there_is_room(tmp_path, small_disk):
    total = 5000  # about 6 MB stored: a run that only computes writes 1,000 items (1.2 MB) a transaction
    with (tmp_path / "big.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(total):
            handle.write(
                json.dumps({"response": f"answer {i} " + "words " * 150, "ground_truth": f"answer {i}"}) + "\n"
            )
    config = write_eval(tmp_path, "big.jsonl", "  - builtin.f1_score\n")
    full = assay("run", str(config), home=small_disk)
    assert full.returncode == 1, (full.stdout, full.stderr)
    assert "Traceback" not in full.stderr
    assert "disk is full" in full.stderr and "--resume" in full.stderr
    with sqlite3.connect(small_disk / "assay.db") as conn:
        (run_id,) = conn.execute("select id from runs").fetchone()
        before = {r[0] for r in conn.execute("select datasource_item_id from output_items")}
    assert 0 < len(before) < total

    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    resumed = assay("run", str(config), "--resume", run_id, home=small_disk)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(small_disk / "assay.db") as conn:
        ids = [r[0] for r in conn.execute("select datasource_item_id from output_items where run_id = ?", (run_id,))]
        status = conn.execute("select status from runs where id = ?", (run_id,)).fetchone()[0]
    assert sorted(ids) == list(range(total)) and before <= set(ids)
    assert status == "completed"
