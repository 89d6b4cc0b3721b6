"""The work one call does, computed from its key: the report's ``--flop`` and ``--bytes``
expressions, from which it shows GFLOP/s and GB/s beside the times.

An expression is arithmetic over the key's values, named ``k0``, ``k1``, ... in key order
(``2*k0*k1*k2`` for a GEMM keyed by ``(M, N, K)``): numbers, ``+ - * / // % **``, unary ``+ -``,
parentheses and the functions ``min``, ``max``, ``abs``, ``sqrt``, ``log2``, ``ceil``,
``floor``. It is parsed with :mod:`ast` and computed by the small interpreter below, in floating
point: nothing is passed to ``eval``, and no other name, attribute, subscript, call, comparison or
literal is accepted, so an expression can neither reach Python nor run for long. A spec is
``EXPR`` (every function) or ``NAME=EXPR`` (the function ``NAME``, which wins over a plain
``EXPR``); an expression holds no ``=``, so the first one splits the two.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from typing import Any, Callable, Iterable, Mapping, NoReturn, Optional, Union

MAX_LENGTH = 1000  # characters of one expression

FUNCTIONS: dict[str, tuple[Callable[..., float], int, Optional[int]]] = {
    # name: (function, fewest arguments, most arguments or None for any)
    "min": (min, 2, None),
    "max": (max, 2, None),
    "abs": (abs, 1, 1),
    "sqrt": (math.sqrt, 1, 1),
    "log2": (math.log2, 1, 1),
    "ceil": (math.ceil, 1, 1),
    "floor": (math.floor, 1, 1),
}

_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: math.pow,  # floats: overflows raise instead of growing an integer without bound
}
_UNARY: dict[type, Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_KEY_NAME = re.compile(r"k(0|[1-9][0-9]{0,5})")

ALLOWED = ("numbers, k0, k1, ... (the key's values), + - * / // % **, parentheses and "
           + ", ".join(FUNCTIONS))


class ExpressionError(ValueError):
    """An expression the report refuses (it is not one of the allowed form)."""


class WorkError(ValueError):
    """An expression that gives no work for one entry's key (a value that is not a number, a key
    too short, a division by zero): shown in that entry's section, not fatal."""


_KINDS = {ast.Subscript: "a subscript", ast.Compare: "a comparison", ast.BoolOp: "and/or",
          ast.IfExp: "a conditional expression", ast.Lambda: "a lambda",
          ast.JoinedStr: "an f-string", ast.Starred: "a starred argument"}


def _what(node: ast.AST) -> str:
    """What a refused node is, for the message."""
    if isinstance(node, ast.Attribute):
        return f"attribute access '.{node.attr}'"
    if isinstance(node, ast.Name):
        return f"the name '{node.id}'"
    if isinstance(node, ast.Call):
        f = node.func
        return f"a call of '{f.id}'" if isinstance(f, ast.Name) else "this call"
    if isinstance(node, ast.Constant):
        return f"the literal {node.value!r}"
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return f"the operator {type(node.op).__name__}"
    for kind, text in _KINDS.items():
        if isinstance(node, kind):
            return text
    return f"a {type(node).__name__} expression"


class Expression:
    """One checked expression; ``evaluate(key)`` gives its value for a key."""

    def __init__(self, text: str, option: str = "expression"):
        self.text = text.strip()
        self.option = option
        if not self.text:
            raise ExpressionError(f"{option}: the expression is empty")
        if len(self.text) > MAX_LENGTH:
            raise ExpressionError(f"{option}: the expression is longer than {MAX_LENGTH} "
                                  "characters")
        try:
            tree = ast.parse(self.text, mode="eval")
        except SyntaxError as e:
            raise ExpressionError(f"{option} '{self.text}' is not an expression: {e.msg}") from None
        except (RecursionError, MemoryError, ValueError):
            raise ExpressionError(f"{option} '{self.text}' is not an expression") from None
        try:
            self._check(tree.body)
        except RecursionError:
            raise ExpressionError(f"{option} '{self.text}' nests too deeply") from None
        self._tree = tree.body

    def _refuse(self, node: ast.AST) -> NoReturn:
        raise ExpressionError(f"{self.option} '{self.text}': {_what(node)} is not allowed; "
                              f"an expression may hold {ALLOWED}")

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            self._check(node.left)
            self._check(node.right)
        elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            self._check(node.operand)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                self._refuse(node)
        elif isinstance(node, ast.Name):
            if not _KEY_NAME.fullmatch(node.id):
                self._refuse(node)
        elif isinstance(node, ast.Call):
            f = node.func
            if not isinstance(f, ast.Name):
                self._check(f)  # refuses what is called (an attribute, a subscript)
                self._refuse(node)
            if f.id not in FUNCTIONS or node.keywords:
                self._refuse(node)
            _, least, most = FUNCTIONS[f.id]
            if len(node.args) < least or (most is not None and len(node.args) > most) or any(
                    isinstance(a, ast.Starred) for a in node.args):
                raise ExpressionError(
                    f"{self.option} '{self.text}': {f.id} takes "
                    + (f"{least} argument{'s' if least != 1 else ''}" if most == least
                       else f"at least {least} arguments"))
            for a in node.args:
                self._check(a)
        else:
            self._refuse(node)

    def evaluate(self, key: list) -> float:
        """The value for ``key`` (a list of the key's values); raises WorkError where there is
        none."""
        try:
            v = float(self._eval(self._tree, key))
        except WorkError:
            raise
        except ZeroDivisionError:
            raise WorkError("division by zero") from None
        except (OverflowError, ValueError) as e:
            raise WorkError(f"no finite value ({e})") from None
        except RecursionError:
            raise WorkError("the expression nests too deeply") from None
        if not math.isfinite(v):
            raise WorkError("no finite value")
        if v < 0:
            raise WorkError(f"the value {v:.6g} is negative")
        return v

    def _eval(self, node: ast.AST, key: list) -> float:
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](self._eval(node.left, key), self._eval(node.right, key))
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](self._eval(node.operand, key))
        if isinstance(node, ast.Constant):
            assert isinstance(node.value, (int, float))  # the only literals checked in
            return float(node.value)
        if isinstance(node, ast.Name):
            i = int(node.id[1:])
            if i >= len(key):
                raise WorkError(f"the key has {len(key)} value{'s' if len(key) != 1 else ''}: "
                                f"there is no {node.id}")
            v = key[i]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise WorkError(f"{node.id} is {_value(v)}, not a number")
            return float(v)
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            f = FUNCTIONS[node.func.id][0]
            return float(f(*(self._eval(a, key) for a in node.args)))
        raise WorkError("unexpected expression")  # pragma: no cover - refused when checked


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "a byte string"
    return repr(v)


Spec = Union[None, str, Mapping[str, str], Iterable[str]]


def parse_spec(spec: Spec, option: str) -> dict[str, Expression]:
    """``{function name or "" for every function: Expression}`` of a ``--flop``/``--bytes``
    spec: None, ``"EXPR"`` or ``"NAME=EXPR"``, a list of those (the command line's repeated
    option), or a mapping ``{NAME: EXPR}`` (``"*"`` for every function)."""
    out: dict[str, Expression] = {}
    if spec is None:
        return out
    if isinstance(spec, Mapping):
        items = [("" if name == "*" else str(name), str(text)) for name, text in spec.items()]
    else:
        items = []
        for s in [spec] if isinstance(spec, str) else list(spec):
            if not isinstance(s, str):
                raise ExpressionError(f"{option}: {s!r} is not a string")
            name, eq, text = s.partition("=")
            if eq:
                name = name.strip()
                if not name:
                    raise ExpressionError(f"{option} '{s}': no function name before '='")
                items.append((name, text))
            else:
                items.append(("", s))
    for name, text in items:
        if name in out:
            raise ExpressionError(f"{option}: two expressions for "
                                  + (f"function '{name}'" if name else "every function"))
        out[name] = Expression(text, option if not name else f"{option} {name}")
    return out


class Work:
    """The work of a call as the user gave it: FLOP and bytes expressions, per function."""

    KINDS = (("flop", "--flop", "GFLOP/s"), ("bytes", "--bytes", "GB/s"))

    def __init__(self, flop: Spec = None, bytes: Spec = None):
        self.specs = {"flop": parse_spec(flop, "--flop"), "bytes": parse_spec(bytes, "--bytes")}

    def __bool__(self) -> bool:
        return any(self.specs.values())

    def describe(self) -> dict:
        """The expressions, for the page's data: ``{kind: {function or "*": text}}``."""
        return {kind: {(name or "*"): e.text for name, e in s.items()}
                for kind, s in self.specs.items() if s}

    def of(self, function: str, key: list) -> dict:
        """``{kind: {"expression", "value", "error"}}`` for one entry (kinds not asked for this
        function are absent)."""
        out = {}
        for kind, specs in self.specs.items():
            e = specs.get(function) or specs.get("")
            if e is None:
                continue
            try:
                out[kind] = {"expression": e.text, "value": e.evaluate(key), "error": None}
            except WorkError as err:
                out[kind] = {"expression": e.text, "value": None, "error": str(err)}
        return out


def throughput(work: dict, time_ms: Optional[float]) -> dict:
    """``{"gflop_s": ..., "gb_s": ...}`` (the kinds with a value) of a call of ``time_ms``."""
    out: dict[str, float] = {}
    if time_ms is None or not time_ms > 0 or not math.isfinite(time_ms):
        return out
    for kind, field in (("flop", "gflop_s"), ("bytes", "gb_s")):
        w = work.get(kind)
        if w and w["value"] is not None:
            out[field] = w["value"] / (time_ms * 1e6)  # per ms to per s, and 1e9 per G
    return out
