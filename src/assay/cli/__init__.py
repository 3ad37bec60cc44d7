"""The ``assay`` command line: thin commands, one file per group."""

from assay.cli.main import main

__all__ = ["main"]
