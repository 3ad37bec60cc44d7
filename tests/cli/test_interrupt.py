"""Ctrl-C's watchdog: a run whose unwinding hangs is still marked canceled and the command ends."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_hung_unwind_is_ended_by_the_watchdog_with_the_run_marked(tmp_path):
    marker = tmp_path / "canceled"
    code = textwrap.dedent(f"""
        import os, pathlib, signal, threading
        from assay.cli.interrupt import interruptible
        with interruptible(lambda: pathlib.Path({str(marker)!r}).write_text("yes"), grace=0.5):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                signal.pause()  # not reached: the interrupt is raised as os.kill returns
            except KeyboardInterrupt:
                threading.Event().wait()  # an unwind that never finishes
    """)
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=20)
    assert finished.returncode == 130
    assert marker.read_text() == "yes"


def test_an_unwind_in_time_leaves_the_handling_to_the_command(tmp_path):
    marker = tmp_path / "canceled"
    code = textwrap.dedent(f"""
        import os, pathlib, signal, sys, threading
        from assay.cli.interrupt import interruptible
        try:
            with interruptible(lambda: pathlib.Path({str(marker)!r}).write_text("yes"), grace=0.5):
                os.kill(os.getpid(), signal.SIGINT)
                signal.pause()  # not reached: the interrupt is raised as os.kill returns
        except KeyboardInterrupt:
            # The block has unwound: its watchdog must return without firing (waited on, not timed).
            for watchdog in [t for t in threading.enumerate() if t.name == "assay-ctrl-c-watchdog"]:
                watchdog.join(timeout=15)
                assert not watchdog.is_alive()
            sys.exit(7)
    """)
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=20)
    assert finished.returncode == 7 and not marker.exists()
