"""Stable descriptions of config values.

The C++ core keeps configs as named typed values (int, float, bool, str). A Python config may hold
any object (a ``triton.Config``, a tuple of block sizes, an enum): the core records each such value
as a text that is the same in every process that builds the same object, so that the winner cache
can name the candidates and tell a changed space from the one it measured.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
from typing import Any

__all__ = ["describe", "describe_config"]


def _qualname(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    return f"{module}.{name}" if module and module != "builtins" else name


def _text(value: Any, where: str, depth: int = 0) -> str:
    if depth > 32:
        raise ValueError(f"{where}: the value is nested too deeply to describe")
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: a config value must be finite, not {value!r}")
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{_qualname(type(value))}.{value.name}"
    if isinstance(value, tuple):
        inner = ", ".join(_text(v, where, depth + 1) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_text(v, where, depth + 1) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_text(v, where, depth + 1) for v in value)) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_text(k, where, depth + 1)}: {_text(v, where, depth + 1)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)):
        return _qualname(value)
    all_kwargs = getattr(value, "all_kwargs", None)
    if callable(all_kwargs):  # triton.Config: its meta-parameters and launch options
        fields = dict(all_kwargs())
        pre_hook = getattr(value, "pre_hook", None)
        if pre_hook is not None:
            fields["pre_hook"] = pre_hook
        inner = ", ".join(f"{k}={_text(v, where, depth + 1)}" for k, v in fields.items())
        return f"{_qualname(type(value))}({inner})"
    if dataclasses.is_dataclass(value):
        inner = ", ".join(f"{f.name}={_text(getattr(value, f.name), where, depth + 1)}"
                          for f in dataclasses.fields(value))
        return f"{_qualname(type(value))}({inner})"
    text = repr(value)
    if " at 0x" not in text:
        return text
    attrs = getattr(value, "__dict__", None)
    if attrs is None:
        raise ValueError(
            f"{where}: cannot describe a {_qualname(type(value))} stably (its repr holds an "
            f"address and it has no attributes); give its class a __repr__ without one")
    inner = ", ".join(f"{k}={_text(v, where, depth + 1)}" for k, v in sorted(attrs.items()))
    return f"{_qualname(type(value))}({inner})"


def describe(value: Any, where: str = "config value") -> int | float | bool | str:
    """The value the core records for ``value``: ints, floats, bools and strings as they are,
    anything else as a stable text (``triton.Config(BLOCK=256, num_warps=4, ...)``). A NumPy
    scalar (``numpy.int64(256)``) is the Python number it holds, so that its entry matches the
    C++ tuners, artifacts and tables that write it as a JSON number."""
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0 \
            and hasattr(value, "item"):
        value = value.item()
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: a config value must be finite, not {value!r}")
        return value
    return _text(value, where)


def describe_config(config: Any, index: int) -> dict[str, int | float | bool | str]:
    """The described form of ``config_space[index]`` (a dict of keyword arguments)."""
    if not isinstance(config, dict):
        raise TypeError(f"config_space[{index}] is a {type(config).__name__}, not a dict of "
                        "keyword arguments")
    out: dict[str, int | float | bool | str] = {}
    for name, value in config.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"config_space[{index}]: field {name!r} is not a valid keyword "
                             "argument name")
        out[name] = describe(value, f"config_space[{index}][{name!r}]")
    return out
