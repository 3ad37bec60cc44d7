"""A database URL whose driver is not installed says what to install, not a ModuleNotFoundError."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.store import Store


def test_a_missing_driver_names_what_to_install():
    with pytest.raises(ConfigError, match="driver for postgresql\\+pg8000 is not installed") as raised:
        Store("postgresql+pg8000://postgres@127.0.0.1:5432/postgres")  # pg8000 is no dependency of ours
    assert raised.value.hint == "pip install 'assay[postgres]'"
