"""Eager against graph timing for microsecond kernels: which config each timing mode picks, and how
fast the picks run inside a captured CUDA graph (the real program's view).

    python bench/measure/graph_timing.py warm                        # compiles every config once
    python bench/measure/graph_timing.py tune --timing eager --out tune-eager-1.json
    python bench/measure/graph_timing.py tune --timing graph --out tune-graph-1.json
    python bench/measure/graph_timing.py compare --out compare.json tune-*.json

Two Triton kernels of a few thousand elements, each over a space of BLOCK x num_warps: an
elementwise ``y = 2x + 1`` over 8192 floats (24 configs) and an RMSNorm of 8 rows of 1024 bf16
(16 configs). ``tune`` tunes both with ``tunekit.autotune(timing=...)`` (the winner cache off, so
every process searches) and writes each pick, every candidate's recorded time and the tuning wall
time. ``compare`` times every config of each space inside one captured CUDA graph of
``--launches`` launches, all configs interleaved round by round (``--rounds``), and prints a table
of each mode's picks against the best config in the graph. bench/measure/graph_timing.sh runs the
whole sequence in fresh processes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time


def fail(msg: str) -> None:
    print(f"graph_timing.py: {msg}", file=sys.stderr, flush=True)
    sys.exit(2)


try:
    import torch
except ImportError as e:  # pragma: no cover - the GPU machine has it
    fail(f"PyTorch is needed ({e})")
try:
    import triton
    import triton.language as tl
except ImportError as e:  # pragma: no cover
    fail(f"Triton is needed ({e})")
if not torch.cuda.is_available():
    fail("no CUDA device is visible to PyTorch")
try:
    import tunekit
except ImportError as e:
    fail(f"tunekit is not installed ({e}); bench/measure/graph_timing.sh installs it from the "
         "tree")


# ---- the kernels -------------------------------------------------------------------------------

@triton.jit
def axpb_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, 2.0 * x + 1.0, mask=mask)


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + offs, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def axpb_launch(args, BLOCK, num_warps):
    x, y = args
    n = x.numel()
    axpb_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=num_warps)


def rmsnorm_launch(args, BLOCK, num_warps):
    x, w, y = args
    rmsnorm_kernel[(x.shape[0],)](x, w, y, x.shape[1], 1e-6, BLOCK=BLOCK, num_warps=num_warps)


def make_args(kernel):
    torch.manual_seed(0)
    if kernel == "axpb":
        x = torch.randn(8192, device="cuda", dtype=torch.float32)
        return (x, torch.empty_like(x))
    x = torch.randn(8, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(1024, device="cuda", dtype=torch.bfloat16)
    return (x, w, torch.empty_like(x))


KERNELS = {
    "axpb": {
        "launch": axpb_launch,
        "space": [{"BLOCK": b, "num_warps": w} for b in (128, 256, 512, 1024, 2048, 4096)
                  for w in (1, 2, 4, 8)],
        "what": "y = 2x + 1, 8192 fp32",
    },
    "rmsnorm": {
        "launch": rmsnorm_launch,
        "space": [{"BLOCK": b, "num_warps": w} for b in (128, 256, 512, 1024)
                  for w in (1, 2, 4, 8)],
        "what": "RMSNorm, 8 x 1024 bf16",
    },
}


def label(cfg):
    return f"BLOCK={cfg['BLOCK']},w={cfg['num_warps']}"


# ---- warm: compile every config (Triton's disk cache), so that tuning walls compare timing -----

def cmd_warm(args):
    t0 = time.perf_counter()
    for name, k in KERNELS.items():
        a = make_args(name)
        for cfg in k["space"]:
            k["launch"](a, **cfg)
    torch.cuda.synchronize()
    print(f"warm: compiled {sum(len(k['space']) for k in KERNELS.values())} configs in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)


# ---- tune: one timing mode, fresh process ------------------------------------------------------

def cmd_tune(args):
    out = {"timing": args.timing, "torch": torch.__version__, "triton": triton.__version__,
           "device": torch.cuda.get_device_name(), "kernels": {}}
    for name, k in KERNELS.items():
        launch = k["launch"]
        space = k["space"]

        def fn(args_, BLOCK, num_warps, _launch=launch):
            _launch(args_, BLOCK, num_warps)

        tuned = tunekit.autotune(space, key_fn=lambda a: tuple(tuple(t.shape) for t in a),
                                 name=f"graph_timing_{name}", timing=args.timing,
                                 use_disk_cache=False)(fn)
        a = make_args(name)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        tuned(a)
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
        pick = tuned.best_config(a)
        text = tuned.autotuner.tuner.last_search()
        record = json.loads(text) if text else {}
        times = {label(c["config"]): c.get("time_ms") for c in record.get("candidates", [])}
        reasons = {label(c["config"]): c.get("reason") for c in record.get("candidates", [])
                   if c.get("status") != "ok"}
        out["kernels"][name] = {"pick": pick, "wall_s": wall, "measurer": record.get("measurer"),
                                "times_ms": times, "failed": reasons}
        print(f"tune {args.timing}: {name}: pick {label(pick)} ({(times.get(label(pick)) or 0) * 1e3:.2f}"
              f" us as timed), tuning {wall * 1e3:.0f} ms, measurer {record.get('measurer')}"
              + (f", {len(reasons)} failed: {reasons}" if reasons else ""), flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


# ---- compare: every config inside one captured graph, interleaved ------------------------------

def in_graph(name, cfgs, launches, rounds, warmup=3):
    """Median microseconds per launch of each config, measured by replays of a graph of
    ``launches`` launches, the configs interleaved in a fresh random order each round."""
    k = KERNELS[name]
    a = make_args(name)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graphs = {}
    with torch.cuda.stream(side):
        for cfg in cfgs:
            k["launch"](a, **cfg)  # compiled and loaded outside the capture
        side.synchronize()
        for cfg in cfgs:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=side):
                for _ in range(launches):
                    k["launch"](a, **cfg)
            graphs[label(cfg)] = g
        for g in graphs.values():
            for _ in range(warmup):
                g.replay()
        samples = {lab: [] for lab in graphs}
        order = list(graphs)
        rng = random.Random(0)
        for _ in range(rounds):
            rng.shuffle(order)
            events = []
            for lab in order:
                s = torch.cuda.Event(enable_timing=True)
                e = torch.cuda.Event(enable_timing=True)
                s.record(side)
                graphs[lab].replay()
                e.record(side)
                events.append((lab, s, e))
            side.synchronize()
            for lab, s, e in events:
                samples[lab].append(s.elapsed_time(e) * 1e3 / launches)
    torch.cuda.current_stream().wait_stream(side)
    for g in graphs.values():
        g.reset()
    return {lab: statistics.median(v) for lab, v in samples.items()}


def eager_alone(name, cfgs, runs=50):
    """Median microseconds of each config launched alone between two events (how eager timing
    sees it), interleaved."""
    k = KERNELS[name]
    a = make_args(name)
    samples = {label(c): [] for c in cfgs}
    for _ in range(runs):
        for cfg in cfgs:
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            k["launch"](a, **cfg)
            e.record()
            e.synchronize()
            samples[label(cfg)].append(s.elapsed_time(e) * 1e3)
    return {lab: statistics.median(v) for lab, v in samples.items()}


def cmd_compare(args):
    tuned = []
    for path in args.tuned:
        try:
            with open(path) as f:
                tuned.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"compare: skipping {path}: {e}", file=sys.stderr)
    if not tuned:
        fail("compare: no tuning result could be read")
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "triton": triton.__version__, "python": platform.python_version(),
              "launches": args.launches, "rounds": args.rounds, "kernels": {}}
    rows = []
    for name, k in KERNELS.items():
        graph_us = in_graph(name, k["space"], args.launches, args.rounds)
        alone_us = eager_alone(name, k["space"])
        best = min(graph_us, key=graph_us.get)
        per_mode = {}
        for mode in ("eager", "graph"):
            runs = [t["kernels"][name] for t in tuned if t.get("timing") == mode
                    and name in t.get("kernels", {})]
            if not runs:
                continue
            picks = [label(r["pick"]) for r in runs]
            walls = [r["wall_s"] for r in runs]
            in_g = [graph_us[p] for p in picks]
            per_mode[mode] = {"picks": picks, "pick_in_graph_us": in_g,
                              "wall_s": walls, "measurer": runs[0].get("measurer")}
            common = max(set(picks), key=picks.count)
            rows.append((k["what"], mode, f"{common} ({picks.count(common)}/{len(picks)})",
                         statistics.median(in_g), max(in_g),
                         100.0 * (statistics.median(in_g) / graph_us[best] - 1.0),
                         statistics.median(walls)))
        result["kernels"][name] = {"in_graph_us": graph_us, "eager_alone_us": alone_us,
                                   "best_in_graph": best, "modes": per_mode}
        print(f"\n{name} ({k['what']}): per launch, us (in a graph of {args.launches} / launched "
              "alone between events)")
        for cfg in sorted(k["space"], key=lambda c: graph_us[label(c)]):
            lab = label(cfg)
            marks = [m for m, v in per_mode.items() if lab in v["picks"]]
            print(f"  {lab:<18} {graph_us[lab]:7.2f} / {alone_us[lab]:7.2f}"
                  + (f"   <- picked by {', '.join(marks)}" if marks else ""))
        rows.append((k["what"], "best in graph", best, graph_us[best], graph_us[best], 0.0,
                     float("nan")))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print("\n| kernel | timing | pick (most common) | in-graph us (median of picks) | worst pick us "
          "| regret vs best | tuning wall (median) |")
    print("|---|---|---|---|---|---|---|")
    for what, mode, pick, med, worst, regret, wall in rows:
        wall_s = "" if wall != wall else f"{wall * 1e3:.0f} ms"
        print(f"| {what} | {mode} | {pick} | {med:.2f} | {worst:.2f} | {regret:+.1f}% | {wall_s} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("warm")
    t = sub.add_parser("tune")
    t.add_argument("--timing", choices=("eager", "graph"), required=True)
    t.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("tuned", nargs="+")
    c.add_argument("--out", required=True)
    c.add_argument("--launches", type=int, default=200)
    c.add_argument("--rounds", type=int, default=100)
    args = p.parse_args()
    print(f"[{args.cmd}] {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"triton {triton.__version__}, tunekit from {os.path.dirname(tunekit.__file__)}",
          flush=True)
    {"warm": cmd_warm, "tune": cmd_tune, "compare": cmd_compare}[args.cmd](args)


if __name__ == "__main__":
    main()
