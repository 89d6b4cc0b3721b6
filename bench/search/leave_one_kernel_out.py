#!/usr/bin/env python3
"""Leave one kernel out: which of several measured variants of a strategy would have been chosen
without a kernel's files, and what that choice gives on them.

Each variant is a tunekit_replay --json file over the same files (NAME=PATH). For each kernel, the
variant with the best mean fraction of optimum (over the budgets, then the files) on the other
kernels' files is "chosen"; the table gives its figures on the held-out kernel beside those of the
--default variant and of the variant best on the held-out kernel itself.

    leave_one_kernel_out.py --default NAME [--kernels GEMM,convolution,pnpoly] NAME=PATH...

A file belongs to the first kernel whose name it contains.
"""
import argparse
import json
import statistics


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--default", required=True, help="the NAME of the variant in use")
    ap.add_argument("--kernels", default="GEMM,convolution,pnpoly")
    ap.add_argument("variants", nargs="+", metavar="NAME=PATH")
    a = ap.parse_args()
    kernels = [k for k in a.kernels.split(",") if k]

    def kernel_of(f):
        return next((k for k in kernels if k in f), None)

    data = {}
    budgets = None
    for item in a.variants:
        name, _, path = item.partition("=")
        d = json.load(open(path))
        data[name] = {r["file"]: r["fraction"] for r in d["results"]}
        budgets = budgets or sorted(next(iter(data[name].values())), key=int)
    files = set.intersection(*(set(v) for v in data.values()))
    if a.default not in data:
        raise SystemExit(f"--default {a.default}: no such variant")

    def mean_over(name, ks):
        return statistics.mean(statistics.mean(data[name][f][b] for b in budgets)
                               for f in files if kernel_of(f) in ks)

    def figures(name, k):
        fs = [f for f in files if kernel_of(f) == k]
        return " / ".join(f"{statistics.mean(data[name][f][b] for f in fs):.3f}" for b in budgets)

    print(f"{len(data)} variants over {len(files)} files; budgets {' / '.join(budgets)}\n")
    print("| held out | chosen on the others | its figures there | default there | "
          "best there (variant) |")
    print("| --- | --- | --- | --- | --- |")
    for k in kernels:
        others = [o for o in kernels if o != k]
        chosen = max(data, key=lambda n: mean_over(n, others))
        best = max(data, key=lambda n: mean_over(n, [k]))
        print(f"| {k} | {chosen} | {figures(chosen, k)} | {figures(a.default, k)} | "
              f"{figures(best, k)} ({best}) |")


if __name__ == "__main__":
    main()
