"""Transfer between shapes on one GPU with the Triton drop-in: the bf16 matmul of
matmul_campaign.py (2,400 configs) tuned for a source shape with a budget of 200, then each target
shape tuned with a small budget, cold (an empty winner cache) and with ``transfer_from_cache=True``
(a winner cache holding the source shape's entry: this hardware, another key), over several seeds.
Every tuning starts in a fresh Triton cache with a fresh JITFunction. Each distinct winner is then
timed by ``triton.testing.do_bench`` (median of 3, warmup 25 ms, rep 100 ms) beside
``torch.matmul`` (cuBLAS), after a check against ``torch.matmul`` of fp32 copies.

    python bench/triton/transfer_shapes.py --out DIR [--source 4096x4096x4096]
        [--targets 2048x14336x4096,128x14336x4096,4096x4096x8192] [--budget 25] [--seeds 3]
        [--compile-workers N]

Writes DIR/transfer.jsonl (one line per tuning: shape, mode, seed, wall s, measured, the search's
transferred count and stop, the winner and its TFLOP/s) and DIR/transfer.md (the table, printed
last). Run it from outside the source tree after installing tunekit (bench/triton/install.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_campaign as mc  # noqa: E402  (the kernel, its space and the Triton cache helper)


def tune(tt: Any, shape: tuple[int, int, int], budget: int, seed: int, transfer: bool,
         cache_dir: str, base: str, workers: int, operands: dict[str, Any]) -> dict[str, Any]:
    """One tuning of `shape` in the winner cache `cache_dir`: its first launch timed."""
    import torch

    M, N, K = shape
    A, B = operands["A"], operands["B"]
    os.environ["TUNEKIT_CACHE_DIR"] = cache_dir
    before = mc.entry_mtimes(cache_dir)
    mc.fresh_triton_cache(base, "t")
    kernel = mc.fresh_kernel()
    tuned = tt.autotune(configs=mc.space(), key=["M", "N", "K"], budget=budget, seed=seed,
                        name="mm_bf16", transfer_from_cache=transfer,
                        compile_workers=workers)(kernel)
    C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tuned[lambda meta: mc.grid(meta, M, N)](A, B, C, M, N, K, A.stride(0), A.stride(1),
                                            B.stride(0), B.stride(1), C.stride(0), C.stride(1))
    torch.cuda.synchronize()
    row = {"wall_s": time.perf_counter() - t0, "measured": len(tuned.configs_timings),
           "source": tuned.last_source(), "best_config": tuned.best_config.all_kwargs()}
    rec = mc.search_record(cache_dir, before)
    row["transferred"] = rec.get("transferred") if rec else None
    row["stop"] = rec.get("stop") if rec else None
    return row


def time_configs(shape: tuple[int, int, int], configs: list[dict[str, Any]],
                 operands: dict[str, Any]) -> tuple[dict[str, float], float]:
    """TFLOP/s of each config (by its JSON) and of cuBLAS; a config whose result is wrong gets 0."""
    import torch
    from triton.testing import do_bench

    M, N, K = shape
    A, B = operands["A"], operands["B"]
    flops = 2.0 * M * N * K
    kernel = mc.fresh_kernel()
    g = lambda meta: mc.grid(meta, M, N)  # noqa: E731
    torch.backends.cuda.matmul.allow_tf32 = False
    ref = torch.matmul(A.float(), B.float())
    out: dict[str, float] = {}
    for kw in configs:
        C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)

        def launch(C: Any = C, kw: dict[str, Any] = kw) -> None:
            kernel[g](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                      C.stride(0), C.stride(1), **kw)

        launch()
        torch.cuda.synchronize()
        try:
            torch.testing.assert_close(C.float(), ref, atol=1e-1, rtol=2e-2)
        except AssertionError:
            out[json.dumps(kw, sort_keys=True)] = 0.0
            continue
        ms = statistics.median(float(do_bench(launch, warmup=25, rep=100, return_mode="median"))
                               for _ in range(3))
        out[json.dumps(kw, sort_keys=True)] = flops / (ms * 1e-3) / 1e12
    ms = statistics.median(float(do_bench(lambda: torch.matmul(A, B), warmup=25, rep=100,
                                          return_mode="median")) for _ in range(3))
    return out, flops / (ms * 1e-3) / 1e12


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", default="4096x4096x4096")
    p.add_argument("--targets", default="2048x14336x4096,128x14336x4096,4096x4096x8192")
    p.add_argument("--source-budget", type=int, default=200)
    p.add_argument("--budget", type=int, default=25)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--compile-workers", type=int, default=mc.cpu_count())
    p.add_argument("--out", default="transfer-out")
    a = p.parse_args()
    import torch
    import tunekit.triton as tt

    os.makedirs(a.out, exist_ok=True)
    base = tempfile.mkdtemp(prefix="tunekit-transfer-shapes-")
    gen = torch.Generator(device="cuda")

    def operands(shape: tuple[int, int, int]) -> dict[str, Any]:
        M, N, K = shape
        gen.manual_seed(0)
        return {"A": torch.randn(M, K, device="cuda", dtype=torch.bfloat16, generator=gen),
                "B": torch.randn(K, N, device="cuda", dtype=torch.bfloat16, generator=gen)}

    rows: list[dict[str, Any]] = []
    source = mc.parse_shapes(a.source)[0]
    source_cache = tempfile.mkdtemp(prefix="source-cache-", dir=base)
    r = tune(tt, source, a.source_budget, 0, False, source_cache, base, a.compile_workers,
             operands(source))
    r.update(shape=list(source), mode="source", seed=0, budget=a.source_budget)
    print(f"source {mc.shape_name(source)}: {r['wall_s']:.1f} s, {r['measured']} measured, "
          f"best {r['best_config']}", flush=True)
    rows.append(r)
    for shape in mc.parse_shapes(a.targets):
        ops = operands(shape)
        runs = []
        for seed in range(a.seeds):
            for mode in ("cold", "transfer"):
                cache_dir = os.path.join(base, f"{mc.shape_name(shape)}-{mode}-{seed}")
                if mode == "transfer":
                    shutil.copytree(source_cache, cache_dir)
                else:
                    os.makedirs(cache_dir)
                r = tune(tt, shape, a.budget, seed, mode == "transfer", cache_dir, base,
                         a.compile_workers, ops)
                r.update(shape=list(shape), mode=mode, seed=seed, budget=a.budget)
                print(f"{mc.shape_name(shape)} {mode} seed {seed}: {r['wall_s']:.1f} s, "
                      f"{r['measured']} measured, {r['transferred']} transferred, "
                      f"best {r['best_config']}", flush=True)
                runs.append(r)
        distinct = {json.dumps(r["best_config"], sort_keys=True): r["best_config"] for r in runs}
        tflops, cublas = time_configs(shape, list(distinct.values()), ops)
        for r in runs:
            r["tflops"] = tflops[json.dumps(r["best_config"], sort_keys=True)]
            r["cublas_tflops"] = cublas
        rows.extend(runs)
    with open(os.path.join(a.out, "transfer.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    lines = ["| shape | mode | tune s (mean) | TFLOP/s per seed | mean | of cuBLAS |",
             "|---|---|---|---|---|---|"]
    for shape in mc.parse_shapes(a.targets):
        for mode in ("cold", "transfer"):
            rs = [r for r in rows if r["shape"] == list(shape) and r["mode"] == mode]
            if not rs:
                continue
            per_seed = ", ".join(f"{r['tflops']:.1f}" for r in rs)
            mean = statistics.mean(r["tflops"] for r in rs)
            lines.append(f"| {mc.shape_name(shape)} | {mode} (budget {a.budget}) "
                         f"| {statistics.mean(r['wall_s'] for r in rs):.1f} | {per_seed} "
                         f"| {mean:.1f} | {100 * mean / rs[0]['cublas_tflops']:.1f}% |")
    table = "\n".join(lines)
    with open(os.path.join(a.out, "transfer.md"), "w") as f:
        f.write(table + "\n")
    print(table)
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
