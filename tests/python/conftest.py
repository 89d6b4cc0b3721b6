"""Shared fixtures of the Python suite: a private winner cache and log directory per test, and a
deterministic measurer."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def tunekit_env(tmp_path, monkeypatch):
    """Each test gets its own cache and log directory and no TUNEKIT_* flags from outside."""
    for var in ("TUNEKIT_ALWAYS_TUNE", "TUNEKIT_VERSION_CHECK", "TUNEKIT_VERBOSE",
                "TUNEKIT_ARTIFACT_DIR", "TUNEKIT_LOOKUP_TABLE", "TUNEKIT_PROGRESS"):
        monkeypatch.delenv(var, raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(cache))
    monkeypatch.setenv("TUNEKIT_LOG_DIR", str(tmp_path / "logs"))
    return cache


class CostMeasurer:
    """Runs each candidate as a real measurer does (warmup, then timed runs, so failures behave as
    in real tuning) but reports ``cost(config)`` milliseconds per run."""

    name = "simulated"

    def __init__(self, cost):
        self.cost = cost
        self.measured = []  # described configs, in measurement order
        self.requests = []

    def measure(self, run, request):
        self.measured.append(dict(request.config))
        self.requests.append(request)
        for _ in range(request.warmup):
            run()
        times = []
        for _ in range(request.runs):
            run()
            times.append(float(self.cost(request.config)))
        return times


@pytest.fixture
def cost_measurer():
    return CostMeasurer


class FakeTritonConfig:
    """Has what tunekit reads from triton.Config: all_kwargs() and pre_hook."""

    def __init__(self, kwargs, num_warps):
        self.kwargs = kwargs
        self.num_warps = num_warps
        self.pre_hook = None

    def all_kwargs(self):
        return {**self.kwargs, "num_warps": self.num_warps}
