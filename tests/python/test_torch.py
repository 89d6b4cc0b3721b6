"""tunekit with PyTorch: CUDA-event timing, and autotune_pg over torch.distributed (gloo, two CPU
processes). Skipped where PyTorch is not installed (CI); bench/python/gpu.sh runs it on the GPU
machine."""

from __future__ import annotations

import json
import os
import sys

import pytest

torch = pytest.importorskip("torch")

import tunekit  # noqa: E402
from conftest import CostMeasurer  # noqa: E402


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_events_time_candidates_on_the_current_device():
    x = torch.randn(1 << 20, device="cuda")

    @tunekit.autotune([{"reps": 8}, {"reps": 1}], key_fn=lambda x: (x.numel(), str(x.dtype)))
    def work(x, reps):
        y = x
        for _ in range(reps):
            y = y * 1.0001
        return y

    work(x)
    entry = json.loads(tunekit.read_entry(work.cache_path(x))["entry"])
    assert entry["measurer"] == "cuda" and entry["hardware"]["kind"] == "cuda"
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    assert entry["hardware"]["name"] == p.name
    assert entry["hardware"]["arch"] == f"sm_{p.major}{p.minor}"
    assert work.best_config(x) == {"reps": 1}
    times = [c["time_ms"] for c in entry["candidates"]]
    assert times[0] > times[1] > 0


def _gloo_rank(rank, world, init, cache, results):
    import torch.distributed as dist

    os.environ["TUNEKIT_CACHE_DIR"] = cache
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    costs = {0: {1: 1.0, 2: 3.0}, 1: {1: 9.0, 2: 3.0}}  # each rank alone would differ

    class RankCost(CostMeasurer):
        def __init__(self):
            super().__init__(lambda c: costs[rank][c["BLOCK"]])

    space = [{"BLOCK": 1}, {"BLOCK": 2}]
    a = tunekit.autotune(space, key_fn=lambda n: (n,), measurer=RankCost())(
        lambda n, BLOCK: BLOCK)
    got_default = a(1)  # autotune_pg=None: the default group
    sub = dist.new_group([0, 1], backend="gloo")
    b = tunekit.autotune(space, key_fn=lambda n: (n, "sub"), measurer=RankCost())(
        lambda n, BLOCK: BLOCK)
    got_sub = b(1, autotune_pg=sub)
    dist.barrier()
    results.put((rank, got_default, got_sub))
    dist.destroy_process_group()


def test_two_gloo_ranks_agree_on_the_worst_rank_time(tmp_path):
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    init = f"file://{tmp_path / 'store'}"
    procs = [ctx.Process(target=_gloo_rank, args=(r, 2, init, str(tmp_path / "cache"), results))
             for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert all(p.exitcode == 0 for p in procs)
    got = sorted(results.get(timeout=5) for _ in range(2))
    assert got == [(0, 2, 2), (1, 2, 2)]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
