"""Compiles a Triton autotuner's candidates ahead of their measurement, in worker processes.

The core hands its preparer each batch it is about to measure (and, with ``lookahead``, each
proposal as it is made). For every candidate the launch's arguments are bound here, in the calling
process, exactly as a launch binds them: the kernel's ``run`` is called with ``warmup=True`` while
the JIT function's ``_do_compile`` is replaced by one that records its arguments (the
specialisation, the constants, the attributes and the options) and compiles nothing. A process
forked from this one (so that it holds the same kernel objects) then calls ``triton.compile`` with
those arguments, which writes the compiled kernel to Triton's cache on disk; it touches no GPU.
When the candidate is measured its launch finds the kernel there and only loads it. Measuring a
candidate first waits for its own compile; a compile that failed in , which then fails as it would have (and the candidate scores +inf with its reason).

Nothing here is needed for correctness: where the pool cannot work (no ``fork``, a Triton whose
``_do_compile`` takes other arguments, ``TRITON_ALWAYS_COMPILE``), candidates compile at their
first launch as before.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import time
import warnings
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Sequence

__all__ = ["CompilePool", "default_workers"]

# The kernels a forked worker may compile, by the number the parent gave them. A worker is a copy
# of the parent made when the pool starts it, so it holds every entry made before that.
_KERNELS: dict[int, Any] = {}
_NUMBERS = itertools.count(1)


# The launchers' count of this job's processes on this node (torchrun, Open MPI, MPICH / Intel MPI,
# Slurm), first found first.
_LOCAL_SIZE_VARIABLES = ("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                         "SLURM_NTASKS_PER_NODE")


def _local_ranks() -> int:
    for name in _LOCAL_SIZE_VARIABLES:
        try:
            n = int(os.environ.get(name, ""))
        except ValueError:
            continue
        if n > 0:
            return n
    return 1


def default_workers() -> int:
    """One worker per CPU this process may use, at most 32. Where the process may use every CPU of
    the node and the launcher started several ranks on it, the CPUs are divided between them, so
    that eight ranks of a node do not start eight pools of a worker per CPU each (a launcher
    that binds each rank to its own CPUs has divided them already)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    if n >= (os.cpu_count() or n):
        n //= _local_ranks()
    return max(1, min(32, n))


def _compile_in_worker(number: int, args: tuple[Any, ...], target: Any) -> float:
    """In a worker: one ``triton.compile`` of the recorded arguments; its milliseconds."""
    from triton.compiler import ASTSource, compile

    jit = _KERNELS[number]
    signature, constexprs, options, attrs = args
    start = time.perf_counter()
    compile(ASTSource(jit, signature, constexprs, attrs), target=target,
            options=options.__dict__)
    return (time.perf_counter() - start) * 1e3


class CompilePool:
    """The core's preparer for one ``tunekit.triton.Autotuner`` (``prepare(indices)``,
    ``prepare_ms(index)``), with ``begin(args, kwargs)`` before a key is tuned, ``wait(index)``
    before a candidate is measured and ``end()`` after."""

    def __init__(self, owner: Any, workers: int) -> None:
        self.owner = owner
        self.workers = workers
        self.disabled: str | None = None
        self._executor: ProcessPoolExecutor | None = None
        self._futures: dict[int, Future[float]] = {}
        self._ms: dict[int, float] = {}
        self._call: tuple[tuple[Any, ...], dict[str, Any]] | None = None
        self._number: int | None = None
        self._target: Any = None
        self.compiled = 0  # candidates compiled by the workers, for the record

    # -- the tuning of one key ------------------------------------------------------------------

    def begin(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._call = (args, kwargs)
        self._futures = {}
        self._ms = {}

    def end(self) -> None:
        """Forgets the call's arguments and stops the workers (compiles not started are
        dropped)."""
        self._call = None
        for f in self._futures.values():
            f.cancel()
        self._futures = {}
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    # -- the core's preparer --------------------------------------------------------------------

    def prepare(self, indices: Sequence[int]) -> None:
        if self.disabled is not None or self._call is None:
            return
        for i in indices:
            if i in self._futures or i in self._ms:
                continue
            try:
                recorded = self._record(i)
            except Exception:  # the launch's own binding failed: it will fail when measured
                self._ms[i] = float("nan")
                continue
            if self.disabled is not None:
                return
            if recorded is None:  # already compiled in this process
                self._ms[i] = 0.0
                continue
            executor = self._pool()
            if executor is None or self._number is None:
                return
            with warnings.catch_warnings():
                # Python 3.12 warns that fork() in a process with threads may deadlock the child;
                # the worker only compiles (no lock of another thread is taken there).
                warnings.simplefilter("ignore", DeprecationWarning)
                self._futures[i] = executor.submit(_compile_in_worker, self._number, recorded,
                                                   self._target)

    def prepare_ms(self, index: int) -> float | None:
        ms = self._ms.get(index)
        return None if ms is None or ms != ms else ms

    def wait(self, index: int) -> None:
        """Waits for candidate ``index``'s compile, if one was started."""
        f = self._futures.pop(index, None)
        if f is None:
            return
        try:
            self._ms[index] = f.result()
            self.compiled += 1
        except Exception:  # compiled again (and failing again, with its reason) by the launch
            self._ms[index] = float("nan")

    # -- helpers ---------------------------------------------------------------------------------

    def _pool(self) -> ProcessPoolExecutor | None:
        if self._executor is None:
            try:
                ctx = multiprocessing.get_context("fork")
            except ValueError:
                self.disabled = "this platform cannot fork"
                return None
            self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
        return self._executor

    def _record(self, index: int) -> tuple[Any, ...] | None:
        """Binds candidate ``index``'s launch as the launch would, and returns what
        ``_do_compile`` was given (None: the kernel is already compiled here)."""
        from triton import knobs

        from ._autotuner import _jit_function

        owner = self.owner
        jit = _jit_function(owner.fn)
        if jit is None:
            self.disabled = "the kernel is not a triton.jit function"
            raise RuntimeError(self.disabled)
        if knobs.compilation.always_compile:
            self.disabled = "TRITON_ALWAYS_COMPILE is set"
            raise RuntimeError(self.disabled)
        if self._number is None:
            self._number = next(_NUMBERS)
            _KERNELS[self._number] = jit
        assert self._call is not None
        args, kwargs = self._call
        config = owner.configs[index]
        current = dict(kwargs, **config.all_kwargs())
        current["warmup"] = True
        got: list[tuple[Any, ...]] = []

        def record(*a: Any, **k: Any) -> None:
            # Triton 3.6's JITFunction.run: _do_compile(key, signature, device, constexprs,
            # options, attrs, warmup).
            if len(a) != 7 or k:
                self.disabled = (f"this Triton's _do_compile takes {len(a)} positional and "
                                 f"{sorted(k)} keyword arguments, not the 7 of Triton 3.6")
                return None
            _key, signature, device, constexprs, options, attrs, _warmup = a
            if self._target is None:
                self._target = jit.device_caches[device][2]
            got.append((signature, constexprs, options, attrs))
            # None: the launch returns without compiling (as when a jit_cache_hook says so).

        jit._do_compile = record  # an instance attribute over the method, for this call only
        try:
            owner.fn.run(*args, **current)
        finally:
            del jit._do_compile
        return got[0] if got else None

