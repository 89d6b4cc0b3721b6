"""The compile pool of tunekit.triton on a GPU: the wall time to tune one key of the bf16 matmul
(bench/triton/matmul_campaign.py's kernel) over a fixed sample of its space, with candidates
compiled at their first launch (``compile_workers=0``, as Triton does) and compiled ahead by the
pool, each in a fresh Triton cache and a fresh kernel object; the two must pick the same kind of
winner (their TFLOP/s are printed) and the pool must have compiled every candidate.

    python bench/triton/compile_pool.py [--configs 48] [--workers N] [--size 2048] [--out F]

Run it from outside the source tree so that the installed tunekit is imported (peer_tests.sh
does). Prints one JSON line per setting (and appends them to --out).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_campaign as mc  # noqa: E402

import tunekit.triton as tt  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--configs", type=int, default=48)
    p.add_argument("--workers", type=int, default=mc.cpu_count())
    p.add_argument("--size", type=int, default=2048)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    n = a.size
    torch.manual_seed(0)
    A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    C = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    pick = mc.subset_indices(len(mc.space()), a.configs, seed=1)
    base = tempfile.mkdtemp(prefix="tk-pool-")
    mc.fresh_triton_cache(base, "warm")  # CUDA, cuBLAS and Triton's driver started untimed
    torch.matmul(A, B)
    torch.cuda.synchronize()
    lines = []
    for workers in (0, a.workers):
        mc.fresh_triton_cache(base, f"w{workers}")
        os.environ["TUNEKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="tk-cache-", dir=base)
        space = mc.space()
        t = tt.autotune(configs=[space[i] for i in pick], key=["M", "N", "K"],
                        compile_workers=workers, name="mm_pool")(mc.fresh_kernel())

        def launch() -> None:
            t[lambda meta: mc.grid(meta, n, n)](A, B, C, n, n, n, A.stride(0), A.stride(1),
                                                B.stride(0), B.stride(1), C.stride(0),
                                                C.stride(1))

        start = time.perf_counter()
        launch()
        torch.cuda.synchronize()
        wall = time.perf_counter() - start
        kw = t.best_config.all_kwargs()
        ms = triton.testing.do_bench(launch, warmup=25, rep=100)
        timings = t.configs_timings
        line = {"workers": workers, "configs": len(pick), "size": n, "tune_s": round(wall, 2),
                "measured": len(timings),
                "failed": sum(1 for v in timings.values() if v[0] == float("inf")),
                "compiled_by_pool": t._pool.compiled if t._pool is not None else 0,
                "pool_disabled": t._pool.disabled if t._pool is not None else None,
                "winner": kw, "tflops": round(2 * n ** 3 / (ms * 1e-3) / 1e12, 1),
                "source": t.last_source()}
        print(json.dumps(line), flush=True)
        lines.append(line)
    if a.out:
        with open(a.out, "a") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
    serial, pooled = lines
    print(f"compile pool: {serial['tune_s']} s with candidates compiled at their launch, "
          f"{pooled['tune_s']} s with {a.workers} workers "
          f"({serial['tune_s'] / max(pooled['tune_s'], 1e-9):.2f}x); the pool compiled "
          f"{pooled['compiled_by_pool']} of {pooled['measured']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
