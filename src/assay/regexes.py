"""Regular expressions that come from users (promptfoo ``regex`` checks, ``pattern`` in a JSON
Schema) run in RE2, whose time is linear in the text: ``^(a+)+$`` against 29 characters froze a
server for 20 s in Python's backtracking engine, and could for hours.

RE2 has no backreferences or lookaround. Where a pattern needs them, a local process (the user's
own files) may fall back to Python's engine; a server refuses the pattern, naming the reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import re2

from assay.errors import UserError

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is reported to the user, not to the server's stderr
_OPTIONS.max_mem = 64 << 20  # the compiled program's budget: a huge pattern fails, never the process

Search = Callable[[str], bool]


class UnsupportedPattern(UserError):
    code = "unsupported_pattern"


@functools.lru_cache(maxsize=1024)
def compiled(pattern: str, fallback: bool = False) -> Search:
    """Whether ``pattern`` is found in a text (``re.search``'s sense), in linear time; with
    ``fallback``, Python's engine for a pattern RE2 cannot run. Raises ``UnsupportedPattern``, or
    ``re.error`` for a pattern no engine reads."""
    try:
        program = re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        if not fallback:
            try:
                re.compile(pattern)
            except re.error:
                raise
            except RecursionError:
                raise re.error("the pattern is nested too deeply") from None
            detail = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            raise UnsupportedPattern(
                f"the pattern {pattern[:200]!r} needs a feature this server's linear-time engine (RE2) "
                f"does not have ({detail})",
                hint="write it without backreferences or lookaround",
            ) from None
        backtracking = re.compile(pattern)
        return lambda text: backtracking.search(text) is not None
    return lambda text: program.search(text) is not None


def search(pattern: str, text: str, fallback: bool = False) -> bool:
    return compiled(pattern, fallback)(text)
