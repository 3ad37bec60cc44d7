"""Marks for tests that run code in the sandbox (``assay.sandbox``: bubblewrap)."""

from __future__ import annotations

import os
import shutil

import pytest

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None and not os.environ.get("ASSAY_TEST_REQUIRE_SANDBOX"), reason="bwrap not installed"
)
"""Skipped where bubblewrap is not installed, unless CI requires the sandbox (then the test fails)."""
