"""JSON responses that can always be sent: the store keeps NaN, infinities and lone surrogates
(a dataset's ``1e999``, a model's odd bytes), which ``json`` refuses to write by default."""

from __future__ import annotations

import json
import math
from typing import Any

from fastapi.responses import JSONResponse

from assay.store.values import exact_orjson


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class WireJSON(JSONResponse):
    """Non-finite numbers go out as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` and lone
    surrogates as ``\\u`` escapes: valid JSON for every client, nothing dropped."""

    def render(self, content: Any) -> bytes:
        fast = exact_orjson(content)  # the careful path below only for what orjson cannot say
        if fast is not None:
            return fast
        try:
            return super().render(content)
        except (ValueError, UnicodeEncodeError):
            return json.dumps(_finite(content), allow_nan=False, separators=(",", ":")).encode("ascii")
