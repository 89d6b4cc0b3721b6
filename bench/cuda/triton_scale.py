"""The Triton side of the scale benchmark: the same kernel (y = alpha * x) and the same config space
(BLOCK x threads per block, threads = 32 * num_warps), tuned by Triton's own autotuner at the same
size. Reports tuning wall time per candidate (first with compilation, then with every config
already compiled, which is what tunekit's figure compares to), the winner, its time and bandwidth,
and the host time per call of the autotuned launch against a direct launch of the winner.

    python3 triton_scale.py --out triton_scale.json [--n 67108864]
"""

import argparse
import json
import os
import statistics
import tempfile
import time

# A fresh compilation cache, so that the first tuning includes compilation as a user's first run
# would.
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tunekit-triton-cache-"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# The C++ benchmark's space: BLOCK in {512..8192}, threads in {64..512}, BLOCK / (4 * threads) in
# {1, 2, 4, 8, 16} (scale_config_supported in examples/cuda/scale_kernel.cu).
SPACE = [
    (block, threads)
    for block in (512, 1024, 2048, 4096, 8192)
    for threads in (64, 128, 256, 512)
    if block % (4 * threads) == 0 and block // (4 * threads) in (1, 2, 4, 8, 16)
]


@triton.jit
def scale_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, alpha * x, mask=mask)


def autotuned():
    configs = [triton.Config({"BLOCK": b}, num_warps=t // 32) for b, t in SPACE]
    return triton.autotune(configs=configs, key=["n"])(scale_kernel)


def grid(n):
    return lambda meta: (triton.cdiv(n, meta["BLOCK"]),)


def tune(x, y, alpha, n):
    kernel = autotuned()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    kernel[grid(n)](x, y, alpha, n)
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1e3
    best = kernel.best_config
    return kernel, wall_ms, {"BLOCK": best.kwargs["BLOCK"], "threads": 32 * best.num_warps}


def host_us_per_call(fns, calls=1000, rounds=21):
    """Host time per call of each function in `fns`, in batches of `calls` that interleave (the
    first function of a round moves along each round); the median batch of each, in us."""
    samples = [[] for _ in fns]
    for r in range(rounds):
        for slot in range(len(fns)):
            which = (slot + r) % len(fns)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                fns[which]()
            samples[which].append((time.perf_counter() - t0) / calls * 1e6)
            torch.cuda.synchronize()
    return [statistics.median(s) for s in samples]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1 << 26)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    n = args.n
    alpha = 2.5
    x = torch.rand(n, device="cuda", dtype=torch.float32) * 2 - 1
    y = torch.empty_like(x)
    torch.cuda.synchronize()

    result = {
        "n": n,
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "space": [{"BLOCK": b, "threads": t} for b, t in SPACE],
        "candidates": len(SPACE),
    }

    # First tuning: compiles every config, then benchmarks it.
    _, cold_ms, cold_winner = tune(x, y, alpha, n)
    # Second tuning in a new autotuner: every config is compiled already; this is the cost of the
    # autotuner's measurements alone.
    kernel, warm_ms, warm_winner = tune(x, y, alpha, n)
    result["tuning_with_compile"] = {
        "wall_ms": cold_ms,
        "per_candidate_ms": cold_ms / len(SPACE),
        "winner": cold_winner,
    }
    result["tuning"] = {
        "wall_ms": warm_ms,
        "per_candidate_ms": warm_ms / len(SPACE),
        "winner": warm_winner,
    }
    torch.testing.assert_close(y, alpha * x)

    g = grid(n)
    winner_ms = triton.testing.do_bench(
        lambda: kernel[g](x, y, alpha, n), warmup=25, rep=200, return_mode="median")
    copy_ms = triton.testing.do_bench(
        lambda: y.copy_(x), warmup=25, rep=200, return_mode="median")
    gbps = lambda ms: 2 * 4 * n / (ms * 1e-3) / 1e9  # noqa: E731
    result["winner"] = {"median_ms": winner_ms, "gbps": gbps(winner_ms)}
    result["torch_copy"] = {"median_ms": copy_ms, "gbps": gbps(copy_ms)}

    # Hot path: a small launch whose key is resolved, against a direct launch of the same config.
    small = 4096
    xs = x[:small].contiguous()
    ys = torch.empty_like(xs)
    small_kernel, _, small_winner = tune(xs, ys, alpha, small)
    gs = grid(small)
    block, warps = small_winner["BLOCK"], small_winner["threads"] // 32
    tuned_us, direct_us = host_us_per_call([
        lambda: small_kernel[gs](xs, ys, alpha, small),
        lambda: scale_kernel[gs](xs, ys, alpha, small, BLOCK=block, num_warps=warps),
    ])
    result["hot_path"] = {
        "n": small,
        "tuned_us": tuned_us,
        "direct_us": direct_us,
        "added_us": tuned_us - direct_us,
    }

    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
