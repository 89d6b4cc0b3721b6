#!/usr/bin/env python3
"""Joins the JSON of tunekit_replay (--json) and of compare.py (--json) into one set of markdown
tables: the mean fraction of optimum per strategy and budget over all files, the same over the
development files and over the held-out files, and per file. Also writes the joined JSON.

    report.py --tunekit tk.json [--transfer tkt.json] [--external ext.json ...]
              [--external-log compare.log ...] [--held-out convolution]
              [--development A100,V100,TITAN_RTX] [--kernels GEMM,convolution]
              [--json all.json]

A file is held out when its name starts with one of the --held-out prefixes (comma-separated);
every other file counts as development. With --development, a file counts as development when its
name ends with one of those suffixes (the GPUs settings were chosen on), every other as held out.
Several --external files (e.g. one per kernel) are merged file by file. --kernels adds a table
for the held-out files of each kernel (files whose name contains it). Every table ends with the
best external strategy's mean at each budget (Kernel Tuner's and Optuna's, over the same files).

Where tunekit's JSON counts failures both ways (charged: a failure uses an evaluation; free: it
costs nothing) and they differ on some file, the free counting is a row of its own; the time-based
score (Willemsen et al.) of each tunekit row is a table of its own.
"""
import argparse
import json

KT = "Kernel Tuner"
NAMES = {"optuna_tpe": "Optuna TPE"}


def rows_of_tunekit(data, label):
    out = {}
    differ = any(r.get("fraction_free", r["fraction"]) != r["fraction"] for r in data["results"])
    for r in data["results"]:
        countings = [("fraction", "")] + ([("fraction_free", ", failures free")] if differ else [])
        for key, suffix in countings:
            name = f"tunekit {r['strategy']}{label}{suffix}"
            row = out.setdefault(name, {"seeds": data["seeds"], "files": {}, "score": {}})
            for b, v in r[key].items():
                row["files"].setdefault(r["file"], {})[int(b)] = v
            score = r.get("score_free" if suffix else "score")
            if score is not None:
                row["score"][r["file"]] = score
    return out


def merge(rows, more):
    """Adds `more` to `rows`, file by file where a strategy is in both."""
    for name, r in more.items():
        if name in rows:
            seen = str(rows[name]["seeds"]).split(", ")
            if str(r["seeds"]) not in seen:
                rows[name]["seeds"] = ", ".join(seen + [str(r["seeds"])])
            rows[name]["files"].update(r["files"])
        else:
            rows[name] = r


def rows_of_external(data):
    out = {}
    slow = {"bayes_opt", "optuna_tpe"}
    for r in data["results"]:
        s = r["strategy"]
        name = NAMES.get(s, f"{KT} {s}")
        if isinstance(data["seeds"], dict):  # seeds per strategy
            seeds = data["seeds"].get(s, "?")
        else:
            seeds = data.get("slow_seeds", data["seeds"]) if s in slow else data["seeds"]
        out.setdefault(name, {"seeds": seeds, "files": {}})["files"].setdefault(
            r["file"], {})[int(r["budget"])] = r["fraction"]
    return out


def rows_of_logs(paths):
    """The progress lines of compare.py ("STRATEGY FILE budget B seed S: T s fraction b:v ..."),
    possibly of several runs that split the seeds: each (strategy, file, budget, seed) once."""
    runs = {}
    for path in paths:
        for line in open(path):
            parts = line.split()
            if len(parts) < 9 or parts[2] != "budget" or "fraction" not in parts:
                continue
            s, f, seed = parts[0], parts[1], int(parts[5].rstrip(":"))
            for item in parts[parts.index("fraction") + 1:]:
                b, v = item.split(":")
                runs[(s, f, int(b), seed)] = float(v)
    grouped = {}
    for (s, f, b, seed), v in runs.items():
        grouped.setdefault(s, {}).setdefault(f, {}).setdefault(b, []).append(v)
    out = {}
    for s, files in grouped.items():
        seeds = {len(v) for fs in files.values() for v in fs.values()}
        name = NAMES.get(s, f"{KT} {s}")
        out[name] = {"seeds": min(seeds) if len(seeds) == 1 else f"{min(seeds)}-{max(seeds)}",
                     "files": {f: {b: mean(v) for b, v in fs.items()} for f, fs in files.items()}}
    return out


def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tunekit", required=True)
    ap.add_argument("--transfer")
    ap.add_argument("--external", nargs="*", default=[])
    ap.add_argument("--external-log", nargs="*", default=[],
                    help="compare.py's progress lines (its stderr), for runs split over processes")
    ap.add_argument("--held-out", default="convolution")
    ap.add_argument("--development", default="",
                    help="suffixes (comma-separated) of the development files; the rest held out")
    ap.add_argument("--kernels", default="",
                    help="names (comma-separated): a table of each one's held-out files")
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = rows_of_tunekit(json.load(open(a.tunekit)), "")
    budgets = json.load(open(a.tunekit))["budgets"]
    for path in a.external:
        merge(rows, rows_of_external(json.load(open(path))))
    if a.external_log:
        merge(rows, rows_of_logs(a.external_log))
    if a.transfer:
        t = json.load(open(a.transfer))
        rows.update(rows_of_tunekit(t, f", transfer ({t['transfer_top_k']} distinct best of each other GPU)"))
    held = tuple(p for p in a.held_out.split(",") if p)
    development = tuple(p for p in a.development.split(",") if p)
    files = sorted({f for r in rows.values() for f in r["files"]})
    if development:
        is_held_out = lambda f: not f.endswith(development)
    else:
        is_held_out = lambda f: f.startswith(held)
    groups = [("all files", files),
              ("development files", [f for f in files if not is_held_out(f)]),
              ("held-out files", [f for f in files if is_held_out(f)])]
    for k in (k for k in a.kernels.split(",") if k):
        groups.append((f"held-out {k} files", [f for f in files if is_held_out(f) and k in f]))

    def mean_over(r, fs, b):
        """The row's mean over the files `fs` at budget b; None unless it has every one."""
        vals = [r["files"][f][b] for f in fs if f in r["files"] and b in r["files"][f]]
        return mean(vals) if len(vals) == len(fs) and fs else None

    def cell(r, fs, b):
        m = mean_over(r, fs, b)
        return "-" if m is None else f"{m:.3f}"

    for title, fs in groups:
        print(f"### Mean over {title} ({', '.join(fs)})\n")
        print("| strategy | seeds | " + " | ".join(str(b) for b in budgets) + " |")
        print("| --- | --- |" + " --- |" * len(budgets))
        for name, r in rows.items():
            print(f"| {name} | {r['seeds']} | " + " | ".join(cell(r, fs, b) for b in budgets) + " |")
        best = []
        for b in budgets:
            vals = [m for name, r in rows.items() if not name.startswith("tunekit")
                    for m in [mean_over(r, fs, b)] if m is not None]
            best.append(f"{max(vals):.3f}" if vals else "-")
        print("| best external at each budget | | " + " | ".join(best) + " |")
        print()
    print(f"### Per file ({' / '.join(str(b) for b in budgets)})\n")
    print("| strategy | " + " | ".join(files) + " |")
    print("| --- |" + " --- |" * len(files))
    for name, r in rows.items():
        cells = ["/".join(f"{r['files'][f][b]:.3f}" for b in budgets) if f in r["files"] else "-"
                 for f in files]
        print(f"| {name} | " + " | ".join(cells) + " |")
    scored = {name: r for name, r in rows.items() if r.get("score")}
    if scored:
        print("\n### Time-based score of tunekit's rows (0: random search, 1: the optimum at once)\n")
        print("| strategy | " + " | ".join(title for title, _ in groups) + " |")
        print("| --- |" + " --- |" * len(groups))
        for name, r in scored.items():
            cells = [f"{mean(r['score'][f] for f in fs):.3f}"
                     if fs and all(f in r["score"] for f in fs) else "-" for _, fs in groups]
            print(f"| {name} | " + " | ".join(cells) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"budgets": budgets, "held_out": [f for f in files if is_held_out(f)],
                       "strategies": rows}, f, indent=1)


if __name__ == "__main__":
    main()
