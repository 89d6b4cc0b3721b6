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


def run_mpi(script, ranks, cwd=None, timeout=240):
    """``mpiexec -n ranks python script`` (a file beside the tests), with Open MPI allowed to run
    as root and to oversubscribe the cores; skips without mpi4py or mpiexec."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("mpi4py")
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("no mpiexec")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    path = Path(__file__).with_name(script)
    return subprocess.run([mpiexec, "-n", str(ranks), "--oversubscribe", sys.executable,
                           str(path)], capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=cwd)
