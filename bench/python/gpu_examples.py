"""tunekit for Python on a GPU machine with PyTorch and Triton: the seed's two usage examples with
only their import line changed, autotune_pg over NCCL (and gloo) on two GPUs, and the hot path
against Triton's autotuner.

    python bench/python/gpu_examples.py examples         # the seed's two examples, one GPU
    python bench/python/gpu_examples.py hot-path         # per-call host cost vs triton.autotune
    TUNEKIT_ALWAYS_TUNE=1 python bench/python/gpu_examples.py artifact   # writes the artifact
    python bench/python/gpu_examples.py artifact         # (fresh cache) serves it, measures nothing
    python bench/python/gpu_examples.py inplace          # reset_to_zero on an accumulating kernel
    torchrun --nproc-per-node 2 bench/python/gpu_examples.py dist   # autotune_pg, NCCL + gloo
    torchrun --nproc-per-node 2 bench/python/gpu_examples.py dist-contextual  # + dist.all_reduce

Each section prints what it checked and ends with "ok"; a failed check raises. ``--out FILE``
appends the section's results as one JSON line. The winner cache goes to $TUNEKIT_CACHE_DIR
(default: a fresh temporary directory, so the first call of each key tunes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import triton
import triton.language as tl

import tunekit

RESULTS: dict = {}


# ---------------------------------------------------------------------------------------------
# The seed's first example (triton_dist.tune.autotune), the import line changed.
# The seed omits the kernel; this is the one its second example defines, without triton.autotune.

@triton.jit
def scale_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, alpha * x, mask=mask)


def seed_example_autotune(x):
    from tunekit import autotune  # was: from triton_dist.tune import autotune

    def configs():
        return [
            {"cfg": triton.Config({"BLOCK": block}, num_warps=warps)}
            for block in (256, 512)
            for warps in (4, 8)
        ]

    def key_fn(x, alpha, *args, **kwargs):
        return (tuple(x.shape), str(x.dtype))

    def prune_fn(entry, x, alpha, *args, **kwargs):
        block = entry["cfg"].all_kwargs()["BLOCK"]
        return block <= x.numel()

    @autotune(config_space=configs(), key_fn=key_fn, prune_fn=prune_fn)
    def scale(x, alpha, cfg):
        y = torch.empty_like(x)
        meta = cfg.all_kwargs()
        grid = (triton.cdiv(x.numel(), meta["BLOCK"]),)
        scale_kernel[grid](x, y, alpha, x.numel(), **meta)
        return y

    y = scale(x, 2.5, autotune=True, autotune_verbose=True)
    return scale, y


# ---------------------------------------------------------------------------------------------
# The seed's second example (triton_dist.autotuner.contextual_autotune), the import line changed.

def seed_example_contextual(x):
    from tunekit import contextual_autotune  # was: from triton_dist.autotuner import contextual_autotune

    BLOCK = 512

    @triton.autotune(
        configs=[
            triton.Config({"BLOCK": BLOCK}, num_warps=warps)
            for warps in (4, 8)
        ],
        key=["n"],
    )
    @triton.jit
    def scale_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offsets = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(y_ptr + offsets, alpha * x, mask=mask)

    @contextual_autotune(is_dist=False, n_repeat=3, n_warmup=2)
    def run_scale(x, alpha):
        y = torch.empty_like(x)
        grid = (triton.cdiv(x.numel(), BLOCK),)
        scale_kernel[grid](x, y, alpha, x.numel())
        return y

    y = run_scale(x, 3.0)
    return scale_kernel, run_scale, y


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"  ok: {what}", flush=True)


def section_examples(args):
    x = torch.randn(1 << 20, device="cuda", dtype=torch.float32)
    print("== seed example 1: tunekit.autotune over a Triton kernel (triton.Config values)")
    t0 = time.perf_counter()
    scale, y = seed_example_autotune(x)
    tune_s = time.perf_counter() - t0
    torch.cuda.synchronize()
    check(torch.allclose(y, 2.5 * x), "scale(x, 2.5) == 2.5 * x")
    check(scale.last_source() == "search", "the first call tuned (source search)")
    entry = json.loads(tunekit.read_entry(scale.cache_path(x, 2.5))["entry"])
    check(entry["measurer"] == "cuda", "timed with CUDA events (measurer 'cuda')")
    check(entry["hardware"]["kind"] == "cuda", f"hardware {entry['hardware']['name']}")
    print("  candidates:", [(c["config"]["cfg"], c["status"], c.get("time_ms"))
                            for c in entry["candidates"]])
    winner = scale.best_config(x, 2.5)["cfg"]
    print(f"  winner {winner} in {tune_s:.2f} s (first call, compiles included)")
    y2 = scale(x, 2.5)
    check(torch.allclose(y2, 2.5 * x), "second call served from memory")
    # A fresh decorator (what a new process sees) reads the winner cache entry.
    scale2, y3 = seed_example_autotune(x)
    check(scale2.last_source() == "cache", "a new AutoTuner reads the winner cache (source cache)")
    y4 = scale2(x, 2.5, autotune=False)
    check(torch.allclose(y4, 2.5 * x), "autotune=False runs config_space[0]")
    cli = tunekit.cli_path()
    if cli:
        os.system(f"{sys.executable} -m tunekit cache list --function scale")

    print("== seed example 2: tunekit.contextual_autotune over a triton.autotune kernel")
    kernel, run_scale, y = seed_example_contextual(x)
    torch.cuda.synchronize()
    check(torch.allclose(y, 3.0 * x), "run_scale(x, 3.0) == 3.0 * x")
    check(len(kernel.cache) == 1, f"one winner written to the autotuner's cache: {kernel.cache}")
    key, chosen = next(iter(kernel.cache.items()))
    print(f"  winner {chosen} under key {key}; {run_scale.last_winners()}")
    log = os.path.join(os.environ.get("TUNEKIT_LOG_DIR", ".autotune_logs"), "rank-0.log")
    check(os.path.exists(log), f"log {log}")
    RESULTS["examples"] = {"winner_autotune": str(winner), "tune_s": tune_s,
                           "winner_contextual": str(chosen),
                           "device": torch.cuda.get_device_name()}
    print("examples ok")


# ---------------------------------------------------------------------------------------------

def per_call_us(f, calls, repeat):
    samples = []
    for _ in range(repeat):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f(calls)
        samples.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def section_hot_path(args):
    """Host time per call, launches queued asynchronously (the kernel itself is tiny): the kernel
    launched by hand with the winner, through a tunekit.autotune host function, and through
    triton.autotune (resolved)."""
    n = 1 << 12
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    configs = [triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 512, 1024) for w in (4, 8)]

    @tunekit.autotune([{"cfg": c} for c in configs], key_fn=lambda x, y, alpha: (x.numel(),))
    def launch(x, y, alpha, cfg):
        meta = cfg.all_kwargs()
        scale_kernel[(triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, alpha, x.numel(), **meta)

    launch(x, y, 2.0)  # tunes
    cfg = launch.best_config(x, y, 2.0)["cfg"]
    meta = cfg.all_kwargs()
    grid = (triton.cdiv(n, meta["BLOCK"]),)
    by_hand_fn = launch.fn  # the undecorated host function

    tuned_kernel = triton.autotune(configs=configs, key=["n"])(scale_kernel)
    tgrid = lambda m: (triton.cdiv(n, m["BLOCK"]),)  # noqa: E731
    tuned_kernel[tgrid](x, y, 2.0, n)  # Triton tunes
    torch.cuda.synchronize()

    def raw_launch(k):
        for _ in range(k):
            scale_kernel[grid](x, y, 2.0, n, **meta)

    def by_hand(k):
        for _ in range(k):
            by_hand_fn(x, y, 2.0, cfg=cfg)

    def via_tunekit(k):
        for _ in range(k):
            launch(x, y, 2.0)

    def via_triton(k):
        for _ in range(k):
            tuned_kernel[tgrid](x, y, 2.0, n)

    calls, repeat = args.calls, args.repeat
    fns = (raw_launch, by_hand, via_tunekit, via_triton)
    for f in fns:
        f(1000)  # warm
    # The four interleaved, one block of calls each per repeat, so that drift of the machine
    # falls on all of them alike; the added costs are medians of the paired differences.
    samples = {f: [] for f in fns}
    for _ in range(repeat):
        for f in fns:
            samples[f].append(per_call_us(f, calls, 1))
    t_raw, t_hand, t_tk, t_tr = (statistics.median(samples[f]) for f in fns)
    tk_added = statistics.median(a - b for a, b in zip(samples[via_tunekit], samples[by_hand]))
    tr_added = statistics.median(a - b for a, b in zip(samples[via_triton], samples[raw_launch]))
    print(f"== hot path on {torch.cuda.get_device_name()}, median of {repeat} interleaved x "
          f"{calls} calls")
    print(f"  kernel launch with the winner's meta     {t_raw:7.2f} us")
    print(f"  host function, config passed by hand     {t_hand:7.2f} us")
    print(f"  tunekit.autotune host function, resolved {t_tk:7.2f} us  "
          f"(+{tk_added:.2f} us over by hand)")
    print(f"  triton.autotune kernel, resolved         {t_tr:7.2f} us  "
          f"(+{tr_added:.2f} us over the launch)")
    RESULTS["hot_path"] = {"device": torch.cuda.get_device_name(), "launch_us": t_raw,
                           "by_hand_us": t_hand, "tunekit_us": t_tk, "triton_autotune_us": t_tr,
                           "tunekit_added_us": tk_added,
                           "triton_added_us": tr_added, "calls": calls, "repeat": repeat,
                           "torch": torch.__version__, "triton": triton.__version__,
                           "python": sys.version.split()[0]}
    verdict = "met" if tk_added <= 0.5 else "MISSED"
    print(f"  goal (<= 0.5 us added per resolved call): {verdict}")
    RESULTS["hot_path"]["goal_met"] = verdict == "met"
    print("hot-path ok")


# ---------------------------------------------------------------------------------------------
# The FlyDSL seed's offline round trip from Python: one process tunes with TUNEKIT_ALWAYS_TUNE=1
# and writes the artifact; a fresh process with an empty winner cache serves it, measuring
# nothing.

class CountingMeasurer(tunekit.CudaEventMeasurer):
    measured = 0

    def measure(self, run, request):
        CountingMeasurer.measured += 1
        return super().measure(run, request)


def artifact_kernel():
    configs = [{"BLOCK": b, "num_warps": w} for b in (256, 512, 1024, 2048) for w in (4, 8)]

    @tunekit.autotune(configs, key_fn=lambda x, y, alpha: (x.numel(), str(x.dtype)),
                      artifact_name="scale_f32_py", key_names=["n", "dtype"],
                      measurer=CountingMeasurer(),
                      default=lambda x, y, alpha: {"BLOCK": 256, "num_warps": 4})
    def launch(x, y, alpha, *, BLOCK, num_warps):
        scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, alpha, x.numel(), BLOCK=BLOCK,
                                                       num_warps=num_warps)

    return launch


def section_artifact(args):
    x = torch.randn(1 << 22, device="cuda")
    y = torch.empty_like(x)
    launch = artifact_kernel()
    launch(x, y, 2.0)
    torch.cuda.synchronize()
    check(torch.allclose(y, 2.0 * x), "launch(x, y, 2.0) == 2x")
    source, winner = launch.last_source(), launch.best_config(x, y, 2.0)
    art = os.environ.get("TUNEKIT_ARTIFACT_DIR", "")
    files = sorted(os.listdir(art)) if art and os.path.isdir(art) else []
    phase = "write" if os.environ.get("TUNEKIT_ALWAYS_TUNE") == "1" else "serve"
    print(f"== artifact {phase}: source {source}, winner {winner}, measured "
          f"{CountingMeasurer.measured}, artifacts {files}")
    if phase == "write":
        check(source == "search" and CountingMeasurer.measured == 8,
              "forced tuning measured all 8 configs")
        check(len(files) == 1 and files[0].startswith("scale_f32_py-"), "wrote one artifact")
    else:
        check(source == "artifact", "a fresh process is served the artifact (source artifact)")
        check(CountingMeasurer.measured == 0, "and measures nothing")
    RESULTS[f"artifact_{phase}"] = {"source": source, "winner": winner, "files": files,
                                    "measured": CountingMeasurer.measured,
                                    "device": torch.cuda.get_device_name()}
    print(f"artifact-{phase} ok")


# ---------------------------------------------------------------------------------------------
# A kernel that accumulates into its output: with reset_to_zero the output after the first
# (tuning) call equals one launch of the winner; without it, every candidate run piles up.

@triton.jit
def accumulate_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    acc = tl.load(acc_ptr + offsets, mask=mask)
    tl.store(acc_ptr + offsets, acc + x, mask=mask)


def section_inplace(args):
    configs = [{"BLOCK": b} for b in (256, 512, 1024)]

    def accumulate(x, acc, *, BLOCK):
        accumulate_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, acc, x.numel(), BLOCK=BLOCK)

    x = torch.randn(1 << 20, device="cuda")
    results = {}
    for reset in (True, False):
        tuned = tunekit.autotune(configs, key_fn=lambda x, acc: (x.numel(),),
                                 name=f"accumulate_{reset}",
                                 reset_to_zero=["acc"] if reset else ())(accumulate)
        acc = torch.zeros_like(x)
        tuned(x, acc)
        torch.cuda.synchronize()
        results[reset] = float((acc - x).abs().max())
    print(f"== in place: max |acc - x| after the first call: with reset_to_zero "
          f"{results[True]:.3g}, without {results[False]:.3g}")
    check(results[True] == 0.0, "with reset_to_zero the output is one launch's")
    check(results[False] > 1.0, "without it the candidates' runs pile up in the output")
    RESULTS["inplace"] = {"with_reset_max_err": results[True],
                          "without_reset_max_err": results[False]}
    print("inplace ok")


# ---------------------------------------------------------------------------------------------

def section_dist(args):
    """Under torchrun with 2 processes: every rank measures its own times; the MAX over the
    group picks one winner everywhere. NCCL group (the default), a gloo subgroup, and
    contextual_autotune(is_dist=True)."""
    import torch.distributed as dist

    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    x = torch.randn(1 << 22, device="cuda")
    # Rank-dependent slowness: rank 1 makes BLOCK=256 slow, so the MAX must avoid it even where
    # rank 0 alone would pick it.
    space = [{"BLOCK": b} for b in (256, 1024)]

    def key_fn(x, alpha, group_name):
        return (x.numel(), str(x.dtype), group_name)

    @tunekit.autotune(space, key_fn=key_fn)
    def scale(x, alpha, group_name, BLOCK):
        y = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, alpha, x.numel(), BLOCK=BLOCK)
        if rank == 1 and BLOCK == 256:
            torch.cuda._sleep(2_000_000)  # ~1 ms of device time on this rank only
        return y

    results = {}
    for name, pg in (("nccl-world", None), ("nccl-group", dist.new_group([0, 1])),
                     ("gloo-group", dist.new_group([0, 1], backend="gloo"))):
        y = scale(x, 2.0, name, autotune_pg=pg, autotune_verbose=(rank == 0))
        torch.cuda.synchronize()
        check(torch.allclose(y, 2.0 * x), f"rank {rank} {name}: result")
        mine = scale.best_config(x, 2.0, name)["BLOCK"]
        everyone = [None] * world
        dist.all_gather_object(everyone, mine)
        check(len(set(everyone)) == 1, f"rank {rank} {name}: all ranks agree on BLOCK={mine}")
        check(mine == 1024, f"rank {rank} {name}: the worst rank's time decided")
        results[name] = mine

    ctx_kernel = triton.autotune(
        configs=[triton.Config({"BLOCK": 512}, num_warps=w) for w in (4, 8)], key=["n"])(
            scale_kernel)

    @tunekit.contextual_autotune(is_dist=True, n_repeat=3, n_warmup=2)
    def step(x, alpha):
        y = torch.empty_like(x)
        ctx_kernel[(triton.cdiv(x.numel(), 512),)](x, y, alpha, x.numel())
        dist.all_reduce(y)  # the surrounding communication the kernel is tuned next to
        return y

    y = step(x, 1.0)
    expected = x.clone()  # each rank drew its own x: the result is their sum, not world * x
    dist.all_reduce(expected)
    torch.cuda.synchronize()
    check(torch.equal(y, expected), f"rank {rank} contextual: result")
    check(len(ctx_kernel.cache) == 1, f"rank {rank} contextual: one winner in the cache")
    chosen = str(next(iter(ctx_kernel.cache.values())))
    everyone = [None] * world
    dist.all_gather_object(everyone, chosen)
    check(len(set(everyone)) == 1, f"rank {rank} contextual: all ranks chose {chosen}")
    RESULTS["dist"] = {"world": world, "winners": results, "contextual": chosen}
    dist.barrier()
    dist.destroy_process_group()
    print(f"rank {rank} dist ok", flush=True)


def section_dist_contextual(args):
    """Under torchrun with 2 processes: contextual_autotune around a triton.autotune kernel and a
    dist.all_reduce of its output, beside the same step undecorated and with is_dist=False. Prints
    what each variant returned (every run of the outer function is checked) instead of stopping
    at the first failure."""
    import torch.distributed as dist

    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    x = torch.randn(1 << 22, device="cuda")
    sums = [None] * world
    dist.all_gather_object(sums, float(x.double().sum()))
    expected = x.clone()
    dist.all_reduce(expected)
    torch.cuda.synchronize()
    print(f"rank {rank}: x sums over the ranks {sums}", flush=True)

    def variant(name, decorate, reduce):
        kernel = triton.autotune(
            configs=[triton.Config({"BLOCK": 512}, num_warps=w) for w in (4, 8)], key=["n"])(
                scale_kernel)
        runs = []

        def step(x, alpha):
            y = torch.empty_like(x)
            kernel[(triton.cdiv(x.numel(), 512),)](x, y, alpha, x.numel())
            if reduce:
                dist.all_reduce(y)
            torch.cuda.synchronize()
            want = expected if reduce else x
            runs.append(float((y - want).abs().max()))
            return y

        fn = decorate(step) if decorate else step
        y = fn(x, 1.0)
        torch.cuda.synchronize()
        want = expected if reduce else x
        err = float((y - want).abs().max())
        ok = err == 0.0
        print(f"rank {rank} {name}: {'ok' if ok else 'WRONG'} (max error {err:.3g}; "
              f"{len(runs)} runs, errors {[round(e, 3) for e in runs]}; cache "
              f"{[str(c) for c in kernel.cache.values()]})", flush=True)
        RESULTS.setdefault("dist_contextual", {})[name] = {"ok": ok, "error": err,
                                                           "runs": runs}
        dist.barrier()

    ctx = tunekit.contextual_autotune
    variant("plain + all_reduce", None, True)
    variant("contextual local + all_reduce", ctx(is_dist=False, n_repeat=3, n_warmup=2), True)
    variant("contextual dist, no all_reduce", ctx(is_dist=True, n_repeat=3, n_warmup=2), False)
    variant("contextual dist + all_reduce", ctx(is_dist=True, n_repeat=3, n_warmup=2), True)
    dist.barrier()
    dist.destroy_process_group()
    wrong = [name for name, r in RESULTS["dist_contextual"].items() if not r["ok"]]
    check(not wrong, f"rank {rank}: every variant returned the right result (wrong: {wrong})")


def main():
    p = argparse.ArgumentParser(description="tunekit for Python on a GPU")
    p.add_argument("section", choices=["examples", "hot-path", "artifact", "inplace", "dist",
                                       "dist-contextual", "all"])
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--out", help="append results as a JSON line to this file")
    args = p.parse_args()
    os.environ.setdefault("TUNEKIT_CACHE_DIR", tempfile.mkdtemp(prefix="tunekit-gpu-"))
    print(f"tunekit {tunekit.__version__}, torch {torch.__version__}, triton "
          f"{triton.__version__}, cache {os.environ['TUNEKIT_CACHE_DIR']}", flush=True)
    if args.section in ("examples", "all"):
        section_examples(args)
    if args.section in ("hot-path", "all"):
        section_hot_path(args)
    if args.section == "artifact":
        section_artifact(args)
    if args.section in ("inplace", "all"):
        section_inplace(args)
    if args.section == "dist":
        section_dist(args)
    if args.section == "dist-contextual":
        section_dist_contextual(args)
    if args.out and (not args.section.startswith("dist") or int(os.environ.get("RANK", "0")) == 0):
        with open(args.out, "a") as f:
            f.write(json.dumps({"section": args.section, **RESULTS}) + "\n")


if __name__ == "__main__":
    main()
