"""A bf16 matmul tuning campaign on a GPU: tunekit.triton.autotune against Triton's autotuner
and cuBLAS, per shape.

The kernel is a Triton tutorial-style matmul (C = A @ B, A: MxK and B: KxN row-major, fp32
accumulation, bf16 output, grouped program ordering with GROUP_M, masked loads and stores for
ragged M/N/K). Its space is the product of BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps and
num_stages (2,400 configs); configs whose shared memory cannot fit stay in it, so both tuners
meet out-of-resource failures. For each shape, in this order:

1. tunekit: ``tunekit.triton.autotune(configs=SPACE, budget=200, compile_workers=W, seed=0)``
   (without ``compile_workers`` when the installed tunekit rejects it; with --time-budget S,
   ``budget=tunekit.Budget(evaluations=200, time_s=S)``); wall time of the first launch, which
   tunes, and the search's stop reason from its winner cache entry.
2. Triton: ``triton.autotune(configs=SUBSET)`` over a fixed random subset of SPACE (96 configs,
   the same for every shape); wall time of its first launch, per config, and extrapolated to
   the whole space (per-config time x len(SPACE): an estimate, not a measurement).
3. The timing round: both winners and ``torch.matmul`` (cuBLAS) under
   ``triton.testing.do_bench(warmup=25, rep=200)`` (median), interleaved over 3 rounds (the
   median of the rounds), with each winner checked against ``torch.matmul``.

Every tuner starts in a fresh Triton cache dir and a freshly built JITFunction (so no compiled
kernel is reused between contenders or shapes), and tunekit in a fresh TUNEKIT_CACHE_DIR. A time
guard (--max-minutes, counted from --clock-start) skips the remaining shapes when the next
contender would not fit.

    python bench/triton/matmul_campaign.py --out DIR [--shapes 4096x4096x4096,16x14336x4096]
        [--budget 200] [--time-budget S] [--seed 0] [--compile-workers N] [--triton-configs 96]
        [--max-minutes 9] [--clock-start EPOCH_S] [--dry-run]

--dry-run builds the space and the subset, prints their sizes and the plan, and exits without
importing torch (it needs Triton only, no GPU). Writes DIR/campaign.jsonl (one line per shape and
contender), DIR/campaign.md (the table, also printed last), DIR/env.json, DIR/timings/ (each
tuner's per-config times) and DIR/tunekit-cache/ (tunekit's winner cache entries). Run it from a
directory outside the source tree so that the installed tunekit is imported
(bench/triton/campaign.sh does).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

import triton
import triton.language as tl

# -- the kernel -----------------------------------------------------------------------------------


def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr):
    # Grouped ordering: GROUP_M rows of tiles are walked column by column, so that the tiles
    # running together share A's rows and B's columns in L2.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    mask_m = offs_m[:, None] < M
    mask_n = offs_n[None, :] < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K  # the last block of K may be ragged
        a = tl.load(a_ptrs, mask=mask_m & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=mask_m & mask_n)


def fresh_kernel() -> Any:
    """A new JITFunction of the kernel: its in-memory compile cache is empty, so nothing a
    previous contender compiled is reused (the Triton cache dir covers the disk)."""
    return triton.jit(_matmul_kernel)


def grid(meta: dict[str, Any], M: int, N: int) -> tuple[int]:
    return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)


# -- the space ------------------------------------------------------------------------------------

AXES = {
    "BLOCK_M": (16, 32, 64, 128, 256),
    "BLOCK_N": (32, 64, 128, 256),
    "BLOCK_K": (16, 32, 64, 128),
    "GROUP_M": (1, 4, 8),
    "num_warps": (4, 8),
    "num_stages": (2, 3, 4, 5, 6),
}
SHARED_LIMIT = 227 * 1024  # the H200's shared memory per block (opt-in), bytes


def space() -> list[Any]:
    """Every config of AXES, in a fixed order (a new list of new Config objects each call)."""
    out = []
    for bm in AXES["BLOCK_M"]:
        for bn in AXES["BLOCK_N"]:
            for bk in AXES["BLOCK_K"]:
                for gm in AXES["GROUP_M"]:
                    for w in AXES["num_warps"]:
                        for s in AXES["num_stages"]:
                            out.append(triton.Config(
                                {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": gm},
                                num_warps=w, num_stages=s))
    return out


def subset_indices(n_space: int, n: int, seed: int) -> list[int]:
    """The Triton autotuner's subset of the space: n indices drawn with a fixed seed, sorted."""
    return sorted(random.Random(seed).sample(range(n_space), min(n, n_space)))


def rough_shared_bytes(c: Any) -> int:
    """A rough upper estimate of a config's shared memory: num_stages buffers of A's and B's
    bf16 tiles. For the dry run's information only; nothing is pruned."""
    k = c.kwargs
    return c.num_stages * (k["BLOCK_M"] * k["BLOCK_K"] + k["BLOCK_K"] * k["BLOCK_N"]) * 2


# -- the plan and the time guard ------------------------------------------------------------------

DEFAULT_SHAPES = [(4096, 4096, 4096), (16, 14336, 4096), (128, 14336, 4096), (2048, 14336, 4096)]
# A priori guesses for the guard, replaced by what earlier shapes measured: one config's compile
# on one core (0.62 s on average over the space, 5.7 s at most, compiled for sm_90 with Triton
# 3.6.0 on a machine without a GPU; taken higher), one candidate's do_bench (warmup 25 ms + rep
# 100 ms + its estimate), the timing round (3 rounds x 3 do_bench(rep=200) + the checks).
COMPILE_S_GUESS = 0.8
BENCH_S_GUESS = 0.25
TIMING_S_GUESS = 20.0


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    shapes = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        dims = part.lower().split("x")
        if len(dims) != 3:
            raise SystemExit(f"--shapes: {part!r} is not MxNxK")
        shapes.append((int(dims[0]), int(dims[1]), int(dims[2])))
    if not shapes:
        raise SystemExit("--shapes: no shape given")
    return shapes


def shape_name(shape: tuple[int, int, int]) -> str:
    return "x".join(str(d) for d in shape)


class Guard:
    """Estimates of each contender's wall time, from the guesses until a shape has measured
    them, and the check against the deadline."""

    def __init__(self, a: argparse.Namespace, n_subset: int) -> None:
        self.t0 = a.clock_start if a.clock_start is not None else time.time()
        self.limit_s = a.max_minutes * 60.0
        self.budget = a.budget
        self.time_budget = a.time_budget
        self.workers = max(1, a.compile_workers or 1)
        self.n_subset = n_subset
        self.tk_s: float | None = None        # tunekit's wall time on the last shape
        self.tr_per_cfg: float | None = None  # Triton's wall time per config on the last shape

    def elapsed(self) -> float:
        return time.time() - self.t0

    def tunekit_s(self) -> float:
        if self.tk_s is not None:
            return self.tk_s
        guess = 5.0 + self.budget * (COMPILE_S_GUESS / self.workers + BENCH_S_GUESS)
        return min(guess, self.time_budget + 15.0) if self.time_budget > 0 else guess

    def triton_s(self) -> float:
        per = self.tr_per_cfg if self.tr_per_cfg is not None else COMPILE_S_GUESS + BENCH_S_GUESS
        return self.n_subset * per

    def fits(self, seconds: float) -> bool:
        return self.elapsed() + seconds <= self.limit_s


# -- measuring ------------------------------------------------------------------------------------


def fresh_triton_cache(base: str, tag: str) -> str:
    """A new, empty Triton cache dir for the next tuner: the environment variable, and the knob
    where this Triton has one (it may have been read already)."""
    d = tempfile.mkdtemp(prefix=f"triton-{tag}-", dir=base)
    os.environ["TRITON_CACHE_DIR"] = d
    knobs = getattr(triton, "knobs", None)
    cache = getattr(knobs, "cache", None) if knobs is not None else None
    if cache is not None and hasattr(cache, "dir"):
        cache.dir = d
    return d


def timings_summary(timings: dict[Any, Any]) -> tuple[int, int]:
    """(candidates measured, of them failed, i.e. +inf) of a configs_timings dict."""
    def median(t: Any) -> float:
        return float(t[0]) if isinstance(t, (list, tuple)) else float(t)

    return len(timings), sum(1 for t in timings.values() if math.isinf(median(t)))


def dump_timings(path: str, timings: dict[Any, Any]) -> None:
    """Each measured config's all_kwargs() and [median, p20, p80] ms (null: failed)."""
    rows = []
    for c, t in timings.items():
        t = list(t) if isinstance(t, (list, tuple)) else [t]
        rows.append({"config": c.all_kwargs(),
                     "ms": [None if math.isinf(float(x)) else float(x) for x in t]})
    with open(path, "w") as f:
        json.dump(rows, f, indent=0)


def first_launch(tuned: Any, g: Any, args_of: Any, M: int, N: int,
                 row: dict[str, Any]) -> dict[Any, Any]:
    """The tuning launch of an autotuner, timed to the end of the GPU's work: ``row`` gets
    wall_s, evaluated, failed and bench_time_s; returns its configs_timings."""
    import torch

    C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tuned[g](*args_of(C))
    torch.cuda.synchronize()
    row["wall_s"] = time.perf_counter() - t0
    timings = dict(tuned.configs_timings)
    row["evaluated"], row["failed"] = timings_summary(timings)
    row["bench_time_s"] = getattr(tuned, "bench_time", None)
    return timings


def make_tunekit(tt: Any, kernel: Any, a: argparse.Namespace) -> tuple[Any, int | None]:
    """The tunekit autotuner over the whole space, with compile_workers when this tunekit takes
    it; returns (autotuner, the compile_workers used or None)."""
    budget: Any = a.budget
    if a.time_budget > 0:
        import tunekit

        budget = tunekit.Budget(evaluations=a.budget, time_s=a.time_budget)
    kw = dict(configs=space(), key=["M", "N", "K"], budget=budget, seed=a.seed, name="mm_bf16")
    if a.compile_workers is not None:
        try:
            return tt.autotune(**kw, compile_workers=a.compile_workers)(kernel), \
                a.compile_workers
        except TypeError as e:
            if "compile_workers" not in str(e):
                raise
            print(f"  tunekit rejects compile_workers ({e}); tuning without it", flush=True)
    return tt.autotune(**kw)(kernel), None


def entry_mtimes(cache_dir: str) -> dict[str, float]:
    """The winner cache's JSON files under ``cache_dir`` and their modification times."""
    return {os.path.join(root, f): os.path.getmtime(os.path.join(root, f))
            for root, _, files in os.walk(cache_dir) for f in files if f.endswith(".json")}


def search_record(cache_dir: str,
                  before: dict[str, float] | None = None) -> dict[str, Any] | None:
    """The ``search`` record of the winner cache entry tunekit wrote under ``cache_dir``; with
    ``before`` (``entry_mtimes`` of an earlier moment), only of an entry written since."""
    before = before or {}
    for path, mtime in sorted(entry_mtimes(cache_dir).items()):
        if before.get(path) == mtime:
            continue
        try:
            with open(path) as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict) and isinstance(entry.get("search"), dict):
            return entry["search"]
    return None


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", help="comma-separated MxNxK (default: all four)")
    p.add_argument("--budget", type=int, default=200, help="tunekit's evaluations per shape")
    p.add_argument("--time-budget", type=float, default=0.0,
                   help="tunekit's wall-time limit per shape in seconds (0: none)")
    p.add_argument("--seed", type=int, default=0, help="tunekit's seed and the subset's")
    p.add_argument("--compile-workers", type=int, default=cpu_count(),
                   help="tunekit's compile_workers (default: the CPUs this process may use)")
    p.add_argument("--triton-configs", type=int, default=96,
                   help="size of the random subset Triton's autotuner gets")
    p.add_argument("--max-minutes", type=float, default=9.0,
                   help="skip what would end after this many minutes from --clock-start")
    p.add_argument("--clock-start", type=float, default=None,
                   help="epoch seconds the time guard counts from (default: now)")
    p.add_argument("--out", default="campaign-out")
    p.add_argument("--dry-run", action="store_true",
                   help="print the space, the subset and the plan; no torch, no GPU")
    a = p.parse_args()

    shapes = parse_shapes(a.shapes) if a.shapes else list(DEFAULT_SHAPES)
    full = space()
    sub_idx = subset_indices(len(full), a.triton_configs, a.seed)
    guard = Guard(a, len(sub_idx))

    over = [c for c in full if rough_shared_bytes(c) > SHARED_LIMIT]
    over_sub = [full[i] for i in sub_idx if rough_shared_bytes(full[i]) > SHARED_LIMIT]
    print(f"space: {len(full)} configs ("
          + " x ".join(f"{k} {len(v)}" for k, v in AXES.items()) + ")")
    print(f"  roughly over {SHARED_LIMIT // 1024} KiB of shared memory (stages x tiles, "
          f"an estimate; kept in the space): {len(over)}")
    print(f"triton subset: {len(sub_idx)} configs (seed {a.seed}), of them roughly over the "
          f"shared memory: {len(over_sub)}")
    print(f"tunekit: budget {a.budget}, time budget {a.time_budget} s, compile_workers "
          f"{a.compile_workers}, seed {a.seed}")
    print(f"time guard: {a.max_minutes:g} min from "
          f"{'--clock-start' if a.clock_start is not None else 'the start of this script'}"
          f" (elapsed now {guard.elapsed():.0f} s)")
    print("plan (per shape: tunekit, triton, then the timing round with cuBLAS; the estimates "
          "are the guard's guesses, replaced by measured times once a shape has run):")
    end = guard.elapsed()
    for s in shapes:
        per_shape = guard.tunekit_s() + guard.triton_s() + TIMING_S_GUESS
        end += per_shape
        late = "  <- past the limit: the guard would skip it" if end > guard.limit_s else ""
        print(f"  {shape_name(s):>18}  {2 * s[0] * s[1] * s[2] / 1e9:6.1f} GFLOP  "
              f"tunekit ~{guard.tunekit_s():.0f} s, triton ~{guard.triton_s():.0f} s, "
              f"timing ~{TIMING_S_GUESS:.0f} s, done by ~{end:.0f} s{late}")
    if a.dry_run:
        return 0
    return run(a, shapes, sub_idx, guard)


def run(a: argparse.Namespace, shapes: list[tuple[int, int, int]], sub_idx: list[int],
        guard: Guard) -> int:
    import torch
    from triton.testing import do_bench

    import tunekit
    import tunekit.triton as tt

    os.makedirs(a.out, exist_ok=True)
    out = os.path.abspath(a.out)
    os.makedirs(os.path.join(out, "timings"), exist_ok=True)
    os.environ["TUNEKIT_LOG_DIR"] = os.path.join(out, "tunekit-logs")
    base = tempfile.mkdtemp(prefix="tk-mm-campaign-")
    n_space = len(space())
    env = {"device": torch.cuda.get_device_name(), "triton": triton.__version__,
           "torch": torch.__version__, "tunekit": getattr(tunekit, "__version__", None),
           "tunekit_file": tunekit.__file__, "python": sys.version.split()[0],
           "cpus": cpu_count(), "space": n_space, "triton_subset": len(sub_idx),
           "budget": a.budget, "seed": a.seed, "compile_workers_asked": a.compile_workers,
           "allow_bf16_reduced_precision_reduction":
               torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
           "TUNEKIT_AUTOTUNE": os.environ.get("TUNEKIT_AUTOTUNE")}
    with open(os.path.join(out, "env.json"), "w") as f:
        json.dump(env, f, indent=1)
    print(f"device: {env['device']}, triton {env['triton']}, torch {env['torch']}, tunekit "
          f"{env['tunekit']} ({env['tunekit_file']})", flush=True)

    # Warm up what is paid once per process, so that the first contender is not charged for
    # it: the CUDA context, cuBLAS, and Triton's driver (its helper module is built into the
    # cache dir of the first launch), here with a throwaway kernel in a throwaway cache dir.
    fresh_triton_cache(base, "warmup")
    x = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    torch.matmul(x, x)
    warm = fresh_kernel()
    y = torch.empty_like(x)
    warm[(1,)](x, x, y, 64, 64, 64, x.stride(0), x.stride(1), x.stride(0), x.stride(1),
               y.stride(0), y.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=1)
    torch.cuda.synchronize()
    del warm

    jsonl = os.path.join(out, "campaign.jsonl")
    open(jsonl, "w").close()
    summary: list[dict[str, Any]] = []
    notes: list[str] = []
    gen = torch.Generator(device="cuda")

    for si, shape in enumerate(shapes):
        M, N, K = shape
        name = shape_name(shape)
        flops = 2.0 * M * N * K
        est = guard.tunekit_s() + guard.triton_s() + TIMING_S_GUESS
        if not guard.fits(est):
            rest = ", ".join(shape_name(s) for s in shapes[si:])
            msg = (f"time guard: skipped {rest} (elapsed {guard.elapsed():.0f} s + estimate "
                   f"{est:.0f} s > {guard.limit_s:.0f} s)")
            print(msg, flush=True)
            notes.append(msg)
            break
        print(f"== {name} ({flops / 1e9:.1f} GFLOP), elapsed {guard.elapsed():.0f} s",
              flush=True)
        gen.manual_seed(a.seed)
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16, generator=gen)
        B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16, generator=gen)
        g = lambda meta: grid(meta, M, N)  # noqa: E731

        def args_of(C: Any) -> tuple[Any, ...]:
            return (A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                    C.stride(0), C.stride(1))

        rows: dict[str, dict[str, Any]] = {}
        shape_base = tempfile.mkdtemp(prefix=f"{name}-", dir=base)
        kernels: dict[str, Any] = {}  # contender -> (its JITFunction, its winner)

        # 1. tunekit over the whole space.
        row: dict[str, Any] = {"shape": list(shape), "name": name, "contender": "tunekit",
                               "space": n_space, "budget": a.budget,
                               "time_budget_s": a.time_budget}
        row["compile_workers"] = None
        tk_cache = tempfile.mkdtemp(prefix="tunekit-cache-", dir=shape_base)
        os.environ["TUNEKIT_CACHE_DIR"] = tk_cache
        fresh_triton_cache(shape_base, "tunekit")
        kernel = fresh_kernel()
        try:
            tuned, workers = make_tunekit(tt, kernel, a)
            row["compile_workers"] = workers
            timings = first_launch(tuned, g, args_of, M, N, row)
            row["source"] = tuned.last_source()
            row["best_config"] = tuned.best_config.all_kwargs()
            rec = search_record(tk_cache)
            row["stop"] = rec.get("stop") if rec else None
            kernels["tunekit"] = (kernel, tuned.best_config)
            dump_timings(os.path.join(out, "timings", f"{name}-tunekit.json"), timings)
            guard.tk_s = row["wall_s"]
            print(f"  tunekit: {row['wall_s']:.1f} s, {row['evaluated']} measured, "
                  f"{row['failed']} failed, stop {row['stop']}, source {row['source']}, "
                  f"compile_workers {workers}, "
                  f"best {row['best_config']}", flush=True)
        except Exception as e:  # recorded; the campaign goes on
            row["error"] = f"{type(e).__name__}: {e}"
            print(f"  tunekit failed: {row['error']}", flush=True)
        try:
            shutil.copytree(tk_cache, os.path.join(out, "tunekit-cache", name),
                            dirs_exist_ok=True)
        except OSError:
            pass
        rows["tunekit"] = row

        # 2. Triton's autotuner over the subset.
        row = {"shape": list(shape), "name": name, "contender": "triton",
               "subset": len(sub_idx), "space": n_space}
        stop_after = False
        if not guard.fits(guard.triton_s() + TIMING_S_GUESS):
            msg = (f"time guard: skipped triton on {name} and the shapes after it (elapsed "
                   f"{guard.elapsed():.0f} s + estimate {guard.triton_s() + TIMING_S_GUESS:.0f}"
                   f" s > {guard.limit_s:.0f} s)")
            print("  " + msg, flush=True)
            notes.append(msg)
            row["skipped"] = "time guard"
            stop_after = True
        else:
            fresh_triton_cache(shape_base, "triton")
            kernel = fresh_kernel()
            configs = space()
            try:
                tuned = triton.autotune(configs=[configs[i] for i in sub_idx],
                                        key=["M", "N", "K"])(kernel)
                timings = first_launch(tuned, g, args_of, M, N, row)
                row["per_config_s"] = row["wall_s"] / len(sub_idx)
                row["extrapolated_full_space_s"] = row["per_config_s"] * n_space
                row["best_config"] = tuned.best_config.all_kwargs()
                kernels["triton"] = (kernel, tuned.best_config)
                dump_timings(os.path.join(out, "timings", f"{name}-triton.json"), timings)
                guard.tr_per_cfg = row["per_config_s"]
                print(f"  triton: {row['wall_s']:.1f} s for {len(sub_idx)} configs "
                      f"({row['per_config_s']:.2f} s each; the full space extrapolated: "
                      f"{row['extrapolated_full_space_s']:.0f} s), {row['failed']} failed, "
                      f"best {row['best_config']}", flush=True)
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {e}"
                print(f"  triton failed: {row['error']}", flush=True)
        rows["triton"] = row
        rows["cublas"] = {"shape": list(shape), "name": name, "contender": "cublas",
                          "wall_s": None, "evaluated": None, "failed": None,
                          "best_config": None}

        # 3. The timing round: each winner (and cuBLAS's bf16 result) checked against
        # torch.matmul of fp32 copies of A and B (TF32 off), then the winners and cuBLAS timed
        # interleaved (A B C, three rounds; the median of the rounds). The reference is fp32
        # because cuBLAS's bf16 matmul may reduce split-K partial sums in bf16.
        torch.backends.cuda.matmul.allow_tf32 = False
        ref = torch.matmul(A.float(), B.float())
        fns: dict[str, Any] = {"cublas": lambda: torch.matmul(A, B)}
        checks = [(who, kern, cfg.all_kwargs()) for who, (kern, cfg) in kernels.items()]
        checks.append(("cublas", None, None))
        for who, kern, kw in checks:
            try:
                if kern is None:
                    C = torch.matmul(A, B)
                else:
                    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                    kern[g](*args_of(C), **kw)  # a plain launch of the JITFunction it tuned
                torch.cuda.synchronize()
                err = (C.float() - ref).abs().nan_to_num(float("inf"))
                rows[who]["max_abs_err"] = float(err.max())
                rows[who]["max_rel_err"] = float((err / ref.abs().clamp_min(1.0)).max())
            except Exception as e:
                rows[who]["error"] = f"correctness launch: {type(e).__name__}: {e}"
                rows[who]["correct"] = False
                print(f"  {who}: {rows[who]['error']}", flush=True)
                continue
            try:
                torch.testing.assert_close(C.float(), ref, atol=1e-1, rtol=2e-2)
                rows[who]["correct"] = True
            except AssertionError as e:
                rows[who]["correct"] = False
                rows[who]["correct_detail"] = str(e).splitlines()[:4]
            if kern is not None:
                fns[who] = (lambda kern=kern, C=C, kw=kw: kern[g](*args_of(C), **kw))
        ref = None  # free it before the timing
        order = [w for w in ("tunekit", "triton", "cublas") if w in fns]
        rounds: dict[str, list[float]] = {who: [] for who in order}
        try:
            for _ in range(3):
                for who in order:
                    rounds[who].append(float(do_bench(fns[who], warmup=25, rep=200,
                                                      return_mode="median")))
        except Exception as e:
            for who in order:
                rows[who]["timing_error"] = f"{type(e).__name__}: {e}"
            print(f"  timing failed: {type(e).__name__}: {e}", flush=True)
        for who in order:
            if rounds[who]:
                ms = statistics.median(rounds[who])
                rows[who]["ms"] = ms
                rows[who]["ms_rounds"] = rounds[who]
                rows[who]["tflops"] = flops / (ms * 1e-3) / 1e12
        print("  timing: " + ", ".join(
            f"{w} {rows[w]['ms'] * 1e3:.1f} us = {rows[w]['tflops']:.1f} TFLOP/s"
            + ("" if rows[w].get("correct") else " (WRONG)")
            for w in order if "ms" in rows[w]), flush=True)

        with open(jsonl, "a") as f:
            for who in ("tunekit", "triton", "cublas"):
                f.write(json.dumps(rows[who]) + "\n")
        summary.append(rows)
        del A, B, fns, kernels
        torch.cuda.empty_cache()
        shutil.rmtree(shape_base, ignore_errors=True)  # the compiled kernels are in memory
        if stop_after and si + 1 < len(shapes):
            notes.append("time guard: not started: "
                         + ", ".join(shape_name(s) for s in shapes[si + 1:]))
            break

    shutil.rmtree(base, ignore_errors=True)
    table = markdown(summary, notes, n_space, len(sub_idx))
    with open(os.path.join(out, "campaign.md"), "w") as f:
        f.write(table)
    print()
    print(table, end="")
    return 0


# -- the table ------------------------------------------------------------------------------------


def _f(x: Any, fmt: str, unit: str = "") -> str:
    return "-" if x is None else format(x, fmt) + unit


def markdown(summary: list[dict[str, dict[str, Any]]], notes: list[str], n_space: int,
             n_sub: int) -> str:
    lines = [
        f"| shape | tunekit tune s (measured/failed) | Triton tune s, {n_sub} cfgs "
        f"(measured/failed) | Triton full space s, {n_space} cfgs (extrapolated) "
        f"| Triton/tunekit tune (subset) | Triton/tunekit tune (full, extrapolated) "
        f"| tunekit TFLOP/s | Triton TFLOP/s | cuBLAS TFLOP/s | tunekit vs Triton |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rows in summary:
        tk, tr, cb = rows["tunekit"], rows["triton"], rows["cublas"]

        def tune(r: dict[str, Any]) -> str:
            if r.get("wall_s") is None:
                return "skipped" if r.get("skipped") else "error"
            stop = f", stop {r['stop']}" if r.get("stop") else ""
            return f"{r['wall_s']:.1f} ({r['evaluated']}/{r['failed']}{stop})"

        def perf(r: dict[str, Any]) -> str:
            if r.get("tflops") is None:
                return "-"
            return f"{r['tflops']:.1f}" + ("" if r.get("correct", True) else " (wrong)")

        tkw, trw, trf = tk.get("wall_s"), tr.get("wall_s"), tr.get("extrapolated_full_space_s")
        vs = None
        if tk.get("tflops") and tr.get("tflops"):
            vs = (tk["tflops"] / tr["tflops"] - 1.0) * 100.0
        lines.append(
            f"| {tk['name']} | {tune(tk)} | {tune(tr)} | {_f(trf, '.0f')} "
            f"| {_f(trw / tkw if tkw and trw else None, '.2f', 'x')} "
            f"| {_f(trf / tkw if tkw and trf else None, '.1f', 'x')} "
            f"| {perf(tk)} | {perf(tr)} | {perf(cb)} | {_f(vs, '+.1f', '%')} |")
    lines.append("")
    lines.append(f"Tune s: wall time of the first launch (compiles, measures, launches the "
                 f"winner), in a fresh Triton cache. tunekit searches all {n_space} configs with "
                 f"its budget; Triton's autotuner measures a fixed random subset of {n_sub}. "
                 f"The full-space Triton column is extrapolated (its time per config x "
                 f"{n_space}), not measured. TFLOP/s: 2MNK / do_bench median (warmup 25 ms, "
                 f"rep 200 ms), median of 3 interleaved rounds.")
    for rows in summary:
        tk = rows["tunekit"]
        if "compile_workers" in tk or "source" in tk:
            lines.append(f"- {tk['name']}: tunekit source {tk.get('source')}, compile_workers "
                         f"{tk.get('compile_workers')}, budget {tk.get('budget')}, time budget "
                         f"{tk.get('time_budget_s')} s, stop {tk.get('stop')}")
        for r in rows.values():
            if r.get("error"):
                lines.append(f"- {r['name']} {r['contender']}: {r['error'][:300]}")
    for n in notes:
        lines.append(f"- {n}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
