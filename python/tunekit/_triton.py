"""Everything ``contextual_autotune`` relies on from Triton's autotuner, in one place.

An autotuner object (``triton.runtime.autotuner.Autotuner``, what ``@triton.autotune`` returns) is
used through these attributes only:

- ``configs``: its list of ``triton.Config`` candidates;
- ``cache``: its in-process dict from key tuple to the chosen ``triton.Config``;
- ``arg_names`` and ``keys``: the kernel's argument names and the ``key=[...]`` names, from which
  the key is computed as ``Autotuner.run`` computes it (the named arguments' values, then
  ``str(arg.dtype)`` of every argument that has a ``dtype``);
- ``fn``: the wrapped kernel (its ``__name__`` names it in logs);
- the class's ``run(self, *args, **kwargs)``, which a launch ``kernel[grid](...)`` calls and which
  uses ``configs[0]`` without benchmarking when ``configs`` holds one config.

During a contextual call the class's ``run`` is replaced; a launch runs a candidate by calling the
original ``run`` with ``configs`` set to that one candidate, and the winners are written to
``cache[key]``. Other autotuner classes with the same attributes (a test's fake) take part once
passed to ``register_autotuner_class``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

__all__ = ["register_autotuner_class", "autotuner_classes", "kernel_name", "key_of", "run_with",
           "set_winner", "has_winner"]

_registered: list[type] = []


def register_autotuner_class(cls: type) -> type:
    """Lets ``contextual_autotune`` take over launches of autotuners of class ``cls`` (Triton's
    own class is found without this). Returns ``cls``, so it can decorate a class."""
    if cls not in _registered:
        _registered.append(cls)
    return cls


def autotuner_classes() -> list[type]:
    """The registered classes, and Triton's ``Autotuner`` when Triton is imported."""
    classes = list(_registered)
    if "triton" in sys.modules:
        try:
            from triton.runtime.autotuner import Autotuner  # type: ignore[import-not-found]
        except ImportError:  # pragma: no cover - a Triton without the module
            Autotuner = None
        if Autotuner is not None and Autotuner not in classes:
            classes.append(Autotuner)
    return classes


def kernel_name(autotuner: Any) -> str:
    fn = getattr(autotuner, "fn", None)
    for obj in (fn, getattr(fn, "fn", None)):
        name = getattr(obj, "__name__", None)
        if isinstance(name, str):
            return name
    return type(autotuner).__name__


def key_of(autotuner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The key ``Autotuner.run`` files this launch under in ``autotuner.cache``."""
    arg_names = list(autotuner.arg_names)
    all_args = {**dict(zip(arg_names, args)), **kwargs}
    named = {k: v for k, v in all_args.items() if k in arg_names}
    key = [named[k] for k in autotuner.keys if k in named]
    for arg in named.values():
        if hasattr(arg, "dtype"):
            key.append(str(arg.dtype))
    return tuple(key)


def run_with(original_run: Callable[..., Any], autotuner: Any, config: Any,
             args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """One launch with ``config``: the original ``run`` with ``configs`` set to that config alone
    (so it neither benchmarks nor consults its cache)."""
    saved = autotuner.configs
    autotuner.configs = [config]
    try:
        return original_run(autotuner, *args, **kwargs)
    finally:
        autotuner.configs = saved


def has_winner(autotuner: Any, key: tuple[Any, ...]) -> bool:
    return key in autotuner.cache


def set_winner(autotuner: Any, key: tuple[Any, ...], config: Any) -> None:
    autotuner.cache[key] = config
