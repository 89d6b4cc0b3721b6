"""Run under ``mpiexec -n 3`` by test_campaign.py: a campaign split across mpi4py ranks. Each rank
tunes its share alone, every rank then serves every key together from the shared winner cache
(the keys it tuned alone left its memory), a fresh tuner finds every winner there, rank 0
writes the artifacts, the lookup table and the per-shape file, every rank gets the same paths, and
a second run resumes with nothing left to tune."""

from __future__ import annotations

import json
import os

from mpi4py import MPI

import tunekit

world = MPI.COMM_WORLD
rank = world.Get_rank()
assert world.Get_size() == 3, "run with 3 ranks"
GPU = {"kind": "cuda", "name": "NVIDIA H200", "arch": "sm_90", "units": 132, "count": 1}
SPACE = [{"BLOCK": b} for b in (256, 512, 1024, 2048)]


class KeyCost:
    name = "simulated"

    def __init__(self):
        self.measured = 0

    def measure(self, run, request):
        self.measured += 1
        run()
        return [1.0 + abs(request.config["BLOCK"] - request.key[0]) / 100.0] * request.runs


def check(cond, what):
    if not cond:
        print(f"rank {rank}: FAILED {what}", flush=True)
        world.Abort(1)


def make():
    m = KeyCost()

    @tunekit.autotune(SPACE, key_fn=lambda n: (n,), measurer=m, key_names=["n"],
                      artifact_name="scale", hardware=GPU)
    def scale(n, *, BLOCK):
        return BLOCK

    return scale, m


here = os.getcwd()
calls = [(n,) for n in (100, 300, 700, 1100, 1500, 1900, 2300)]
outputs = dict(artifact_dir=os.path.join(here, "artifacts"), table=os.path.join(here, "t.json"),
               per_shape_json=os.path.join(here, "n.json"), by="n", progress=False)
scale, m = make()
r = tunekit.campaign(scale, calls, pg=world, **outputs)
mine = list(range(rank, len(calls), 3))
check(sorted(r.sources) == mine, f"this rank made the calls {sorted(r.sources)}, not {mine}")
check(r.tuned == len(mine) and m.measured == len(SPACE) * len(mine), "tuned its share alone")
check(r.missing == [], f"missing keys {r.missing}")
seen = world.allgather((r.artifacts, r.table, r.per_shape))
check(all(s == seen[0] for s in seen), "every rank got rank 0's paths")
check(len(r.artifacts) == 7 and all(os.path.exists(p) for p in r.artifacts), "seven artifacts")
check(len(json.load(open(r.table))) == 7, "a table of seven keys")
check(sorted(json.load(open(r.per_shape[0])), key=int) == [str(n) for (n,) in calls],
      "a per-shape file of every n")

# The same tuner then called for every key on every rank, together: the keys each rank tuned alone
# left its memory, so every rank takes each key from the shared cache in step (a rank still holding
# its own keys in memory would skip the collectives the others run for them).
served = []
for (n,) in calls:
    served.append(scale(n, autotune_pg=world))
    check(scale.last_source() == "cache", f"n={n} served from {scale.last_source()} on rank {rank}")
check(m.measured == len(SPACE) * len(mine), "nothing measured again")
check(all(s == served for s in world.allgather(served)), "every rank serves the same winners")
for (n,) in calls:
    scale(n, autotune_pg=world)
    check(scale.last_source() == "memory", f"n={n} then from {scale.last_source()}")

# Every rank finds every winner in the shared cache: a fresh tuner of its own searches nothing.
fresh, m2 = make()
for (n,) in calls:
    fresh(n)
    check(fresh.last_source() == "cache", f"n={n} from {fresh.last_source()}")
check(m2.measured == 0, "nothing measured again")

# Started again: every call is a cache hit, and the files are rewritten as they were.
world.Barrier()
before = [open(p).read() for p in r.artifacts]
again, m3 = make()
r2 = tunekit.campaign(again, calls, pg=world, **outputs)
check(r2.tuned == 0 and m3.measured == 0, "the second run tuned nothing")
check(set(r2.sources.values()) == {"cache"}, f"sources {r2.sources}")
check([open(p).read() for p in r2.artifacts] == before, "the same artifacts")
world.Barrier()
print(f"rank {rank} ok", flush=True)
