"""The bubblewrap command line that isolates one call of untrusted code.

Inside: fresh PID, network, IPC, UTS and mount namespaces (and cgroup, where the kernel has it);
a seccomp filter refusing the system calls escapes start with (``seccomp.py``);
only the system's read-only ``/usr`` (with the usual ``/bin``, ``/lib`` links), the Python
interpreter's installation and its virtual environment, all read-only; a private ``/proc`` that
shows the sandbox's own processes; a minimal ``/dev``; a size-capped private ``/tmp``. No ``/etc``
(no passwd, no resolver), no home, no ``$ASSAY_HOME``, no environment but a few fixed variables.

Two modes, by who runs it:

- **root** (a server): no user namespace. bwrap keeps only CAP_SETUID/CAP_SETGID for the runner,
  which moves to a host uid of its own before the code starts. A real unprivileged uid is what
  makes RLIMIT_NPROC bind (it never binds uid 0, even inside a user namespace) and leaves the code
  no capability in any namespace.
- **anyone else**: a user namespace as well, the code running as ``nobody`` inside it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path, PurePosixPath

from assay.config.settings import settings

RUNNER = Path(__file__).with_name("runner.py")
RUNNER_INSIDE = "/sandbox/runner.py"
ENVIRONMENT = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    # One thread per numeric library: threads count against the process limit.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def find_bwrap() -> str | None:
    """The bwrap binary: ``$ASSAY_BWRAP`` (``none`` to pretend there is none), else ``bwrap`` on PATH."""
    chosen = settings().bwrap
    if chosen == "none":
        return None
    return chosen or shutil.which("bwrap")


def python_roots() -> list[str]:
    """What the interpreter needs: its installation and, when it runs from one, the virtualenv."""
    roots = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    return sorted(root for root in roots if not root.startswith("/usr/"))


def _parents(path: str) -> list[str]:
    parts = PurePosixPath(path).parents
    return [str(p) for p in reversed(parts) if str(p) != "/"]


def command(bwrap: str, tmp_mb: int, as_root: bool, seccomp_fd: int | None = None) -> list[str]:
    """The full command: bwrap, its options, then the runner under this interpreter.
    ``seccomp_fd``: a descriptor holding the filter bwrap applies to the runner (``seccomp.py``)."""
    args = [
        bwrap,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/lib",
        "/lib",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(tmp_mb * 1024 * 1024),
        "--tmpfs",
        "/tmp",
    ]
    if os.path.isdir("/usr/lib64"):
        args += ["--symlink", "usr/lib64", "/lib64"]
    made: set[str] = set()
    for root in python_roots():
        for parent in _parents(root):
            if parent not in made:  # bwrap would make them 0700 as root: the dropped uid could not pass
                args += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        args += ["--ro-bind", root, root]
    args += ["--perms", "0755", "--dir", "/sandbox", "--ro-bind", str(RUNNER), RUNNER_INSIDE]
    for name, value in ENVIRONMENT.items():
        args += ["--setenv", name, value]
    if as_root:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user", "--uid", "65534", "--gid", "65534", "--disable-userns"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return [*args, "--chdir", "/tmp", sys.executable, "-I", RUNNER_INSIDE]


def exposes(path: str) -> bool:
    """Whether ``path`` (``$ASSAY_HOME``, say) would be visible inside the sandbox."""
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root + "/") for root in python_roots()) or real.startswith("/usr/")
