"""Which servers are serving a store, so a command that just wrote a run can link to its page.

``assay serve`` and ``assay view`` each leave ``$ASSAY_HOME/servers/<pid>.json`` (their UI's base
URL and the store they serve) while they run; ``assay run`` reads them. A file whose process is
gone is stale (a server killed with SIGKILL cannot clean up) and is removed by the next reader.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from assay.config.settings import settings


def _folder() -> Path:
    return settings().home / "servers"


def _key(store_url: str) -> str:
    """The store, named without writing its URL (a password in it) to disk."""
    return hashlib.sha256(store_url.encode()).hexdigest()


@contextlib.contextmanager
def announced(base_url: str, store_url: str) -> Iterator[None]:
    """While the block runs, say that ``base_url`` serves ``store_url``."""
    path = _folder() / f"{os.getpid()}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"url": base_url, "store": _key(store_url), "pid": os.getpid()}), encoding="utf-8")
    except OSError:
        pass  # an unwritable ASSAY_HOME costs the link, not the server
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def server_for(store_url: str) -> str | None:
    """The base URL of a live server on ``store_url``, if there is one."""
    for path in sorted(_folder().glob("*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            alive = _alive(int(entry["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not alive:
            path.unlink(missing_ok=True)
        elif entry.get("store") == _key(store_url):
            return str(entry["url"])
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True
