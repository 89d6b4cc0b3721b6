"""Arguments a tuned function writes: ``restore_value``, ``reset_to_zero``, ``pre_hook`` and
``post_hook`` (Triton's names and meaning), for the tuner to put the caller's data back before
every run of a candidate.

The core calls the reset before every run of a candidate (its measurers outside their timed
region) and once more after a search, so that the winner's call reads what the caller passed.
Values are copied and written back through the methods arrays and tensors have: ``clone`` /
``copy`` to keep a copy, ``copy_`` or item assignment to put it back, ``zero_`` or item
assignment to zero. ``None`` arguments are skipped.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

__all__ = ["ArgumentResets", "parameter_names"]


def parameter_names(fn: Callable[..., Any]) -> tuple[list[str], bool] | None:
    """The names ``fn`` accepts by keyword, and whether it takes ``**kwargs``; None when its
    signature cannot be read (a builtin)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    names = [p.name for p in sig.parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    var_kw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    return names, var_kw


def _copy(value: Any, name: str) -> Any:
    for method in ("clone", "copy"):
        fn = getattr(value, method, None)
        if callable(fn):
            return fn()
    raise TypeError(f"restore_value: argument {name!r} (a {type(value).__name__}) has no clone() "
                    "or copy() method to keep a copy with")


def _put_back(target: Any, saved: Any, name: str) -> None:
    copy_ = getattr(target, "copy_", None)
    if callable(copy_):  # torch.Tensor
        copy_(saved)
        return
    try:
        if isinstance(target, (list, bytearray)):
            target[:] = saved
        else:  # numpy.ndarray and other arrays
            target[...] = saved
    except TypeError:
        raise TypeError(f"restore_value: argument {name!r} (a {type(target).__name__}) has no "
                        "copy_() method and does not take item assignment") from None


def _zero(target: Any, name: str) -> None:
    zero_ = getattr(target, "zero_", None)
    if callable(zero_):  # torch.Tensor
        zero_()
        return
    try:
        if isinstance(target, (list, bytearray)):
            target[:] = [0] * len(target) if isinstance(target, list) else bytes(len(target))
        else:
            target[...] = 0
    except TypeError:
        raise TypeError(f"reset_to_zero: argument {name!r} (a {type(target).__name__}) has no "
                        "zero_() method and does not take item assignment") from None


class ArgumentResets:
    """The reset rules of one decorated function; ``for_call`` binds them to one call's
    arguments."""

    def __init__(self, fn: Callable[..., Any], restore_value: Sequence[str],
                 reset_to_zero: Sequence[str], pre_hook: Callable[..., Any] | None,
                 post_hook: Callable[..., Any] | None, tuner: str) -> None:
        for what, names in (("restore_value", restore_value), ("reset_to_zero", reset_to_zero)):
            if isinstance(names, str) or not all(isinstance(n, str) for n in names):
                raise TypeError(f"autotune: {what} must be a list of argument names")
        for what, hook in (("pre_hook", pre_hook), ("post_hook", post_hook)):
            if hook is not None and not callable(hook):
                raise TypeError(f"autotune: {what} must be callable or None")
        self.restore_value = list(restore_value)
        self.reset_to_zero = list(reset_to_zero)
        self.pre_hook = pre_hook
        self.post_hook = post_hook
        self.active = bool(self.restore_value or self.reset_to_zero or pre_hook or post_hook)
        self._signature: inspect.Signature | None = None
        if self.restore_value or self.reset_to_zero:
            try:
                self._signature = inspect.signature(fn)
            except (TypeError, ValueError):
                raise TypeError(f"{tuner}: restore_value and reset_to_zero need the function's "
                                "signature, which cannot be read") from None
            params = self._signature.parameters
            for what, names in (("restore_value", self.restore_value),
                                ("reset_to_zero", self.reset_to_zero)):
                for n in names:
                    if n not in params:
                        raise ValueError(f"{tuner}: {what} names {n!r}, which is not a parameter "
                                         f"of {getattr(fn, '__name__', 'the function')}"
                                         f"{self._signature}")
        elif pre_hook is not None or post_hook is not None:
            try:
                self._signature = inspect.signature(fn)
            except (TypeError, ValueError):
                self._signature = None

    def arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments by parameter name (what the hooks get)."""
        if self._signature is None:
            return dict(kwargs)
        bound = self._signature.bind_partial(*args, **kwargs)
        return dict(bound.arguments)

    def for_call(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                 configs: Sequence[dict[str, Any]]) -> tuple[Callable[[int], None],
                                                             Callable[[Callable[[], Any], int],
                                                                      None]]:
        """``(reset(i), run_with_hooks(run, i))`` for one call: ``reset`` puts the arguments back
        (the first time it keeps their copies) and calls ``pre_hook``; ``run_with_hooks`` calls
        ``run()`` and then ``post_hook(arguments, exception)``."""
        nargs = self.arguments(args, kwargs)
        copies: dict[str, Any] | None = None
        restore = [(n, nargs[n]) for n in self.restore_value if nargs.get(n) is not None]
        zero = [(n, nargs[n]) for n in self.reset_to_zero if nargs.get(n) is not None]
        pre_hook, post_hook = self.pre_hook, self.post_hook

        def reset(i: int) -> None:
            nonlocal copies
            if copies is None:
                copies = {n: _copy(v, n) for n, v in restore}
            else:
                for n, v in restore:
                    _put_back(v, copies[n], n)
            for n, v in zero:
                _zero(v, n)
            if pre_hook is not None:
                pre_hook({**nargs, **configs[i]})

        def run_with_hooks(run: Callable[[], Any], i: int) -> None:
            if post_hook is None:
                run()
                return
            try:
                run()
            except BaseException as e:
                post_hook({**nargs, **configs[i]}, e)
                raise
            post_hook({**nargs, **configs[i]}, None)

        return reset, run_with_hooks
