"""Host time of a resolved launch on a GPU: a plain ``kernel[grid](...)`` launch with the winner's
meta-parameters (the same grid function), the same kernel under ``triton.autotune`` and under
``tunekit.triton.autotune`` (both tuned first). The three are interleaved block by block and the added costs are medians of
the paired differences, so the machine's drift falls on all three alike.

    python bench/triton/hot_path.py [--calls N] [--repeat R] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

import tunekit
import tunekit.triton as tt


@triton.jit
def scale_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, alpha * tl.load(x_ptr + offsets, mask=mask), mask=mask)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--out")
    a = p.parse_args()
    n = 1 << 12
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    configs = [triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 512, 1024) for w in (4, 8)]
    theirs = triton.autotune(configs=configs, key=["n"])(scale_kernel)
    ours = tt.autotune(configs=configs, key=["n"])(scale_kernel)
    grid = lambda m: (triton.cdiv(n, m["BLOCK"]),)  # noqa: E731
    theirs[grid](x, y, 2.0, n)
    ours[grid](x, y, 2.0, n)
    torch.cuda.synchronize()
    meta = ours.best_config.all_kwargs()
    plain_grid = (triton.cdiv(n, meta["BLOCK"]),)

    def plain(k):  # the same grid function as the autotuned launches
        for _ in range(k):
            scale_kernel[grid](x, y, 2.0, n, **meta)

    def plain_tuple_grid(k):  # for reference: a grid computed beforehand
        for _ in range(k):
            scale_kernel[plain_grid](x, y, 2.0, n, **meta)

    def via_triton(k):
        for _ in range(k):
            theirs[grid](x, y, 2.0, n)

    def via_tunekit(k):
        for _ in range(k):
            ours[grid](x, y, 2.0, n)

    fns = (plain, via_triton, via_tunekit, plain_tuple_grid)
    for f in fns:
        f(1000)
    samples = {f: [] for f in fns}
    for _ in range(a.repeat):
        for f in fns:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            f(a.calls)
            samples[f].append((time.perf_counter() - t0) / a.calls * 1e6)
    torch.cuda.synchronize()
    med = {f.__name__: statistics.median(samples[f]) for f in fns}
    added = {name: statistics.median(b - c for b, c in zip(samples[f], samples[plain]))
             for name, f in (("triton", via_triton), ("tunekit", via_tunekit))}
    print(f"== resolved launch on {torch.cuda.get_device_name()}, median of {a.repeat} "
          f"interleaved x {a.calls} launches")
    print(f"  plain kernel[grid](...) launch     {med['plain']:7.2f} us  (a tuple grid: "
          f"{med['plain_tuple_grid']:.2f} us)")
    print(f"  triton.autotune                    {med['via_triton']:7.2f} us  "
          f"(+{added['triton']:.2f} us)")
    print(f"  tunekit.triton.autotune            {med['via_tunekit']:7.2f} us  "
          f"(+{added['tunekit']:.2f} us)")
    if a.out:
        with open(a.out, "a") as f:
            f.write(json.dumps({"device": torch.cuda.get_device_name(), "per_call_us": med,
                                "added_us": added, "calls": a.calls, "repeat": a.repeat,
                                "triton": triton.__version__, "torch": torch.__version__,
                                "tunekit": tunekit.__version__,
                                "python": sys.version.split()[0]}) + "\n")


if __name__ == "__main__":
    main()
