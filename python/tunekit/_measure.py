"""How candidates are timed from Python.

With PyTorch imported and a CUDA device present, candidates are timed with CUDA events recorded on
the current stream (as the seed does); otherwise the C++ host measurer times them with a steady
clock. ``timing="graph"`` times replays of a CUDA graph holding a batch of runs instead
(``CudaGraphMeasurer``). A user-supplied measurer is any object with a ``name`` and
``measure(run, request) -> list[float]`` (milliseconds, one per timed run).
"""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any, Callable, Protocol

from . import _core

__all__ = ["Measurer", "CudaEventMeasurer", "CudaGraphMeasurer", "TIMINGS", "cuda_in_use",
           "torch_hardware", "dependencies"]

#: The values of ``tunekit.autotune(timing=...)``: each run launched and timed alone (the
#: default), or runs captured in a CUDA graph and timed by its replays.
TIMINGS = ("eager", "graph")

#: What the reason of a candidate that could not be captured says.
CAPTURE_HINT = ("graph timing needs a function that can be captured in a CUDA graph on the "
                "current stream: no synchronization (.item(), .cpu(), .tolist(), "
                "torch.cuda.synchronize()), copy to the host, launch on another stream or "
                "anything else CUDA graph capture refuses while it runs")


class Measurer(Protocol):
    """What a measurer provides. ``request`` has ``tuner``, ``key``, ``config`` (the described
    config), ``index``, ``count``, ``best_ms``, ``warmup``, ``runs`` and ``reset``; ``run()``
    performs one call of the tuned function with the candidate. Call it ``request.warmup`` times,
    then ``request.runs`` times timed, and return one time in milliseconds per timed run. When
    ``request.reset`` is not None (the function writes its arguments: ``restore_value``,
    ``reset_to_zero``, hooks), call it before every run, outside the timed region; a run not
    preceded by it resets itself, inside it. An exception from ``run()`` marks the candidate
    failed (score +inf); let it propagate."""

    name: str

    def measure(self, run: Callable[[], None], request: Any) -> list[float]: ...


def _torch() -> Any:
    return sys.modules.get("torch")


def cuda_in_use() -> bool:
    """True when PyTorch is imported and a CUDA device is available (tunekit never imports torch
    itself: a program that tunes GPU work has imported it already)."""
    torch = _torch()
    return torch is not None and torch.cuda.is_available()


class CudaEventMeasurer:
    """Times each run between two CUDA events recorded on the current stream; the warmup runs
    and the timed ones are queued back to back and the events are read once at the end."""

    name = "cuda"

    def measure(self, run: Callable[[], None], request: Any) -> list[float]:
        torch = _torch()
        if torch is None:
            raise RuntimeError("CudaEventMeasurer needs torch")
        stream = torch.cuda.current_stream()
        reset = request.reset
        for _ in range(request.warmup):
            if reset is not None:
                reset()
            run()
        events = []
        for _ in range(request.runs):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            if reset is not None:
                reset()  # queued before the start event: not timed
            start.record(stream)
            run()
            end.record(stream)
            events.append((start, end))
        if events:
            events[-1][1].synchronize()
        return [s.elapsed_time(e) for s, e in events]


def _early_stop_due(factor: float, after: int, runs: int, best_ms: float, timed: int) -> bool:
    """The core's ``early_stop_due``: on, a best to compare with, exactly ``after`` runs timed
    and more due."""
    return (factor > 0 and math.isfinite(factor) and math.isfinite(best_ms) and after >= 1
            and timed == after and timed < runs)


class CudaGraphMeasurer:
    """Graph timing: a candidate's runs are captured ``launches`` at a time in a CUDA graph and
    timed by replays of it, so that a kernel of a few microseconds is timed without the host's
    launch cost, as it runs inside a captured program (docs/python.md, "Graph timing").

    Per candidate, on a side stream of the current device that follows the current stream: one
    eager run (lazy initialisation and compilation happen outside the capture; a failure there
    is reported as it is); a capture (``torch.cuda.CUDAGraph``, thread-local error mode) of
    ``launches`` runs, each after ``request.reset`` when there is one, so that the graph holds
    reset + run pairs and the time includes the reset; ``max(1, request.warmup)`` untimed
    replays; then ``request.runs`` replays, each between two CUDA events, each sample the
    replay's time divided by ``launches``. With ``early_stop_factor`` > 0 a candidate whose first
    ``early_stop_after`` samples average more than the factor times ``request.best_ms`` gets no
    more replays. A run that cannot be captured fails the candidate with a ``RuntimeError`` that
    says graph timing needs a capturable function; the capture is ended and the graph released
    on every path. Recorded as measurer ``cuda-graph``."""

    name = "cuda-graph"

    def __init__(self, launches: int = 100, *, early_stop_factor: float = 0.0,
                 early_stop_after: int = 2) -> None:
        if isinstance(launches, bool) or not isinstance(launches, int) or launches < 1:
            raise ValueError(f"CudaGraphMeasurer: launches must be an int >= 1, not {launches!r}")
        self.launches = launches
        self.early_stop_factor = float(early_stop_factor)
        self.early_stop_after = int(early_stop_after)
        self._streams: dict[Any, Any] = {}  # device -> side stream

    def _side_stream(self, torch: Any) -> Any:
        device = torch.cuda.current_device()
        stream = self._streams.get(device)
        if stream is None:
            stream = self._streams[device] = torch.cuda.Stream()
        return stream

    def _capture(self, torch: Any, run: Callable[[], None], reset: Any) -> Any:
        graph = torch.cuda.CUDAGraph()
        n = self.launches
        graph.capture_begin(capture_error_mode="thread_local")
        i = 0
        try:
            for i in range(n):
                if reset is not None:
                    reset()
                run()
        except BaseException as e:
            self._abandon(torch, graph)
            if isinstance(e, (KeyboardInterrupt, SystemExit)) or _is_fatal(e):
                raise
            raise RuntimeError(f"graph timing: captured run {i + 1}/{n} ({CAPTURE_HINT}): "
                               f"{type(e).__name__}: {e}") from e
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                graph.capture_end()
        except BaseException as e:
            self._abandon(torch, graph)
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            raise RuntimeError(f"graph timing: ending the capture ({CAPTURE_HINT}): "
                               f"{type(e).__name__}: {e}") from e
        empty = False
        for w in caught:
            # torch warns, and replays nothing, when the capture holds no node.
            if "graph is empty" in str(w.message).lower():
                empty = True
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if empty:
            _release(graph)
            raise RuntimeError(f"graph timing: the capture of {n} runs holds no work on the "
                               "current stream (the function launches on another stream, whose "
                               "work ran untimed while capturing, or launches nothing)")
        return graph

    @staticmethod
    def _abandon(torch: Any, graph: Any) -> None:
        """Ends a capture left open (its graph is discarded) and releases the graph."""
        try:
            if torch.cuda.is_current_stream_capturing():
                graph.capture_end()
        except Exception:
            pass  # an invalidated capture: ending it reports the invalidation
        _release(graph)

    def measure(self, run: Callable[[], None], request: Any) -> list[float]:
        torch = _torch()
        if torch is None or not torch.cuda.is_available():
            # Nothing can be measured in this process: stop at the first candidate.
            raise _core.FatalCandidateError(
                "graph timing (timing='graph', CudaGraphMeasurer) needs PyTorch with a CUDA "
                "device; import torch before the first call")
        reset = request.reset
        runs = int(request.runs)
        n = self.launches
        factor = float(getattr(request, "early_stop_factor", self.early_stop_factor))
        after = int(getattr(request, "early_stop_after", self.early_stop_after))
        best = float(request.best_ms)
        caller = torch.cuda.current_stream()
        side = self._side_stream(torch)
        side.wait_stream(caller)  # the caller's inputs are ready before any run
        graph = None
        try:
            with torch.cuda.stream(side):
                if reset is not None:
                    reset()
                run()  # eager: compiles, loads and initialises outside the capture
                side.synchronize()
                graph = self._capture(torch, run, reset)
                for _ in range(max(1, int(request.warmup))):
                    graph.replay()
                events: list[tuple[Any, Any]] = []

                def read(k: int) -> list[float]:
                    events[k - 1][1].synchronize()
                    return [s.elapsed_time(e) / n for s, e in events[:k]]

                for i in range(runs):
                    start = torch.cuda.Event(enable_timing=True)
                    end = torch.cuda.Event(enable_timing=True)
                    start.record(side)
                    graph.replay()
                    end.record(side)
                    events.append((start, end))
                    if _early_stop_due(factor, after, runs, best, i + 1):
                        done = read(i + 1)
                        if sum(done) / len(done) > factor * best:
                            return done
                        graph.replay()  # fills the stream again, as after eager timing's check
                return read(runs)
        finally:
            caller.wait_stream(side)  # later work on the caller's stream follows the replays
            if graph is not None:
                try:
                    side.synchronize()  # the graph's memory is released only when idle
                except Exception:
                    pass  # a sticky error: reported by what failed
                _release(graph)


def _release(graph: Any) -> None:
    try:
        graph.reset()
    except Exception:
        pass


def _is_fatal(e: BaseException) -> bool:
    """Whether ``e`` is the core's FatalCandidateError (which stops the search)."""
    return isinstance(e, _core.FatalCandidateError)


def torch_hardware() -> dict[str, Any] | None:
    """The identity of the current CUDA device, exactly as tunekit::cuda::device_hardware()
    writes it (so that C++ and Python tuners on one GPU share cache entries); None without CUDA."""
    if not cuda_in_use():
        return None
    torch = _torch()
    dev = torch.cuda.current_device()
    p = torch.cuda.get_device_properties(dev)
    return {"kind": "cuda", "name": p.name, "arch": f"sm_{p.major}{p.minor}",
            "units": int(p.multi_processor_count), "count": int(torch.cuda.device_count())}


def dependencies() -> dict[str, str]:
    """Software the measurement depends on, beside the core's own: PyTorch and Triton when they
    are imported."""
    deps: dict[str, str] = {}
    torch = _torch()
    if torch is not None:
        deps["torch"] = str(torch.__version__)
        if getattr(torch.version, "cuda", None):
            deps["torch_cuda"] = str(torch.version.cuda)
    triton = sys.modules.get("triton")
    if triton is not None and hasattr(triton, "__version__"):
        deps["triton"] = str(triton.__version__)
    return deps


def host_sync() -> Callable[[], None] | None:
    """What the host measurer calls after the warmup and after each timed run: a device
    synchronisation when PyTorch uses CUDA, so queued kernels count in the time."""
    if cuda_in_use():
        return _torch().cuda.synchronize
    return None
