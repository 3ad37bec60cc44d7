"""Ctrl-C's watchdog: a run whose unwinding hangs is still marked canceled and the command ends."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_hung_unwind_is_ended_by_the_watchdog_with_the_run_marked(tmp_path):
    marker = tmp_path / "canceled"
    code = textwrap.dedent(f"""
        import os, pathlib, signal, time
        from assay.cli.interrupt import interruptible
        with interruptible(lambda: pathlib.Path({str(marker)!r}).write_text("yes"), grace=0.5):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(30)
            except KeyboardInterrupt:
                time.sleep(30)  # an unwind that never finishes
    """)
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=20)
    assert finished.returncode == 130
    assert marker.read_text() == "yes"


def test_an_unwind_in_time_leaves_the_handling_to_the_command(tmp_path):
    marker = tmp_path / "canceled"
    code = textwrap.dedent(f"""
        import os, pathlib, signal, sys, time
        from assay.cli.interrupt import interruptible
        try:
            with interruptible(lambda: pathlib.Path({str(marker)!r}).write_text("yes"), grace=0.5):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(30)
        except KeyboardInterrupt:
            time.sleep(1)  # past the grace: the watchdog must not fire once the block has unwound
            sys.exit(7)
    """)
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=20)
    assert finished.returncode == 7 and not marker.exists()
