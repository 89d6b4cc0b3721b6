"""A campaign over M for one matmul shape, written as a vLLM-style per-shape file, then served by
the nearest M with no tuning (docs/shapes.md), on a GPU.

1. ``tunekit.campaign`` tunes bench/triton/matmul_campaign.py's bf16 matmul (2,400 configs,
   ``budget`` per key, the compile pool on) for M in {1, 2, 4, ..., 4096} against an N x K
   weight. It then writes ``N=..,K=..,device_name=...json``, keyed by M.
2. A fresh autotuner with an empty winner cache and ``on_miss="nearest"`` loads the file. It
   launches M values that were not tuned (3, 100, 1000, 3000); none of them may measure
   anything.
3. For those M, the served config is timed against a config tuned for that exact M with the same
   budget (the regret of serving by the nearest M), and against cuBLAS.

    python bench/triton/shapes_campaign.py --out DIR [--n 14336] [--k 4096] [--budget 40]

Writes DIR/shapes.jsonl (one line per M) and DIR/per_shape.json (the file), and prints a table
last.
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

import tunekit  # noqa: E402
import tunekit.triton as tt  # noqa: E402


def tensors(m: int, n: int, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    return a, b, torch.empty(m, n, device="cuda", dtype=torch.bfloat16)


def launcher(t, a, b, c):  # type: ignore[no-untyped-def]
    m, k = a.shape
    n = b.shape[1]

    def launch() -> None:
        t[lambda meta: mc.grid(meta, m, n)](a, b, c, m, n, k, a.stride(0), a.stride(1),
                                            b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    return launch


def fresh_tuner(budget: int, **kw):  # type: ignore[no-untyped-def]
    return tt.autotune(configs=mc.space(), key=["M", "N", "K"], budget=budget, seed=0,
                       name="mm_shapes", **kw)(mc.fresh_kernel())


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--n", type=int, default=14336)
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--budget", type=int, default=40)
    p.add_argument("--max-m", type=int, default=4096)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    base = tempfile.mkdtemp(prefix="tk-shapes-")
    mc.fresh_triton_cache(base, "campaign")
    os.environ["TUNEKIT_CACHE_DIR"] = os.path.join(base, "cache")
    torch.manual_seed(0)
    ms = [1 << i for i in range(a.max_m.bit_length()) if (1 << i) <= a.max_m]
    n, k = a.n, a.k

    # 1. The campaign.
    t = fresh_tuner(a.budget)
    data = {m: tensors(m, n, k) for m in ms}
    calls = [(x, y, z, m, n, k, x.stride(0), x.stride(1), y.stride(0), y.stride(1), z.stride(0),
              z.stride(1)) for m, (x, y, z) in data.items()]
    start = time.perf_counter()
    # Triton hands the grid function the launch's arguments: one grid serves every M.
    r = tunekit.campaign(t, calls, grid=lambda meta: mc.grid(meta, meta["M"], meta["N"]))
    per_call = [r.sources[i] for i in range(len(ms))]
    torch.cuda.synchronize()
    campaign_s = time.perf_counter() - start
    device = torch.cuda.get_device_name().replace(" ", "_")
    path = os.path.join(a.out, "per_shape.json")
    written = tunekit.write_per_shape_json(t, path, by="M")
    print(f"campaign: {len(ms)} values of M in {campaign_s:.1f} s ({per_call.count('search')} "
          f"searched), written to N={n},K={k},device_name={device}.json: {len(written)} entries",
          flush=True)

    # 2. Served by the nearest M from the file alone.
    os.environ["TUNEKIT_CACHE_DIR"] = os.path.join(base, "empty")
    served = fresh_tuner(a.budget, on_miss="nearest")
    # The autotuner's key: the key=[...] values, then str(dtype) of each tensor argument.
    dtypes = ("torch.bfloat16",) * 3
    loaded = tunekit.load_per_shape_json(served, path, key=lambda m: (m, n, k) + dtypes)
    lines = []
    for m in (3, 100, 1000, 3000):
        x, y, z = tensors(m, n, k)
        t0 = time.perf_counter()
        launcher(served, x, y, z)()
        torch.cuda.synchronize()
        serve_s = time.perf_counter() - t0
        src, cfg = served.last_source(), served.best_config
        measured = len(served.configs_timings) if served.last_source() == "search" else 0
        ms_served = triton.testing.do_bench(launcher(served, x, y, z), warmup=25, rep=200)
        # The same M tuned exactly (fresh cache, same budget).
        os.environ["TUNEKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="exact-", dir=base)
        exact = fresh_tuner(a.budget)
        t1 = time.perf_counter()
        launcher(exact, x, y, z)()
        torch.cuda.synchronize()
        exact_s = time.perf_counter() - t1
        ms_exact = triton.testing.do_bench(launcher(exact, x, y, z), warmup=25, rep=200)
        ms_cublas = triton.testing.do_bench(lambda: torch.matmul(x, y, out=z), warmup=25, rep=200)
        flop = 2.0 * m * n * k
        line = {"M": m, "N": n, "K": k, "source": src, "measured": measured,
                "serve_s": round(serve_s, 3), "served": cfg.all_kwargs(),
                "exact": exact.best_config.all_kwargs(), "exact_tune_s": round(exact_s, 1),
                "ms_served": ms_served, "ms_exact": ms_exact, "ms_cublas": ms_cublas,
                "tflops_served": flop / ms_served / 1e9, "tflops_exact": flop / ms_exact / 1e9,
                "tflops_cublas": flop / ms_cublas / 1e9,
                "regret": ms_served / ms_exact - 1.0}
        lines.append(line)
        print(json.dumps(line), flush=True)
    with open(os.path.join(a.out, "shapes.jsonl"), "w") as f:
        f.write(json.dumps({"campaign_s": campaign_s, "Ms": ms, "budget": a.budget,
                            "sources": per_call, "loaded": loaded, "device": device}) + "\n")
        for line in lines:
            f.write(json.dumps(line) + "\n")
    print(f"\ncampaign over M = {ms[0]}..{ms[-1]} ({len(ms)} keys, budget {a.budget} each): "
          f"{campaign_s:.1f} s; served from the file: {loaded} winners")
    print(f"{'M':>6} {'source':>8} {'measured':>8} {'served TFLOP/s':>15} "
          f"{'exact TFLOP/s':>14} {'regret':>7} {'cuBLAS':>8} {'exact tune s':>12}")
    for x in lines:
        print(f"{x['M']:>6} {x['source']:>8} {x['measured']:>8} {x['tflops_served']:>15.1f} "
              f"{x['tflops_exact']:>14.1f} {x['regret']:>+7.1%} {x['tflops_cublas']:>8.1f} "
              f"{x['exact_tune_s']:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
