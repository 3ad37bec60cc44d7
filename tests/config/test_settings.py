"""Every ASSAY_* variable is a field of ``assay.config.settings.Settings``, read nowhere else, and listed in
docs/configuration.md with what it does; a bad value is refused naming the variable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.config.settings import Settings, settings
from assay.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "assay"
DOC = ROOT / "docs" / "configuration.md"


def test_every_variable_the_code_names_is_a_setting():
    named = {
        name
        for path in SOURCE.rglob("*.py")
        for name in re.findall(r"\bASSAY_[A-Z_]*[A-Z]\b", path.read_text(encoding="utf-8"))
    }
    assert named and named <= set(Settings.variables())


def test_no_module_but_settings_reads_an_assay_variable():
    readers = [
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if path.name != "settings.py"
        and re.search(r"environ(\.get)?[(\[]\s*[\"']ASSAY_|getenv\([\"']ASSAY_", path.read_text(encoding="utf-8"))
    ]
    assert readers == []


def test_the_configuration_page_lists_each_variable_and_what_it_does():
    page = DOC.read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(ASSAY_[A-Z_]+)` \|", page, flags=re.MULTILINE)
    assert listed == list(Settings.variables())
    for name, meaning in Settings.variables().items():
        assert meaning and " ".join(meaning.replace("``", "`").split())[:40] in " ".join(page.split()), name


def test_a_bad_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("ASSAY_LEASE_SECONDS", "soon")
    with pytest.raises(ConfigError, match="ASSAY_LEASE_SECONDS='soon'") as raised:
        settings()
    assert "docs/configuration.md" in (raised.value.hint or "")
    monkeypatch.setenv("ASSAY_LEASE_SECONDS", "2.5")
    assert settings().lease_seconds == 2.5  # read when asked, not at import
