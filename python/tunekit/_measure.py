"""How candidates are timed from Python.

With PyTorch imported and a CUDA device present, candidates are timed with CUDA events recorded on
the current stream (as the seed does); otherwise the C++ host measurer times them with a steady
clock. A user-supplied measurer is any object with a ``name`` and
``measure(run, request) -> list[float]`` (milliseconds, one per timed run).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Protocol

__all__ = ["Measurer", "CudaEventMeasurer", "cuda_in_use", "torch_hardware", "dependencies"]


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
