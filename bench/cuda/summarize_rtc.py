"""Prints the runtime-compilation figures of a bench/gpu.sh run as a short table.

    python3 summarize_rtc.py OUT_DIR
"""

import json
import os
import sys


def load(out, name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def gemm_rows(gemm):
    """The rows of one gemm_rtc run: the space, cold and warm tuning, the pool, the winner."""
    cold, warm = gemm["cold"], gemm["warm"]
    search = cold.get("strategy")
    tuned = (f"{search['name']} within {search['budget']} evaluations" if search
             else f"{gemm['candidates']} candidates")
    if search and search.get("max_time_s"):
        tuned += (f" or {search['max_time_s']:g} s: {search['evaluations']} measured,"
                  f" stopped by {search['stop']}")
    if search and "lookahead" in search:
        tuned += f" (batch {search['batch']}, {search['lookahead']} ahead)"
    kernels = f", {cold['kernel_s']:.1f} s of it in the runs" if "kernel_s" in cold else ""
    rows = [(f"Xgemm {gemm['space']} space at {gemm['size']}^3: configs / tuned",
             f"{gemm['space_size']} / {tuned}", "")]
    wall_goal = (f"<= {search['max_time_s']:g} s + a batch"
                 if search and search.get("max_time_s") else "")
    rows.append(("  cold: wall = waiting for compiles + measuring",
                 f"{cold['wall_s']:.1f} s = {cold['wait_for_compile_s']:.1f} + {cold['measure_s']:.1f} s"
                 f" ({cold['compile']['compiled']} compiled, {cold['compile']['failed']} failed{kernels})",
                 wall_goal))
    rows.append(("  warm: compiled / from the compile cache",
                 f"{warm['compile']['compiled']} / {warm['compile']['cache_hits']} in {warm['wall_s']:.1f} s"
                 f" ({warm['mode']})", "0 compiled"))
    pool = gemm["pool"]
    if pool["configs"] > 1:
        rows.append((f"  compile pool over one thread, {pool['configs']} configs",
                     f"{pool['speedup']:.1f}x on {gemm['compile_threads']} threads"
                     f"{' with compile workers' if gemm.get('compile_workers') else ''}"
                     f" ({pool['speedup_per_core']:.2f} x cores)", ">= 0.7 x cores"))
    rows.append(("  winner / cuBLAS fp32",
                 f"{cold['winner_tflops']:.1f} / {cold['cublas_tflops']:.1f} TFLOP/s"
                 f" ({100 * cold['winner_vs_cublas']:.1f}%)", ">= 95%"))
    if "strategy" in gemm:
        st = gemm["strategy"]
        rows.append(("  strategy (hybrid, 400 evaluations) / exhaustive winner",
                     f"{st['fraction_of_exhaustive']:.3f} in {st['wall_s']:.1f} s"
                     f" ({st['measured']} measured)", ""))
    return rows


def main():
    out = sys.argv[1]
    hot = load(out, "rtc_hot_path.json")
    tri = load(out, "triton_gemm.json")
    scaling = load(out, "nvrtc_scaling.json")
    rows = []
    if scaling:
        jobs = scaling["jobs"]
        rows.append((f"NVRTC, {scaling['configs']} configs: {jobs} threads / {jobs} processes / "
                     f"{jobs} compile workers",
                     f"{scaling['threads_speedup']:.1f}x / {scaling['processes_speedup']:.1f}x / "
                     f"{scaling['workers_speedup']:.1f}x "
                     f"({scaling['workers_speedup'] / jobs:.2f} x cores with workers)",
                     ">= 0.7 x cores"))
    if hot:
        rows.append(("runtime_kernel launch added over cuLaunchKernel",
                     f"{hot['runtime_kernel_added_us']:.3f} / {hot['runtime_kernel_added_us_repeat']:.3f} us",
                     "<= 0.05 us"))
        rows.append(("tuned runtime_kernel launch added over cuLaunchKernel",
                     f"{hot['tuned_added_us']:.3f} / {hot['tuned_added_us_repeat']:.3f} us", "<= 0.05 us"))
        if "tuned_added_us_median7" in hot:
            rows.append(("  the same, median of 7 more (range)",
                         f"{hot['tuned_added_us_median7']:.3f} us ({hot['tuned_added_us_min7']:.3f}-"
                         f"{hot['tuned_added_us_max7']:.3f})", "<= 0.05 us"))
    for gemm in (load(out, "gemm_rtc.json"), load(out, "gemm_rtc_extended.json"),
                 load(out, "gemm_rtc_time_budget.json")):
        if gemm:
            rows += gemm_rows(gemm)
    if tri:
        rows.append(("Triton autotuner: space, tune cold / warm",
                     f"{tri['space_size']} configs, {tri['tune_cold_s']:.1f} / {tri['tune_warm_s']:.1f} s", ""))
        rows.append(("Triton winner / cuBLAS fp32",
                     f"{tri['winner_tflops']:.1f} / {tri['cublas_tflops']:.1f} TFLOP/s"
                     f" ({100 * tri['winner_vs_cublas']:.1f}%)", ""))
    if not rows:
        print("no runtime-compilation results in", out)
        return 1
    width = max(len(r[0]) for r in rows)
    print("\nruntime-compiled kernels")
    for name, value, goal in rows:
        print(f"  {name:<{width}}  {value}" + (f"   (goal {goal})" if goal else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
