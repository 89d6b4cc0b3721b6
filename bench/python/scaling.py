"""How tuning from Python scales with the number of ranks (one process per rank).

Two sections, each timed on every rank between barriers, the slowest rank's time reported:
``split_search`` tunes one key of a tiled matmul (768 configs of BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
num_warps, num_stages, those that overflow shared memory or registers pruned) with the default
strategy, a fixed budget and seed, and ``parallel_split=True`` (each batch's candidates shared
between the ranks); ``campaign`` runs ``tunekit.campaign`` over 16 shapes, the keys split between
the ranks, then every rank calls every shape and the ranks' winners are compared.

GPU: torch.distributed over NCCL, one process per GPU; a Triton matmul (Triton's tutorial 03),
compiled cold (a fresh TRITON_CACHE_DIR per rank and section); winners checked against torch.matmul:

    torchrun --nproc-per-node N bench/python/scaling.py --out scaling-N.json [--dtype fp16]

CPU: MPI through mpi4py, no torch or Triton; a run sleeps for a simulated time (a bowl whose
optimum moves with the shape), a rank's first run of a config also for a simulated compile:

    mpirun -np N python3 bench/python/scaling.py --cpu --out scaling-N.json

Rank 0 writes the JSON and prints one line; speed-up = wall_s(1) / wall_s(N), efficiency =
speed-up / N. Exit status 1: the ranks hold different winners, or a winner's product is wrong.
"""

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
import types

import tunekit

torch = triton = tl = None  # imported by TorchRanks (without --cpu), after TRITON_CACHE_DIR is set

SPACE = [dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g, num_warps=w, num_stages=s)
         for bm in (32, 64, 128, 256) for bn in (32, 64, 128, 256) for bk in (32, 64, 128)
         for g in (1, 8) for w in (4, 8) for s in (2, 3, 4, 5)]
ELEMENT_BYTES = {"fp16": 2, "fp32": 4}
H200_SHARED_MEMORY = 232448  # bytes per block (opt-in): the CPU mode's simulated device


def problem(ranks, m, n, k, a=None, b=None, c=None):
    """One matmul C[M, N] = A[M, K] @ B[K, N] on the ranks' device; on a GPU with its operands."""
    return types.SimpleNamespace(M=m, N=n, K=k, dtype=ranks.args.dtype, a=a, b=b, c=c,
                                 shared_memory=ranks.shared_memory)


def key_of(p):
    return (p.M, p.N, p.K, p.dtype)


def fits(cfg, p):
    """The prune function: the config's stages fit in shared memory, its fp32 accumulator
    takes 8 to 128 registers a thread, and its tile is no larger than C."""
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    smem = cfg["num_stages"] * (bm * bk + bk * bn) * ELEMENT_BYTES[p.dtype]
    per_thread = bm * bn // (32 * cfg["num_warps"])
    return smem <= p.shared_memory and 8 <= per_thread <= 128 and bm <= p.M and bn <= p.N


def simulated_ms(cfg, p):
    """A run's simulated time, in multiples of --run-ms (1 at the optimum, about 3 at worst): a
    bowl in log2 of each field whose centre moves with the shape."""
    lg = math.log2
    bm, bn = lg(cfg["BLOCK_M"]), lg(cfg["BLOCK_N"])
    want_m, want_n = 5 + 0.75 * lg(p.M / 512), 5 + 0.75 * lg(p.N / 512)
    want_k, want_s = 5 + 0.5 * lg(p.K / 1024), 3 + (p.K >= 3072)
    want_w = 2 + (bm + bn >= 13)
    d = ((bm - want_m) ** 2 + (bn - want_n) ** 2 + (lg(cfg["BLOCK_K"]) - want_k) ** 2
         + (lg(cfg["num_warps"]) - want_w) ** 2 + 0.5 * (cfg["num_stages"] - want_s) ** 2)
    return 1.0 + 0.12 * d + 0.03 * abs(bm - bn) * (cfg["GROUP_M"] == 1)


class SimulatedMeasurer:
    """Runs a candidate warmup + runs times (each sleeps) and reports its simulated time, so that
    every rank sees the same times whoever measures."""

    name = "simulated"
    last_ms = 0.0

    def measure(self, run, request):
        for _ in range(request.warmup + request.runs):
            run()
        return [self.last_ms] * request.runs


def counting_compiles(body):
    """The tuned function: ``body(p, cfg, first)`` with the config as a dict; ``first`` is this
    rank's first run of the config (the compile), whose host time goes to ``stats``."""
    seen, stats = set(), {"compile_s": 0.0, "configs_run": 0}

    def matmul(p, **cfg):
        if tuple(sorted(cfg.items())) in seen:
            return body(p, cfg, False)
        seen.add(tuple(sorted(cfg.items())))
        t0 = time.perf_counter()
        try:
            return body(p, cfg, True)
        finally:
            stats["compile_s"] += time.perf_counter() - t0
            stats["configs_run"] += 1

    return matmul, stats


class MpiRanks:
    """--cpu: the ranks of MPI.COMM_WORLD; a run sleeps for its simulated time."""

    def __init__(self, args):
        from mpi4py import MPI

        self.args, self.pg = args, MPI.COMM_WORLD
        self.rank, self.world = self.pg.Get_rank(), self.pg.Get_size()
        self.measurer, self.shared_memory = SimulatedMeasurer(), H200_SHARED_MEMORY
        self.barrier, self.all_gather = self.pg.Barrier, self.pg.allgather
        self.bcast = lambda obj: self.pg.bcast(obj, root=0)
        self.problem = lambda m, n, k: problem(self, m, n, k)
        self.sync = self.close = lambda: None
        self.info = {"device": "cpu (simulated run times)", "torch": None, "triton": None,
                     "run_ms": args.run_ms, "compile_ms": args.compile_ms}

    def tuned_function(self, section):
        sim, a = self.measurer, self.args

        def body(p, cfg, first):
            if first:
                time.sleep(a.compile_ms / 1e3)
            sim.last_ms = a.run_ms * simulated_ms(cfg, p)
            time.sleep(sim.last_ms / 1e3)

        return counting_compiles(body)

    def check(self, tuned, p, cfg):
        """The winner's time over the best kept config's (the simulation knows them all)."""
        best = min(simulated_ms(c, p) for c in SPACE if fits(c, p))
        return simulated_ms(cfg, p) / best, True


class TorchRanks:
    """GPU: torch.distributed, one process per GPU; a run launches the Triton kernel."""

    def __init__(self, args):
        global torch, triton, tl
        rank = int(os.environ.get("RANK", "0"))
        self.triton_root = tempfile.mkdtemp(prefix=f"tunekit-scaling-triton-r{rank}-")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(self.triton_root, "start")
        import torch
        import torch.distributed as dist
        import triton
        import triton.language as tl

        self.args, self.dist, self.pg, self.measurer = args, dist, None, None  # default group
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
        dist.init_process_group(args.backend)
        self.rank, self.world, self.barrier = dist.get_rank(), dist.get_world_size(), dist.barrier
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        self.shared_memory = getattr(props, "shared_memory_per_block_optin", H200_SHARED_MEMORY)
        self.dtype = {"fp16": torch.float16, "fp32": torch.float32}[args.dtype]
        self.info = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                     "triton": triton.__version__, "backend": args.backend,
                     "triton_cache": "cold: a fresh TRITON_CACHE_DIR per rank and section"}

    def all_gather(self, obj):
        out = [None] * self.world
        self.dist.all_gather_object(out, obj)
        return out

    def bcast(self, obj):
        box = [obj]
        self.dist.broadcast_object_list(box, src=0)
        return box[0]

    def problem(self, m, n, k):
        a, b, c = (torch.randn(rows, cols, device="cuda", dtype=self.dtype)
                   for rows, cols in ((m, k), (k, n), (m, n)))
        return problem(self, m, n, k, a, b, c)

    def tuned_function(self, section):
        # Cold compiles: a fresh Triton cache folder and a fresh JITFunction (no in-memory cache).
        os.environ["TRITON_CACHE_DIR"] = os.path.join(self.triton_root, section)
        kernel = matmul_kernel()

        def body(p, cfg, first):  # a first launch compiles on the host before it returns
            grid = (triton.cdiv(p.M, cfg["BLOCK_M"]) * triton.cdiv(p.N, cfg["BLOCK_N"]),)
            kernel[grid](p.a, p.b, p.c, p.M, p.N, p.K, *p.a.stride(), *p.b.stride(),
                         *p.c.stride(), **cfg)

        return counting_compiles(body)

    def check(self, tuned, p, cfg):
        """The winner's product (output poisoned first) against torch.matmul in fp32: the
        relative error, and whether it is below 1e-2."""
        p.c.fill_(float("nan"))
        tuned.fn(p, **cfg)
        ref = torch.matmul(p.a.float(), p.b.float())
        err = float((p.c.float() - ref).norm() / ref.norm())
        return err, math.isfinite(err) and err < 1e-2

    def sync(self):
        torch.cuda.synchronize()

    def close(self):
        self.dist.barrier()
        self.dist.destroy_process_group()
        if not self.args.keep:
            shutil.rmtree(self.triton_root, ignore_errors=True)


def matmul_kernel():
    """A fresh JITFunction of Triton's tutorial matmul (grouped tile order, fp32 accumulator)."""

    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
               stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        first_pid_m = (pid // num_pid_in_group) * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)

    return matmul


# ---- the sections, shared by both modes --------------------------------------------------------

def timed(ranks, body):
    """This rank's wall time of body(), between a barrier before and one after."""
    ranks.sync()
    ranks.barrier()
    t0 = time.perf_counter()
    out = body()
    ranks.sync()
    wall = time.perf_counter() - t0
    ranks.barrier()
    return wall, out


def decorate(ranks, fn, name, **options):
    return tunekit.autotune(SPACE, key_fn=key_of, prune_fn=fits, name=name, seed=ranks.args.seed,
                            measurer=ranks.measurer, **options)(fn)


def summary(ranks, wall, stats, winners, checks):
    """The section's figures of every rank (rank order), and whether all hold the same winners."""
    mine = {"wall_s": wall, "winners": json.dumps(winners, sort_keys=True), **stats,
            "check_worst": max(c[0] for c in checks), "checks_ok": all(c[1] for c in checks)}
    everyone = ranks.all_gather(mine)
    return everyone, {
        "wall_s": max(r["wall_s"] for r in everyone),
        "wall_s_by_rank": [r["wall_s"] for r in everyone],
        "same_winners": len({r["winners"] for r in everyone}) == 1,
        "compile_s_by_rank": [r["compile_s"] for r in everyone],
        "compiled_total": sum(r["configs_run"] for r in everyone),
        "check_worst": max(r["check_worst"] for r in everyone),
        "checks_ok": all(r["checks_ok"] for r in everyone)}


def split_search(ranks, args):
    fn, stats = ranks.tuned_function("split_search")
    tuned = decorate(ranks, fn, "scaling_split", budget=args.budget, batch_size=args.batch,
                     parallel_split=True)
    p = ranks.problem(args.m, args.n, args.k)
    wall, _ = timed(ranks, lambda: tuned(p, autotune_pg=ranks.pg))
    winner = tuned.best_config(p)
    everyone, out = summary(ranks, wall, stats, winner, [ranks.check(tuned, p, winner)])
    out["winner"] = json.dumps(winner, sort_keys=True)
    out["kept_configs"] = sum(1 for c in SPACE if fits(c, p))
    if ranks.rank == 0:  # the winner cache entry: who measured what, for how long
        record = tunekit.read_entry(tuned.cache_path(p)).get("record") or {}
        policy, cands = record.get("policy", {}), record.get("candidates", [])
        runs = policy.get("warmup", 0) + policy.get("runs", 0)
        measured = [0.0] * ranks.world
        for c in cands:
            measured[c.get("measured_on") or 0] += (c.get("time_ms") or 0.0) * runs / 1e3
        out["evaluations"] = (record.get("search") or {}).get("evaluations", len(cands))
        out["by_rank"] = [{"compile_s": r["compile_s"], "configs_run": r["configs_run"],
                           "measure_s": m, "other_s": r["wall_s"] - r["compile_s"] - m}
                          for r, m in zip(everyone, measured)]
    return out


def campaign(ranks, args):
    fn, stats = ranks.tuned_function("campaign")
    tuned = decorate(ranks, fn, "scaling_campaign", budget=args.campaign_budget,
                     batch_size=args.campaign_batch)
    s = args.sizes
    shapes = [(s[i], s[j], s[(i + j) % len(s)]) for i in range(len(s)) for j in range(len(s))]
    problems = [ranks.problem(*shape) for shape in shapes[:args.shapes]]
    wall, result = timed(ranks, lambda: tunekit.campaign(tuned, [(p,) for p in problems],
                                                         pg=ranks.pg, split=True, progress=False))
    winners, sources, checks = [], {}, []
    for p in problems:  # every rank, every shape: served from the winner cache the ranks share
        tuned(p, autotune_pg=ranks.pg)
        sources[tuned.last_source()] = sources.get(tuned.last_source(), 0) + 1
        winners.append(tuned.best_config(p))
        checks.append(ranks.check(tuned, p, winners[-1]))
    everyone, out = summary(ranks, wall, {**stats, "tuned": result.tuned}, winners, checks)
    return {**out, "shapes": len(problems), "tuned_by_rank": [r["tuned"] for r in everyone],
            "configs_run_by_rank": [r["configs_run"] for r in everyone],
            "sources_after_rank0": sources}


NOTE = ("compile_s: host time of a rank's first run of each config (the compile; on the CPU a "
        "simulated compile and run). split_search.by_rank: compile_s, measure_s (time_ms x runs "
        "of the candidates the rank measured, from the winner cache entry), other_s (the rest: "
        "strategy, collectives, waiting). check_worst: worst winner's error against "
        "torch.matmul (GPU), or its time over the best kept config's (CPU).")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the JSON file rank 0 writes")
    ap.add_argument("--cpu", action="store_true", help="MPI ranks and a simulated kernel")
    ap.add_argument("--dtype", choices=sorted(ELEMENT_BYTES), default="fp16")
    for dim in "mnk":
        ap.add_argument(f"--{dim}", type=int, default=4096, help="split search: the shape")
    ap.add_argument("--budget", type=int, default=64, help="split search: evaluations")
    ap.add_argument("--batch", type=int, default=16, help="split search: candidates per batch")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 3072, 4096],
                    help="campaign: the values of M, N and K")
    ap.add_argument("--shapes", type=int, default=16, help="campaign: how many (M, N, K)")
    ap.add_argument("--campaign-budget", type=int, default=16)
    ap.add_argument("--campaign-batch", type=int, default=4)
    ap.add_argument("--backend", default="nccl", help="torch.distributed backend (GPU)")
    ap.add_argument("--run-ms", type=float, default=1.0, help="--cpu: a run at the optimum")
    ap.add_argument("--compile-ms", type=float, default=20.0,
                    help="--cpu: a rank's first run of a config sleeps this much more")
    ap.add_argument("--work-dir", help="where the winner cache goes (one every rank reads)")
    ap.add_argument("--keep", action="store_true", help="keep the winner and Triton caches")
    args = ap.parse_args()

    ranks = MpiRanks(args) if args.cpu else TorchRanks(args)
    work = ranks.bcast(tempfile.mkdtemp(prefix="tunekit-scaling-", dir=args.work_dir)
                       if ranks.rank == 0 else None)  # before any tuner reads the environment
    os.environ["TUNEKIT_CACHE_DIR"] = os.path.join(work, "cache")
    os.environ["TUNEKIT_LOG_DIR"] = os.path.join(work, "logs")
    sections = {"split_search": split_search(ranks, args), "campaign": campaign(ranks, args)}
    same = all(s["same_winners"] for s in sections.values())
    correct = all(s["checks_ok"] for s in sections.values())
    if ranks.rank == 0:
        report = {"world": ranks.world, **ranks.info, "dtype": args.dtype,
                  "python": sys.version.split()[0], "tunekit": tunekit.__version__,
                  "budget": args.budget, "batch": args.batch, "seed": args.seed,
                  "campaign_budget": args.campaign_budget, "campaign_batch": args.campaign_batch,
                  "shape": [args.m, args.n, args.k], "sections": sections, "note": NOTE}
        with open(args.out, "w") as f:
            f.write(json.dumps(report, indent=2) + "\n")
        s, c = sections["split_search"], sections["campaign"]
        print(f"world {ranks.world} on {ranks.info['device']}: split_search {s['wall_s']:.2f} s "
              f"({s['evaluations']} evaluations, winner {s['winner']}), campaign "
              f"{c['wall_s']:.2f} s ({c['shapes']} shapes, tuned by rank {c['tuned_by_rank']}); "
              f"same winners {'yes' if same else 'NO'}; checks {'ok' if correct else 'FAILED'}",
              flush=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    ranks.close()
    return 0 if same and correct else 1


if __name__ == "__main__":
    sys.exit(main())
