"""Entra ID as tests fake it: an ``az`` on PATH that mints tokens, as azure-identity's own tests fake
the Azure CLI, for the scripted LLM server's Entra ID mode (``tests.support.llm_server``)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

AZ = """#!{python}
import json, os, random, sys, time
args = sys.argv[1:]
if args[:2] != ["account", "get-access-token"]:
    sys.exit("this az answers only 'az account get-access-token'")
resource = args[args.index("--resource") + 1] if "--resource" in args else "https://management.azure.com"
now = time.time()
lifetime = float(os.environ.get("FAKE_AZ_LIFETIME", "3600"))
expires_on = int(now + lifetime)
token = os.environ.get("FAKE_AZ_TOKEN") or "entra~%s~%d~%x" % (resource, expires_on, random.getrandbits(48))
process = os.getppid()  # the process that asked: past the shell azure-identity starts az in
while open("/proc/%d/comm" % process).read().strip() in ("sh", "dash", "bash"):
    process = int(open("/proc/%d/stat" % process).read().rsplit(")", 1)[1].split()[1])
with open(os.environ["FAKE_AZ_LOG"], "a") as log:
    log.write("%d %s\\n" % (process, token))
print(json.dumps({{"accessToken": token, "expires_on": expires_on, "tokenType": "Bearer",
                  "subscription": "00000000-0000-0000-0000-000000000000", "tenant": "contoso"}}))
"""


@dataclass
class FakeAz:
    folder: Path
    log: Path

    def minted(self) -> list[str]:
        """Every token this ``az`` has printed, oldest first."""
        return [token for _, token in self.minted_by()]

    def minted_by(self) -> list[tuple[int, str]]:
        """Every token printed, with the process id of whoever asked for it."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [(int(pid), token) for pid, token in (line.split(" ", 1) for line in lines)]

    def environment(self, lifetime: float, token: str | None = None) -> dict[str, str]:
        """Variables under which azure-identity's ``DefaultAzureCredential`` answers from this ``az``
        (``AZURE_TOKEN_CREDENTIALS=dev``: developer credentials only, so no managed identity endpoint
        is probed), for a process started with them. With ``token``, it prints that token every time
        (an assay API key, which ``assay serve`` takes as a bearer token)."""
        return {
            **({"FAKE_AZ_TOKEN": token} if token else {}),
            "PATH": f"{self.folder}{os.pathsep}{os.environ.get('PATH', '')}",
            "FAKE_AZ_LOG": str(self.log),
            "FAKE_AZ_LIFETIME": str(lifetime),
            "AZURE_TOKEN_CREDENTIALS": "dev",
        }


def fake_az(folder: Path) -> FakeAz:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "az"
    script.write_text(AZ.format(python=sys.executable))
    script.chmod(0o755)
    return FakeAz(folder, folder / "minted.log")


@pytest.fixture(autouse=True)
def no_cached_tokens():
    """No Entra ID token cached by an earlier test (a module that imports this fixture uses it)."""
    from assay.llm import entra

    entra.forget()
    yield
    entra.forget()
