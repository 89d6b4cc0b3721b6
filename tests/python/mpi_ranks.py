"""Run under ``mpiexec -n 4`` by test_mpi.py: autotune_pg with mpi4py communicators."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mpi4py import MPI

import tunekit

world = MPI.COMM_WORLD
rank = world.Get_rank()
assert world.Get_size() == 4, "run with 4 ranks"


class RankCost:
    """Deterministic per-rank costs: ``table[rank][BLOCK]`` milliseconds."""

    name = "simulated"

    def __init__(self, table):
        self.table = table
        self.measured = 0

    def measure(self, run, request):
        self.measured += 1
        for _ in range(request.warmup + request.runs):
            run()
        return [self.table[rank][request.config["BLOCK"]]] * request.runs


def check(cond, what):
    if not cond:
        print(f"rank {rank}: FAILED {what}", flush=True)
        world.Abort(1)


# 1. The whole world: each rank has its own fastest config; the worst rank's time decides.
world_costs = {0: {1: 1.0, 2: 3.0, 3: 6.0}, 1: {1: 5.0, 2: 3.0, 3: 1.0},
               2: {1: 5.0, 2: 3.0, 3: 6.0}, 3: {1: 5.0, 2: 3.0, 3: 6.0}}
m = RankCost(world_costs)


def work(n, *, BLOCK):
    if BLOCK == 3:
        raise RuntimeError("fails on every rank")
    return BLOCK


tuned = tunekit.autotune([{"BLOCK": b} for b in (1, 2, 3)], key_fn=lambda n: (n,),
                         measurer=m)(work)
got = tuned(10, autotune_pg=world, autotune_verbose=True)
check(got == 2, f"world winner {got}, expected 2 (the best worst-rank time)")
check(m.measured == 3, "every rank measured every candidate")
path = Path(tuned.cache_path(10))
world.Barrier()
r = tunekit.read_entry(path)
check(r["entry"] is not None, f"entry {r}")
entry = json.loads(r["entry"])
check(entry["world_size"] == 4, "the entry records the world size")
times = [c["time_ms"] for c in entry["candidates"]]
check(times[:2] == [5.0, 3.0] and entry["candidates"][2]["status"] != "ok",
      f"stored times are the MAX over ranks: {entry['candidates']}")
log = Path(os.environ["TUNEKIT_LOG_DIR"]) / f"rank-{rank}.log"
check(log.exists() and "winner" in log.read_text(), f"per-rank log {log}")

# 2. A candidate that fails on one rank only scores +inf on every rank.
def fragile(n, *, BLOCK):
    if BLOCK == 2 and rank == 2:
        raise RuntimeError("fails on rank 2 only")
    return BLOCK


f = tunekit.autotune([{"BLOCK": b} for b in (1, 2, 3)], key_fn=lambda n: (n,),
                     measurer=RankCost({r: {1: 5.0, 2: 1.0, 3: 4.0} for r in range(4)}),
                     use_disk_cache=False)(fragile)
got = f(10, autotune_pg=world)
check(got == 3, f"winner {got}: BLOCK=2 failed on rank 2, so 3 wins everywhere")

# 3. Subgroups {0, 1} and {2, 3}: each agrees within itself, not with the world.
color = rank // 2
group = world.Split(color, rank)
group_costs = {0: {1: 1.0, 2: 4.0}, 1: {1: 2.0, 2: 4.0}, 2: {1: 9.0, 2: 4.0},
               3: {1: 9.0, 2: 4.0}}
g = tunekit.autotune([{"BLOCK": b} for b in (1, 2)], key_fn=lambda n, color: (n, color),
                     measurer=RankCost(group_costs))(lambda n, color, *, BLOCK: BLOCK)
got = g(10, color, autotune_pg=group)
check(got == (1 if color == 0 else 2), f"group {color} winner {got}")

# 4. A second process's view: the stored winner is agreed on without measuring.
m2 = RankCost(world_costs)
again = tunekit.autotune([{"BLOCK": b} for b in (1, 2, 3)], key_fn=lambda n: (n,),
                         measurer=m2)(work)
check(again(10, autotune_pg=tunekit.MPICommunicator(world)) == 2 and m2.measured == 0,
      "cache hit agreed by every rank")
check(again.last_source() == "cache", "source cache")

print(f"rank {rank} ok", flush=True)
sys.stdout.flush()
