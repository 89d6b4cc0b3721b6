"""Triton's cache_results files taken as measurements by tunekit.triton, on a GPU.

Three fresh processes share one TRITON_CACHE_DIR:

1. ``triton``: ``@triton.autotune(..., cache_results=True)`` tunes a softmax-like row kernel for
   several row lengths and writes its ``*.autotune.json`` files; its picks are printed.
2. ``tunekit``: the same kernel under ``@tunekit.triton.autotune(..., cache_results=True)`` (only
   the import changed) with an empty winner cache: every key tunes, takes the file Triton would
   have read, and measures nothing (a counting ``do_bench`` says so); its picks must be Triton's.
3. ``import``: without ``cache_results``, ``import_cache_results(TRITON_CACHE_DIR)`` takes the
   files of the folder, with one more config in the space: only that config is measured per key.

    python bench/triton/cache_results.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROWS = 4096
LENGTHS = [1024, 2048, 4096, 8192]
BLOCKS = [1024, 2048, 4096, 8192]
WARPS = [2, 4, 8]


def kernel_module(mode: str):
    import torch
    import triton
    import triton.language as tl

    counted = {"benches": 0}

    def do_bench(fn, quantiles=None, **kw):
        counted["benches"] += 1
        return triton.testing.do_bench(fn, quantiles=quantiles, **kw)

    configs = [triton.Config({"BLOCK": b}, num_warps=w) for b in BLOCKS for w in WARPS]
    if mode == "import":
        configs.append(triton.Config({"BLOCK": 8192}, num_warps=16))
    prune = {"early_config_prune": lambda cfgs, nargs, **kw: [
        c for c in cfgs if c.kwargs["BLOCK"] >= nargs["N"]]}
    if mode == "triton":
        deco = triton.autotune(configs=configs, key=["N"], cache_results=True,
                               prune_configs_by=prune)
    else:
        import tunekit.triton as tt
        deco = tt.autotune(configs=configs, key=["N"], cache_results=(mode == "tunekit"),
                           prune_configs_by=prune, do_bench=do_bench)

    @deco
    @triton.jit
    def row_scale(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < N
        x = tl.load(x_ptr + row * N + offs, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(y_ptr + row * N + offs, e / tl.sum(e, axis=0), mask=mask)

    return torch, row_scale, counted


def run(mode: str) -> dict:
    torch, k, counted = kernel_module(mode)
    if mode == "import":
        taken = k.import_cache_results(os.environ["TRITON_CACHE_DIR"])
    picks, benches, sources = {}, {}, {}
    start = time.time()
    for n in LENGTHS:
        x = torch.randn(ROWS, n, device="cuda", dtype=torch.float32)
        y = torch.empty_like(x)
        before = counted["benches"]
        k[(ROWS,)](x, y, n)
        torch.cuda.synchronize()
        torch.testing.assert_close(y, torch.softmax(x, dim=1))
        c = k.best_config
        picks[n] = [c.kwargs["BLOCK"], c.num_warps]
        benches[n] = counted["benches"] - before
        sources[n] = k.last_source() if hasattr(k, "last_source") else "triton"
    out = {"mode": mode, "picks": picks, "benches": benches, "sources": sources,
           "seconds": time.time() - start}
    if mode == "import":
        out["taken"] = taken
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode")
    a = ap.parse_args()
    if a.mode:
        print(json.dumps(run(a.mode)))
        return 0
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tunekit-cache-results-")
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(work, "triton"))
    results = {}
    for mode in ("triton", "tunekit", "import"):
        env["TUNEKIT_CACHE_DIR"] = os.path.join(work, "tunekit-" + mode)
        p = subprocess.run([sys.executable, __file__, "--out", a.out, "--mode", mode], env=env,
                           capture_output=True, text=True)
        sys.stderr.write(p.stderr[-4000:])
        if p.returncode != 0:
            print(f"{mode}: exit {p.returncode}")
            return 1
        results[mode] = json.loads(p.stdout.strip().splitlines()[-1])
    files = sorted(os.path.relpath(os.path.join(d, f), env["TRITON_CACHE_DIR"])
                   for d, _, fs in os.walk(env["TRITON_CACHE_DIR"]) for f in fs
                   if f.endswith(".autotune.json"))
    results["triton_files"] = files
    with open(os.path.join(a.out, "cache_results.json"), "w") as f:
        json.dump(results, f, indent=1)
    ok = True
    print(f"{len(files)} Triton cache_results files written by process 1")
    print("| N | Triton's pick | tunekit (cache_results=True): pick, benches, source "
          "| import_cache_results + 1 new config: pick, benches |")
    print("| --- | --- | --- | --- |")
    for n in map(str, LENGTHS):
        t, u, i = (results[m] for m in ("triton", "tunekit", "import"))
        same = t["picks"][n] == u["picks"][n]
        ok &= same and u["benches"][n] == 0 and i["benches"][n] == 1
        print(f"| {n} | {t['picks'][n]} | {u['picks'][n]}, {u['benches'][n]}, "
              f"{u['sources'][n]}{'' if same else ' (differs)'} | {i['picks'][n]}, "
              f"{i['benches'][n]} |")
    print(f"import_cache_results took {results['import']['taken']} measurements; "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
