"""Judges the stability runs of bench/measure/stability.sh: for each kernel and mode (with the
re-rank, without), how often the fresh processes agreed on one winner, the worst and mean regret
of their winners by the reference times (the full run's median of many runs per config), how many
runs the re-rank changed, and the tuning wall time. Writes stability.json and stability.md into
the folder and prints the table.

    python3 bench/measure/stability.py OUT_DIR
"""

from __future__ import annotations

import collections
import glob
import json
import os
import statistics
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def judge(runs, reference):
    winners = [r["tuning"]["winner"] for r in runs]
    counts = collections.Counter(winners)
    best = min(reference.values())
    regrets = [reference[w] / best - 1 for w in winners if w in reference]
    changed = sum(1 for r in runs if (r["tuning"].get("rerank") or {}).get("changed"))
    reranked = sum(1 for r in runs if r["tuning"].get("rerank"))
    return {
        "runs": len(winners),
        "winners": dict(counts),
        "agreement": counts.most_common(1)[0][1] / len(winners),
        "worst_regret": max(regrets) if regrets else None,
        "mean_regret": statistics.mean(regrets) if regrets else None,
        "reranked": reranked,
        "changed": changed,
        "wall_ms_median": statistics.median(r["tuning"]["wall_ms"] for r in runs),
    }


def main() -> int:
    out = sys.argv[1]
    result = {}
    rows = []
    for kernel in ("scale", "gemm"):
        full = load(os.path.join(out, f"{kernel}.json"))
        if not full or "reference" not in full:
            print(f"{kernel}: no reference run ({kernel}.json)")
            return 1
        reference = {r["config"]: r["median_ms"] for r in full["reference"]}
        for mode in ("rerank", "plain"):
            runs = [r for r in (load(p) for p in sorted(glob.glob(
                os.path.join(out, f"{kernel}_{mode}", "*.json")))) if r]
            if not runs:
                print(f"{kernel} {mode}: no runs")
                return 1
            j = judge(runs, reference)
            result[f"{kernel}_{mode}"] = j
            rows.append((kernel, mode, j))
    with open(os.path.join(out, "stability.json"), "w") as f:
        json.dump(result, f, indent=1)
    lines = ["| kernel | re-rank | processes | same winner | worst regret | mean regret "
             "| re-ranked / changed | tuning wall (median) |", "|---|---|---|---|---|---|---|---|"]
    for kernel, mode, j in rows:
        worst = "-" if j["worst_regret"] is None else f"{100 * j['worst_regret']:.2f}%"
        mean = "-" if j["mean_regret"] is None else f"{100 * j['mean_regret']:.3f}%"
        lines.append(f"| {kernel} | {'on' if mode == 'rerank' else 'off'} | {j['runs']} | "
                     f"{round(100 * j['agreement'])}% | {worst} | {mean} | "
                     f"{j['reranked']} / {j['changed']} | {j['wall_ms_median']:.0f} ms |")
    text = "\n".join(lines)
    with open(os.path.join(out, "stability.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
