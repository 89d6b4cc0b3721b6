#!/usr/bin/env python3
"""Runs Kernel Tuner's and Optuna's search strategies over Kernel Tuner cache files and prints the
mean fraction of optimum (best time in the file / best time found) at each budget.

Counting as Kernel Tuner's simulation mode does: the space is the set of configs in the file (a
restriction keeps exactly those), an evaluation is a distinct config measured for the first time
(Kernel Tuner's max_fevals), repeats are free. Kernel Tuner's strategies are told the budget
(max_fevals) and run once per budget; Optuna runs once up to the largest budget, and its trace is
read at each budget (a config outside the file is a failed trial that costs nothing, a repeat is
answered from memory and costs nothing).

    compare.py --seeds 20 --budgets 25,100,400 --strategies random_sample,bayes_opt,optuna_tpe \
               --json out.json FILE.json.gz...
"""
import argparse
import gzip
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
import warnings

import numpy as np


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def key_of(data, params):
    return ",".join(str(params[k]) for k in data["tune_params_keys"])


def best_found(times, budget):
    """Best time among the first `budget` distinct evaluations."""
    return min(times[:budget]) if times else float("inf")


def run_kernel_tuner(path, data, strategy, budget, seed):
    import kernel_tuner

    cache = data["cache"]
    valid = set(cache)
    keys = data["tune_params_keys"]
    tune_params = {k: data["tune_params"][k] for k in keys}

    def in_file(p):
        return ",".join(str(p[k]) for k in keys) in valid

    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Kernel Tuner refuses a cache whose recorded problem_size differs from the one passed (a
        # number or a list).
        problem_size = data.get("problem_size") or (1, 1)
        if not isinstance(problem_size, (int, float)):
            problem_size = tuple(problem_size)
        results, _ = kernel_tuner.tune_kernel(
            data["kernel_name"], "__global__ void k() {}", problem_size, [], tune_params,
            restrictions=in_file, strategy=strategy, strategy_options={"max_fevals": budget},
            cache=path, simulation_mode=True, quiet=True, verbose=False)
    # Kernel Tuner returns its distinct evaluations in order (the cache entries of these files hold
    # only the time, so the results carry no parameter values to deduplicate on).
    return [r["time"] if isinstance(r.get("time"), (int, float)) else float("inf") for r in results]


def run_optuna(data, budget, seed):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    cache = data["cache"]
    keys = data["tune_params_keys"]
    measured = {}
    order = []

    def objective(trial):
        p = {k: trial.suggest_categorical(k, data["tune_params"][k]) for k in keys}
        k = ",".join(str(p[n]) for n in keys)
        if k not in cache:
            raise optuna.TrialPruned()  # outside the space: a failed trial, not an evaluation
        if k not in measured:
            t = cache[k].get("time")
            measured[k] = t if isinstance(t, (int, float)) else float("inf")
            order.append(measured[k])
        return measured[k]

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    trials = 0
    while len(order) < budget and trials < 50 * budget:
        study.optimize(objective, n_trials=1)
        trials += 1
    return order


def job(args):
    path, strategy, budget, seed = args
    data = load(path)
    best = min(v["time"] for v in data["cache"].values() if isinstance(v.get("time"), (int, float)))
    t0 = time.time()
    if strategy == "optuna_tpe":
        times = run_optuna(data, budget, seed)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            plain = os.path.join(tmp, os.path.basename(path).replace(".gz", ""))
            with open(plain, "w") as f:
                json.dump(data, f)
            times = run_kernel_tuner(plain, data, strategy, budget, seed)
    return path, strategy, budget, seed, best, times, time.time() - t0


SLOW = {"bayes_opt", "optuna_tpe"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds are first-seed, first-seed + 1, ...")
    ap.add_argument("--slow-seeds", type=int, default=None,
                    help="seeds for the slow strategies (bayes_opt, optuna_tpe); default --seeds")
    ap.add_argument("--budgets", default="25,100,400")
    ap.add_argument("--strategies", default="random_sample,adaptive_tabu_greywolf,dual_annealing,"
                    "genetic_algorithm,bayes_opt,optuna_tpe")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--json")
    a = ap.parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    strategies = a.strategies.split(",")
    work = []
    for s in strategies:
        for path in a.files:
            n = a.slow_seeds if a.slow_seeds and s in SLOW else a.seeds
            for seed in range(a.first_seed, a.first_seed + n):
                if s == "optuna_tpe":  # one run, read at every budget
                    work.append((path, s, max(budgets), seed))
                else:
                    work.extend((path, s, b, seed) for b in budgets)
    frac = {}  # (strategy, file, budget) -> fractions
    seconds = {}
    with multiprocessing.Pool(a.jobs) as pool:
        for path, s, budget, seed, best, times, secs in pool.imap_unordered(job, work):
            name = os.path.basename(path).split(".")[0]
            seconds[s] = seconds.get(s, 0.0) + secs
            for b in budgets if s == "optuna_tpe" else [budget]:
                frac.setdefault((s, name, b), []).append(best / best_found(times, b))
            fracs = " ".join(f"{b}:{best / best_found(times, b):.4f}"
                             for b in (budgets if s == "optuna_tpe" else [budget]))
            print(f"{s} {name} budget {budget} seed {seed}: {secs:.1f} s fraction {fracs}",
                  file=sys.stderr, flush=True)
    names = [os.path.basename(p).split(".")[0] for p in a.files]
    out = {"seeds": a.seeds, "slow_seeds": a.slow_seeds or a.seeds, "budgets": budgets, "results": [], "mean": {}}
    print("| strategy | " + " | ".join(str(b) for b in budgets) + " |")
    print("|---|" + "---|" * len(budgets))
    for s in strategies:
        means = []
        for b in budgets:
            per_file = [float(np.mean(frac[(s, n, b)])) for n in names]
            means.append(float(np.mean(per_file)))
            for n, v in zip(names, per_file):
                out["results"].append({"strategy": s, "file": n, "budget": b, "fraction": v})
        out["mean"][s] = dict(zip(map(str, budgets), means))
        print(f"| {s} | " + " | ".join(f"{m:.3f}" for m in means) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
