"""The arithmetic of a ``multi`` grader's ``calculate_output``: numbers, grader names, ``+ - * / ^``
(``**`` too), parentheses and ``min max abs floor ceil exp sqrt log``. Nothing else.

The text is parsed by ``ast.parse`` (which executes nothing) and every node is checked against
that grammar before the formula is accepted; evaluating it walks the checked tree. It never
reaches ``eval``.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass

from assay.errors import ConfigError, ItemError

MAX_LENGTH = 2000
FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "floor": math.floor,
    "ceil": math.ceil,
    "exp": math.exp,
    "sqrt": math.sqrt,
    "log": math.log,
}
BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
HINT = "use grader names, numbers, + - * / ^, parentheses and min max abs floor ceil exp sqrt log"


@dataclass(frozen=True)
class Formula:
    text: str
    tree: ast.expr

    @classmethod
    def parse(cls, text: object, names: set[str], where: str = "calculate_output") -> Formula:
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{where}: expected a formula over the grader names, e.g. '0.5 * a + 0.5 * b'")
        if len(text) > MAX_LENGTH:
            raise ConfigError(f"{where}: the formula is {len(text)} characters, at most {MAX_LENGTH}")
        try:
            tree = ast.parse(text.replace("^", "**"), mode="eval").body
        except SyntaxError as exc:
            raise ConfigError(f"{where}: not a formula ({exc.msg} at column {exc.offset})", hint=HINT) from None
        called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and id(node) in called):  # a call's own name is checked there
                _check(node, names, where)
        return cls(text, tree)

    def evaluate(self, values: dict[str, float]) -> float:
        try:
            value = _value(self.tree, values)
        except (ArithmeticError, ValueError) as exc:  # 1/0, sqrt(-1), log(0), 10^1000
            raise ItemError(f"calculate_output '{self.text}': {exc}") from None
        if not math.isfinite(value):
            raise ItemError(f"calculate_output '{self.text}' gave {value}, not a finite number")
        return float(value)


def _check(node: ast.AST, names: set[str], where: str) -> None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ConfigError(f"{where}: {node.value!r} is not a number", hint=HINT)
    elif isinstance(node, ast.Name):
        if node.id not in names:
            known = ", ".join(sorted(names))
            raise ConfigError(f"{where}: '{node.id}' is not one of the graders ({known})", hint=HINT)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords:
            raise ConfigError(f"{where}: only min, max, abs, floor, ceil, exp, sqrt and log can be called", hint=HINT)
        if not node.args:
            raise ConfigError(f"{where}: {node.func.id}() needs an argument")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in BINARY:
            raise ConfigError(f"{where}: the operator {ast.unparse(node)!r} is not arithmetic here", hint=HINT)
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in UNARY:
            raise ConfigError(f"{where}: {ast.unparse(node)!r} is not arithmetic", hint=HINT)
    elif not isinstance(node, ast.operator | ast.unaryop | ast.expr_context):
        raise ConfigError(f"{where}: {ast.unparse(node)!r} is not allowed in a formula", hint=HINT)


def _value(node: ast.expr, values: dict[str, float]) -> float:
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, int | float)  # checked by _check
        return float(node.value)
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left, values), _value(node.right, values)
        if isinstance(node.op, ast.Pow) and abs(right) > 1000:
            raise OverflowError("the exponent is too large")
        return float(BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp):
        return UNARY[type(node.op)](_value(node.operand, values))
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)  # the only node left after _check
    return float(FUNCTIONS[node.func.id](*(_value(a, values) for a in node.args)))
