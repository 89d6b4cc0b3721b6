"""``tunekit.contextual_autotune``: tune the ``triton.autotune`` kernels an outer function launches,
in the real context of that function (its communication, the other kernels sharing the device).

The C++ core's contextual tuner does the bookkeeping (registration, cycling through the candidates,
warmup and timed rounds, the MAX across ranks, the winners, the per-rank log); this module runs the
outer function for it and takes over the autotuners' launches (see ``_triton`` for what it relies
on from Triton).
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from . import _core, _triton
from ._autotune import _log
from ._comm import communicator_for
from ._describe import describe_config
from ._measure import CudaEventMeasurer, cuda_in_use, host_sync

__all__ = ["contextual_autotune", "ContextualAutoTuner"]


class _AbandonRun(BaseException):
    """A candidate failed and no valid config is known yet to rerun the launch with: this run of
    the outer function is abandoned and the next round goes on (not an ``Exception``, so that the
    outer function's own handlers let it through)."""


# The contextual tuner whose call is in progress, and its thread.
# What a launch inside the running contextual call does (`_launch` of the tuner, or the untuned
# mode's), and that call's thread.
_active: tuple[Callable[..., Any], int] | None = None
_lock = threading.Lock()


class ContextualAutoTuner:
    """The callable ``contextual_autotune`` returns."""

    def __init__(self, fn: Callable[..., Any], is_dist: bool = False, n_repeat: int = 5,
                 n_warmup: int = 3, *, pg: Any = None, verbose: bool = False,
                 measurer: Any = None) -> None:
        if n_repeat < 1 or n_warmup < 0:
            raise ValueError("contextual_autotune: n_repeat must be >= 1 and n_warmup >= 0")
        self.fn = fn
        self.is_dist = is_dist
        self.n_repeat = n_repeat
        self.n_warmup = n_warmup
        self._pg = pg
        self._verbose = verbose
        self._measurer = measurer
        self._ctx: Any = None
        # The core's tuner of each autotuner this function launched, by id (the autotuner is
        # kept alive with it); their winners outlive one call.
        self._tuners: dict[int, tuple[Any, Any]] = {}
        self._seen: dict[tuple[int, tuple[Any, ...]], tuple[Any, tuple[Any, ...]]] = {}
        functools.update_wrapper(self, fn)

    def _context(self) -> Any:
        if self._ctx is None:
            comm = None
            if self.is_dist:
                comm = communicator_for(self._pg)
                if comm is None:
                    raise RuntimeError(
                        "contextual_autotune(is_dist=True): torch.distributed is not initialised "
                        "(initialise the default process group first)")
            self._ctx = _core.ContextualTuner(self.is_dist, self.n_repeat, self.n_warmup,
                                              comm=comm, verbose=self._verbose, log=_log)
        return self._ctx

    def _tuner_for(self, autotuner: Any) -> Any:
        hit = self._tuners.get(id(autotuner))
        if hit is not None and hit[0] is autotuner:
            return hit[1]
        configs = [{"config": c} for c in autotuner.configs]
        measurer = self._measurer
        if measurer is None and cuda_in_use():
            measurer = CudaEventMeasurer()
        t = _core.Tuner(_triton.kernel_name(autotuner),
                        [describe_config(c, i) for i, c in enumerate(configs)], "contextual",
                        {"measurer": measurer,
                         "host_sync": None if measurer is not None else host_sync(),
                         "use_disk_cache": False, "log": _log})
        self._tuners[id(autotuner)] = (autotuner, t)
        return t

    def _launch(self, original: Callable[..., Any], autotuner: Any, args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
        configs = autotuner.configs
        if len(configs) <= 1:
            return original(autotuner, *args, **kwargs)
        key = _triton.key_of(autotuner, args, kwargs)
        if _triton.has_winner(autotuner, key):  # tuned before, here or by Triton itself
            return original(autotuner, *args, **kwargs)
        t = self._tuner_for(autotuner)
        ctx = self._ctx
        plan = ctx.plan_launch(t, key)
        if plan is None:
            raise _AbandonRun()
        self._seen.setdefault((id(autotuner), key), (autotuner, key))
        if not plan.timed:
            return _triton.run_with(original, autotuner, configs[plan.index], args, kwargs)
        out: list[Any] = [None]

        def run() -> None:
            out[0] = _triton.run_with(original, autotuner, configs[plan.index], args, kwargs)

        if ctx.measure_launch(plan, run):
            return out[0]
        fallback = ctx.fallback(t, plan)
        if fallback is None:
            raise _AbandonRun()
        return _triton.run_with(original, autotuner, configs[fallback], args, kwargs)

    def _untuned(self, effort: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The outer function with no measurement (``TUNEKIT_AUTOTUNE=off`` or ``cached``): each
        kernel launches the winner its autotuner holds (``cached`` only), else its first config;
        neither tunekit nor Triton's autotuner benchmarks."""
        global _active
        originals: list[tuple[type, Any]] = []

        def launch(original: Callable[..., Any], autotuner: Any, a: tuple[Any, ...],
                   kw: dict[str, Any]) -> Any:
            if effort == "cached" and _triton.has_winner(autotuner, _triton.key_of(autotuner, a,
                                                                                     kw)):
                return original(autotuner, *a, **kw)
            return _triton.run_with(original, autotuner, autotuner.configs[0], a, kw)

        with _lock:
            if _active is not None:
                raise RuntimeError("contextual_autotune: another contextual tuner is running")
            _active = (launch, threading.get_ident())
            for cls in _triton.autotuner_classes():
                original = cls.__dict__.get("run")
                if original is not None:
                    originals.append((cls, original))
                    setattr(cls, "run", _takeover(original))
        try:
            return self.fn(*args, **kwargs)
        finally:
            with _lock:
                for cls, original in originals:
                    setattr(cls, "run", original)
                _active = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        global _active
        effort = str(_core.environment().get("autotune", "")).lower()
        if effort in ("off", "cached"):
            return self._untuned(effort, args, kwargs)
        ctx = self._context()
        ctx.begin()  # raises when another contextual tuner is active
        originals: list[tuple[type, Any]] = []
        try:
            with _lock:
                _active = (self._launch, threading.get_ident())
                for cls in _triton.autotuner_classes():
                    original = cls.__dict__.get("run")
                    if original is None:
                        continue
                    originals.append((cls, original))
                    setattr(cls, "run", _takeover(original))
            self._seen.clear()
            first = True
            result: Any = None
            while True:
                try:
                    result = self.fn(*args, **kwargs)
                except _AbandonRun:
                    pass
                if first and not ctx.has_work():
                    ctx.finish()  # nothing to tune: this run was the real one
                    return result
                first = False
                if not ctx.after_run():
                    break
            try:
                ctx.finish()
            except _core.NoValidConfigError as e:
                raise RuntimeError(str(e)) from e  # "cannot find valid config for kernel ..."
            for autotuner, key in self._seen.values():
                index = self._tuner_for(autotuner).find(key)
                if index is not None:
                    _triton.set_winner(autotuner, key, autotuner.configs[index])
        except BaseException:
            ctx.abort()
            raise
        finally:
            with _lock:
                for cls, original in originals:
                    setattr(cls, "run", original)
                _active = None
        return self.fn(*args, **kwargs)

    def last_winners(self) -> list[tuple[str, dict[str, Any]]]:
        """(kernel and key, described winner) of each kernel the last call tuned."""
        return [] if self._ctx is None else self._ctx.last_winners()


def _takeover(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def run(autotuner: Any, *args: Any, **kwargs: Any) -> Any:
        active = _active
        if active is None or active[1] != threading.get_ident():
            return original(autotuner, *args, **kwargs)
        return active[0](original, autotuner, args, kwargs)

    return run


def contextual_autotune(is_dist: bool = False, n_repeat: int = 5, n_warmup: int = 3, *,
                        pg: Any = None, verbose: bool = False,
                        measurer: Any = None) -> Callable[[Callable[..., Any]], ContextualAutoTuner]:
    """Decorates an outer function whose ``triton.autotune`` kernels are tuned in its context:
    the first run registers them, the next runs cycle through their configs (``n_warmup`` warmup
    and ``n_repeat`` timed launches each, mean), the fastest valid config of each (the MAX across
    the ranks of the default ``torch.distributed`` group first when ``is_dist``; ``pg`` names
    another group or an mpi4py communicator) is written to the autotuner's in-process cache, and
    the outer function runs once more; that result is returned. ``RuntimeError("cannot find valid
    config")`` when every config of a kernel failed. Logs go to
    ``$TUNEKIT_LOG_DIR/rank-<rank>.log`` (default ``./.autotune_logs``). One contextual tuner runs
    at a time. ``measurer`` times each launch (a ``tunekit.autotune`` measurer, asked for one
    timed run); default: CUDA events when PyTorch uses CUDA, else a host clock."""

    def wrap(fn: Callable[..., Any]) -> ContextualAutoTuner:
        return ContextualAutoTuner(fn, is_dist, n_repeat, n_warmup, pg=pg, verbose=verbose,
                                   measurer=measurer)

    return wrap
