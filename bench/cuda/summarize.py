"""Reads the results bench/gpu.sh wrote into a directory and writes summary.json and summary.md
there, printing the table last.

    python3 summarize.py OUT_DIR
"""

import collections
import glob
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def stability(runs, reference):
    """Agreement rate of the winners of `runs` and the worst regret, judged by the reference
    medians (config text -> ms)."""
    winners = [r["tuning"]["winner"] for r in runs]
    if not winners:
        return None
    counts = collections.Counter(winners)
    best = min(reference.values()) if reference else None
    regrets = [reference[w] / best - 1 for w in winners if reference and w in reference]
    return {
        "runs": len(winners),
        "winners": dict(counts),
        "agreement": counts.most_common(1)[0][1] / len(winners),
        "worst_regret": max(regrets) if regrets else None,
        "per_candidate_ms": [r["tuning"]["per_candidate_ms"] for r in runs],
    }


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def main():
    out = sys.argv[1]
    scale = load(os.path.join(out, "scale.json"))
    gemm = load(os.path.join(out, "gemm.json"))
    triton = load(os.path.join(out, "triton_scale.json"))
    hot = load(os.path.join(out, "cuda_hot_path.json"))
    scale_runs = [load(p) for p in sorted(glob.glob(os.path.join(out, "scale_runs", "*.json")))]
    gemm_runs = [load(p) for p in sorted(glob.glob(os.path.join(out, "gemm_runs", "*.json")))]
    scale_runs = [r for r in scale_runs if r]
    gemm_runs = [r for r in gemm_runs if r]

    summary = {}
    ctest = ""
    try:
        with open(os.path.join(out, "ctest_gpu.log")) as f:
            # "88% tests passed, 3 tests failed out of 24" or "100% tests passed out of 24".
            m = re.search(r"\d+% tests passed(?:, (\d+) tests failed)? out of (\d+)", f.read())
            if m:
                failed = int(m.group(1) or 0)
                ctest = f"{int(m.group(2)) - failed}/{m.group(2)} passed"
    except OSError:
        pass
    summary["gpu_tests"] = ctest or "n/a"

    scale_ref = {r["config"]: r["median_ms"] for r in scale["reference"]} if scale else {}
    gemm_ref = {r["config"]: r["median_ms"] for r in gemm["reference"]} if gemm else {}

    if hot:
        summary["hot_path"] = {
            "direct_launch_us": hot["launch_direct_us"],
            "tuned_launch_us": hot["launch_tuned_us"],
            "tunekit_added_us": hot["launch_added_us"],
            "tunekit_added_us_repeat": hot["launch_added_us_repeat"],
            "tunekit_added_over_config_launcher_us": hot.get("launch_added_over_config_us"),
            "tunekit_dispatch_added_us": hot["dispatch_added_us"],
            "decoded_added_us": hot.get("launch_decoded_added_us"),
            "decoded_added_us_min": hot.get("launch_decoded_added_us_min"),
            "decoded_added_us_max": hot.get("launch_decoded_added_us_max"),
            "triton_direct_launch_us": triton["hot_path"]["direct_us"] if triton else None,
            "triton_tuned_launch_us": triton["hot_path"]["tuned_us"] if triton else None,
            "triton_added_us": triton["hot_path"]["added_us"] if triton else None,
        }
    if scale:
        t = scale["tuning"]
        summary["tuning_cost"] = {
            "candidates": t["candidates_measured"],
            "tunekit_per_candidate_ms": t["per_candidate_ms"],
            "tunekit_per_candidate_ms_again": scale["tuning_again"]["per_candidate_ms"],
            "tunekit_per_candidate_ms_flush_l2": scale["tuning_flush_l2"]["per_candidate_ms"],
            "tunekit_winner": t["winner"],
        }
        if triton:
            tw = triton["tuning"]["winner"]
            triton_cfg = f"BLOCK={tw['BLOCK']}, threads={tw['threads']}"
            ours = scale_ref.get(t["winner"])
            theirs = scale_ref.get(triton_cfg)
            summary["tuning_cost"].update({
                "triton_per_candidate_ms": triton["tuning"]["per_candidate_ms"],
                "triton_per_candidate_ms_with_compile":
                    triton["tuning_with_compile"]["per_candidate_ms"],
                "speedup_vs_triton":
                    triton["tuning"]["per_candidate_ms"] / t["per_candidate_ms"],
                "triton_winner": triton_cfg,
                "same_winner": triton_cfg == t["winner"],
                # Our reference time of Triton's choice over that of ours (CUDA kernels both).
                "triton_choice_vs_ours": theirs / ours - 1 if ours and theirs else None,
                "triton_winner_kernel_gbps": triton["winner"]["gbps"],
            })
        summary["scale_quality"] = {
            "winner": scale["winner"]["config"],
            "gbps": scale["winner"]["gbps"],
            "copy_gbps": scale["copy"]["gbps"],
            "fraction_of_copy": scale["winner"]["fraction_of_copy"],
            "speedup_over_default": scale["winner"]["speedup_over_default"],
            "default": scale["default"]["config"],
            "regret": scale["winner"]["regret"],
        }
    if gemm and "winner" in gemm:
        summary["gemm_quality"] = {
            "size": gemm["size"],
            "winner": gemm["tuning"]["winner_template_id"],
            "tflops": gemm["winner"]["tflops"],
            "cublas_tflops": gemm["cublas"]["tflops"],
            "fraction_of_cublas": gemm["winner"]["fraction_of_cublas"],
            "speedup_over_default": gemm["winner"]["speedup_over_default"],
            "default_tflops": gemm["default"]["tflops"],
            "tuning_per_candidate_ms": gemm["tuning"]["per_candidate_ms"],
            "relative_error_vs_cublas": gemm["winner_output"]["relative_error"],
        }
    summary["stability_scale"] = stability(scale_runs, scale_ref)
    summary["stability_gemm"] = stability(gemm_runs, gemm_ref)

    rows = [("figure", "measured", "goal")]
    s = summary
    if "hot_path" in s:
        h = s["hot_path"]
        rows.append(("hot path: added host time per launch",
                     f"{fmt(h['tunekit_added_us'], '.3f')} us "
                     f"(repeat {fmt(h['tunekit_added_us_repeat'], '.3f')})", "< 0.05 us"))
        if h.get("decoded_added_us") is not None:
            rows.append(("hot path, config decoded once (tunekit::decoded)",
                         f"{fmt(h['decoded_added_us'], '.3f')} us, median of 7 "
                         f"({fmt(h['decoded_added_us_min'], '.3f')}-"
                         f"{fmt(h['decoded_added_us_max'], '.3f')})", "<= 0.05 us"))
        rows.append(("  over the same launcher / dispatch alone",
                     f"{fmt(h['tunekit_added_over_config_launcher_us'], '.3f')} / "
                     f"{fmt(h['tunekit_dispatch_added_us'], '.3f')} us", ""))
        rows.append(("  host time per launch, direct / tuned",
                     f"{fmt(h['direct_launch_us'], '.2f')} / {fmt(h['tuned_launch_us'], '.2f')} us",
                     ""))
        rows.append(("  Triton: direct / autotuned launch (added)",
                     f"{fmt(h['triton_direct_launch_us'], '.2f')} / "
                     f"{fmt(h['triton_tuned_launch_us'], '.2f')} us "
                     f"({fmt(h['triton_added_us'], '.2f')})", "(~9.4 us)"))
    if "tuning_cost" in s:
        c = s["tuning_cost"]
        rows.append(("tuning per candidate, scale 2^26",
                     f"{fmt(c['tunekit_per_candidate_ms'], '.2f')} ms "
                     f"(again {fmt(c['tunekit_per_candidate_ms_again'], '.2f')}, "
                     f"L2 flush {fmt(c['tunekit_per_candidate_ms_flush_l2'], '.2f')})",
                     "<= 6 ms"))
        if "triton_per_candidate_ms" in c:
            rows.append(("Triton per candidate (compiled / with compile)",
                         f"{fmt(c['triton_per_candidate_ms'], '.1f')} / "
                         f"{fmt(c['triton_per_candidate_ms_with_compile'], '.1f')} ms",
                         "(~118 ms)"))
            rows.append(("tuning speedup vs Triton", f"{fmt(c['speedup_vs_triton'], '.1f')}x",
                         ">= 20x"))
            rows.append(("winner vs Triton's choice",
                         f"{c['tunekit_winner']} vs {c['triton_winner']} "
                         f"({fmt(c['triton_choice_vs_ours'], '+.2%')})",
                         "same or within 1%"))
    if "scale_quality" in s:
        q = s["scale_quality"]
        rows.append(("scale bandwidth / D2D copy",
                     f"{q['gbps']:.0f} / {q['copy_gbps']:.0f} GB/s = {q['fraction_of_copy']:.1%}",
                     ">= 97%"))
        rows.append(("scale speedup over default",
                     f"{q['speedup_over_default']:.2f}x ({q['default']})", ""))
    if "gemm_quality" in s:
        g = s["gemm_quality"]
        rows.append((f"GEMM {g['size']}^3 fp32 / cuBLAS",
                     f"{g['tflops']:.1f} / {g['cublas_tflops']:.1f} TFLOP/s = "
                     f"{g['fraction_of_cublas']:.1%} ({g['winner']})", ">= 70%"))
        rows.append(("GEMM speedup over default", f"{g['speedup_over_default']:.2f}x", ""))
    for name, st in (("scale", s["stability_scale"]), ("GEMM", s["stability_gemm"])):
        if st:
            rows.append((f"stability {name}: {st['runs']} processes",
                         f"agreement {st['agreement']:.0%}, worst regret "
                         f"{fmt(st['worst_regret'], '.2%')}", ""))
    rows.append(("GPU tests", s["gpu_tests"], "all pass"))

    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["| " + " | ".join(r[i].ljust(widths[i]) for i in range(3)) + " |" for r in rows]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    table = "\n".join(lines)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
