"""The one renderer for templates that may arrive over the API (prompt evaluators, promptfoo prompts):
Jinja2's immutable sandbox, bounded in what a template may make.

Jinja's sandbox stops a template reaching Python's internals; it does not stop one asking for
memory. ``{{ "x"|center(10**9) }}`` is a gigabyte, and Jinja computes filters on constants while
it *compiles*, so such a template used to fill the server's memory at creation and at every catalog
load. Here, at compile and at render time alike:

- only the filters below exist, and each that can make something big checks the size first
  (``center``, ``indent``, ``format``, ``join``, ``replace``, ``batch``, ``slice``, ``tojson``...);
  a filter a template names that is not here is refused when it compiles;
- ``*`` and ``**`` are bounded, and methods are callable on strings, lists and dicts only when they
  cannot grow anything (``lower``, ``split``, ``get``...; not ``center``, ``ljust``, ``format``);
- ``lipsum`` and ``namespace`` are gone (``namespace`` is the only state a loop can grow);
  macros, call blocks, imports and includes are refused;
- a render stops once its output passes ``MAX_RENDERED`` characters.

What remains is linear in the inputs and the template: a loop runs at most ``range``'s 100,000
times, and no loop may hold another (``check_template``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from typing import Any

import jinja2
import jinja2.exceptions
import jinja2.filters
import jinja2.nodes
import jinja2.sandbox

MAX_RENDERED = 1_000_000
"""Characters a template may produce, and any one value it may make on the way."""

SAFE_METHODS = frozenset(
    (
        "capitalize casefold count endswith find index isalnum isalpha isdigit islower isnumeric isspace "
        "istitle isupper lower lstrip partition removeprefix removesuffix rfind rindex rpartition rsplit "
        "rstrip split splitlines startswith strip swapcase title upper get items keys values copy"
    ).split()
)
"""Methods a template may call on a string, list, tuple or dict: none of them makes more than it was given."""


class TemplateTooLarge(jinja2.exceptions.SecurityError):
    """A template asked for more than ``MAX_RENDERED`` characters or items."""


def _bounded(size: int, what: str) -> None:
    if size > MAX_RENDERED:
        raise TemplateTooLarge(f"{what} would make {size:,} characters or items; a template may make {MAX_RENDERED:,}")


def _length(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return len(str(value))


def _count(value: Any) -> int:
    """A number argument as the filter would use it (0 when it is not one: the filter then fails itself)."""
    try:
        return abs(int(value))
    except (TypeError, ValueError, OverflowError):
        return 0


_WIDTHS = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _format_widths(text: str) -> int:
    """The widest field a ``%`` format string asks for (``*``: unbounded)."""
    widest = 0
    for match in _WIDTHS.finditer(text):
        for width in match.groups():
            if width == "*":
                return MAX_RENDERED + 1
            if width:
                widest = max(widest, int(width) if len(width) < 10 else MAX_RENDERED + 1)
    return widest


def _center(value: Any, width: Any = 80) -> str:
    _bounded(_count(width), "center()")
    return jinja2.filters.do_center(value, width)


def _indent(value: Any, width: Any = 4, first: bool = False, blank: bool = False) -> str:
    step = _count(width) if not isinstance(width, str) else len(width)
    _bounded(step * (str(value).count("\n") + 1) + _length(value), "indent()")
    return jinja2.filters.do_indent(value, width, first, blank)


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    _bounded(_format_widths(str(value)) * (1 + len(args) + len(kwargs)), "format()")
    return jinja2.filters.do_format(value, *args, **kwargs)


def _wordwrap(environment: jinja2.Environment, value: Any, width: Any = 79, *args: Any, **kwargs: Any) -> str:
    _bounded(_count(width), "wordwrap()")
    return jinja2.filters.do_wordwrap(environment, value, width, *args, **kwargs)


def _replace(eval_ctx: Any, value: Any, old: Any, new: Any, count: Any = None) -> str:
    text, old_text, new_text = str(value), str(old), str(new)
    hits = (len(text) + 1) if old_text == "" else text.count(old_text)
    if count is not None:
        hits = min(hits, _count(count))
    _bounded(len(text) + hits * max(0, len(new_text) - len(old_text)), "replace()")
    return jinja2.filters.do_replace(eval_ctx, value, old, new, count)


def _join(eval_ctx: Any, value: Iterable[Any], d: Any = "", attribute: Any = None) -> str:
    items = list(value)
    _bounded(sum(_length(item) for item in items) + len(str(d)) * len(items), "join()")
    joined: str = jinja2.filters.sync_do_join(eval_ctx, items, d, attribute)
    return joined


def _batch(value: Iterable[Any], linecount: Any, fill_with: Any = None) -> Any:
    _bounded(_count(linecount), "batch()")
    return jinja2.filters.do_batch(value, linecount, fill_with)


def _slice(value: Collection[Any], slices: Any, fill_with: Any = None) -> Any:
    _bounded(_count(slices), "slice()")
    return jinja2.filters.sync_do_slice(value, slices, fill_with)


def _tojson(eval_ctx: Any, value: Any, indent: Any = None) -> Any:
    _bounded(_count(indent) * 64, "tojson()")  # each line is indented: wide indents multiply
    return jinja2.filters.do_tojson(eval_ctx, value, indent)


def _truncate(environment: jinja2.Environment, value: Any, length: Any = 255, *args: Any, **kwargs: Any) -> str:
    return jinja2.filters.do_truncate(environment, value, min(_count(length), MAX_RENDERED), *args, **kwargs)


def _sum(environment: jinja2.Environment, iterable: Iterable[Any], attribute: Any = None, start: Any = 0) -> Any:
    if not isinstance(start, int | float) or isinstance(start, bool):
        raise jinja2.exceptions.SecurityError("sum() adds numbers in a template")  # lists: quadratic time
    return jinja2.filters.sync_do_sum(environment, iterable, attribute, start)


def _like(bounded: Callable[..., Any], original: Callable[..., Any]) -> Callable[..., Any]:
    """``bounded`` passed what Jinja passes ``original`` (its environment or eval context first)."""
    marker = getattr(original, "jinja_pass_arg", None)
    if marker is not None:
        bounded.jinja_pass_arg = marker  # type: ignore[attr-defined]
    return bounded


_SIZED: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "center": (_center, jinja2.filters.do_center),
    "indent": (_indent, jinja2.filters.do_indent),
    "format": (_format, jinja2.filters.do_format),
    "wordwrap": (_wordwrap, jinja2.filters.do_wordwrap),
    "replace": (_replace, jinja2.filters.do_replace),
    "join": (_join, jinja2.filters.sync_do_join),
    "batch": (_batch, jinja2.filters.do_batch),
    "slice": (_slice, jinja2.filters.sync_do_slice),
    "tojson": (_tojson, jinja2.filters.do_tojson),
    "truncate": (_truncate, jinja2.filters.do_truncate),
    "sum": (_sum, jinja2.filters.sync_do_sum),
}
_AS_THEY_ARE = (
    "abs attr capitalize count d default dictsort e escape filesizeformat first float forceescape groupby "
    "int items last length list lower map max min pprint reject rejectattr reverse round safe select "
    "selectattr sort string striptags title trim unique upper urlencode urlize wordcount xmlattr"
).split()
FILTERS: dict[str, Callable[..., Any]] = {
    **{name: jinja2.filters.FILTERS[name] for name in _AS_THEY_ARE},
    **{name: _like(bounded, original) for name, (bounded, original) in _SIZED.items()},
}


class BoundedEnvironment(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """Jinja2's immutable sandbox with the bounds of the module's doc."""

    intercepted_binops = frozenset(["*", "**"])

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters = dict(FILTERS)
        self.globals = {
            "range": self.globals["range"],
            "dict": dict,
            "cycler": self.globals["cycler"],
            "joiner": self.globals["joiner"],
        }

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int | float) and abs(right) > 64:
            raise jinja2.exceptions.SecurityError("exponents above 64 are not allowed in a template")
        if operator == "*" and any(isinstance(v, str | list | tuple) for v in (left, right)):
            count = right if isinstance(left, str | list | tuple) else left
            sequence = left if isinstance(left, str | list | tuple) else right
            if isinstance(count, int):
                _bounded(count * len(sequence), "a repetition")
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - Jinja's own signature
        owner = getattr(__obj, "__self__", None)
        name = getattr(__obj, "__name__", "")
        if isinstance(owner, str | bytes | list | tuple | dict) and name not in SAFE_METHODS:
            raise jinja2.exceptions.SecurityError(
                f"calling .{name}() is not allowed in a template; use a filter (center, join, replace ...)"
            )
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format`` pads to any width it is told (``"{:>1000000000}"``): refused, as ``center`` is."""
        if super().wrap_str_format(value) is None:
            return None

        def refused(*args: Any, **kwargs: Any) -> str:
            raise jinja2.exceptions.SecurityError(
                f"calling .{value.__name__}() is not allowed in a template; use the format filter"
            )

        return refused

    def render_bounded(self, template: jinja2.Template, values: dict[str, Any]) -> str:
        """``template`` rendered, stopped once it passes ``MAX_RENDERED`` characters."""
        parts: list[str] = []
        size = 0
        for part in template.generate(**values):
            size += len(part)
            _bounded(size, "the rendered template")
            parts.append(part)
        return "".join(parts)


REFUSED_NODES: tuple[tuple[type[jinja2.nodes.Node], str], ...] = (
    (jinja2.nodes.Macro, "a macro"),
    (jinja2.nodes.CallBlock, "a call block"),
    (jinja2.nodes.Import, "an import"),
    (jinja2.nodes.FromImport, "an import"),
    (jinja2.nodes.Include, "an include"),
    (jinja2.nodes.Extends, "extends"),
)


def template_problem(tree: jinja2.nodes.Template) -> tuple[int, str] | None:
    """What a template may not do, found before it is compiled: (line, why) or None. Private
    attributes (the sandbox refuses them only when rendering), macros and the like, and loops inside
    loops (each may run 100,000 times)."""
    for node in tree.find_all((jinja2.nodes.Getattr, jinja2.nodes.Getitem)):
        key = getattr(node, "attr", None) or getattr(node, "arg", None)
        attribute = getattr(key, "value", key)
        if isinstance(attribute, str) and attribute.startswith("_"):
            return node.lineno, f"the template reads {attribute!r}; attributes starting with '_' are not allowed"
    for kind, what in REFUSED_NODES:
        found = next(iter(tree.find_all(kind)), None)
        if found is not None:
            return found.lineno, f"{what} is not allowed in a template"
    for loop in tree.find_all(jinja2.nodes.For):
        inner = next(iter(loop.find_all(jinja2.nodes.For)), None)
        if inner is not None:
            return inner.lineno, "a loop inside a loop is not allowed in a template"
    return None


def compile_bounded(environment: BoundedEnvironment, source: str) -> jinja2.Template:
    """``source`` parsed, checked and compiled (its constant filters folded within the bounds).
    Raises ``jinja2.TemplateSyntaxError`` naming the line, or ``SecurityError``."""
    tree = environment.parse(source)
    problem = template_problem(tree) or _too_large_constant(environment, tree)
    if problem is not None:
        raise jinja2.TemplateSyntaxError(problem[1], problem[0])
    return environment.from_string(tree)


def _too_large_constant(environment: BoundedEnvironment, tree: jinja2.nodes.Template) -> tuple[int, str] | None:
    """A filter on constants that would make too much, found as Jinja folds it (Jinja itself drops
    the error and leaves the filter to each render): refused when the template is made, not at each item."""
    context = jinja2.nodes.EvalContext(environment)
    for node in tree.find_all(jinja2.nodes.Filter):
        try:
            node.as_const(context)
        except jinja2.nodes.Impossible as folded:
            if isinstance(folded.__cause__, TemplateTooLarge):
                return node.lineno, str(folded.__cause__)
    return None
