#!/usr/bin/env bash
# The hot-path benchmarks of two source trees in one run on a GPU machine, interleaved: the core's
# Google Benchmark (a resolved call), the tuned CUDA launch and the tuned runtime_kernel. Builds
# each tree's three targets, runs them ROUNDS times alternating which tree goes first, writes every
# JSON into OUT_DIR and prints the medians side by side last.
#
#   bash bench/hot_path_ab.sh OUT_DIR BEFORE_SRC [AFTER_SRC [ROUNDS]]
#
# BEFORE_SRC is a checkout of the earlier commit (e.g. `git archive <commit> | tar -x -C dir`);
# AFTER_SRC defaults to the tree this script lives in. Build directories go beside this script's
# tree (build-hot-before, build-hot-after).
set -uo pipefail

usage="usage: bench/hot_path_ab.sh OUT_DIR BEFORE_SRC [AFTER_SRC [ROUNDS]]"
out=${1:?$usage}
before_src=$(cd "${2:?$usage}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
after_src=$(cd "${3:-$here}" && pwd)
rounds=${4:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=$(nproc 2>/dev/null || echo 4)
targets=(tunekit_bench_hot_path tunekit_cuda_bench_hot_path tunekit_cuda_bench_rtc_hot_path)

build() { # build SRC DIR
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTUNEKIT_WERROR=OFF -DTUNEKIT_BUILD_TESTS=OFF >"$out/configure-$(basename "$2").log" 2>&1 &&
    cmake --build "$2" -j "$jobs" --target "${targets[@]}" >"$out/build-$(basename "$2").log" 2>&1
}
build "$before_src" "$here/build-hot-before" || { echo "before: build failed"; tail -20 "$out/build-build-hot-before.log"; exit 1; }
build "$after_src" "$here/build-hot-after" || { echo "after: build failed"; tail -20 "$out/build-build-hot-after.log"; exit 1; }

run_tree() { # run_tree NAME ROUND
  local b=$here/build-hot-$1
  "$b/bench/tunekit_bench_hot_path" --benchmark_repetitions=3 \
    --benchmark_out="$out/core-$1-$2.json" --benchmark_out_format=json >/dev/null 2>&1 ||
    echo "core $1 round $2 failed"
  "$b/bench/cuda/tunekit_cuda_bench_hot_path" --out "$out/cuda-$1-$2.json" >/dev/null 2>&1 ||
    echo "cuda $1 round $2 failed"
  "$b/bench/cuda/tunekit_cuda_bench_rtc_hot_path" --out "$out/rtc-$1-$2.json" >/dev/null 2>&1 ||
    echo "rtc $1 round $2 failed"
}
for r in $(seq 1 "$rounds"); do
  if ((r % 2)); then run_tree before "$r"; run_tree after "$r"; else run_tree after "$r"; run_tree before "$r"; fi
done

python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys, pathlib
out, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])
def load(kind, tree):
    rows = []
    for r in range(1, rounds + 1):
        p = out / f"{kind}-{tree}-{r}.json"
        if p.exists():
            rows.append(json.loads(p.read_text()))
    return rows
def core(tree, name):
    vals = [b["real_time"] for d in load("core", tree) for b in d["benchmarks"]
            if b["name"] == f"{name}_median"]
    return statistics.median(vals) if vals else float("nan")
def field(kind, tree, name):
    vals = [d[name] for d in load(kind, tree) if name in d]
    return statistics.median(vals) if vals else float("nan")
rows = [("core: resolved call (ns)", lambda t: core(t, "tuned_resolved_key")),
        ("core: resolved call, 64 keys rotating (ns)", lambda t: core(t, "tuned_resolved_key_rotating")),
        ("core: direct call (ns)", lambda t: core(t, "direct")),
        ("cuda: tuned launch added, by name (us)", lambda t: field("cuda", t, "launch_added_us")),
        ("cuda: tuned launch added, decoded (us)", lambda t: field("cuda", t, "launch_decoded_added_us")),
        ("cuda: dispatch added (us)", lambda t: field("cuda", t, "dispatch_added_us")),
        ("rtc: tuned runtime_kernel added (us)", lambda t: field("rtc", t, "tuned_added_us")),
        ("rtc: runtime_kernel added (us)", lambda t: field("rtc", t, "runtime_kernel_added_us"))]
def per_round(kind, tree, pick):
    return [pick(d) for d in load(kind, tree)]
summary = {name: {"before": f("before"), "after": f("after")} for name, f in rows}
(out / "summary.json").write_text(json.dumps({"rounds": rounds, "medians": summary}, indent=2))
def core_round(name):
    return lambda d: next((b["real_time"] for b in d["benchmarks"] if b["name"] == f"{name}_median"), float("nan"))
print("per round (before | after):")
for label, kind, pick in [("core resolved call ns", "core", core_round("tuned_resolved_key")),
                          ("core rotating ns", "core", core_round("tuned_resolved_key_rotating")),
                          ("cuda decoded us", "cuda", lambda d: d.get("launch_decoded_added_us", float("nan"))),
                          ("rtc tuned us", "rtc", lambda d: d.get("tuned_added_us", float("nan")))]:
    b = " ".join(f"{v:.4f}" for v in per_round(kind, "before", pick))
    a = " ".join(f"{v:.4f}" for v in per_round(kind, "after", pick))
    print(f"  {label:24} {b} | {a}")
print(f"{'median over rounds':48} {'before':>10} {'after':>10}")
for name, v in summary.items():
    print(f"{name:48} {v['before']:10.4f} {v['after']:10.4f}")
PY
# Every JSON in one file, so that a machine that hands back few files returns them all.
tar -czf "$out/hot_path_ab.tar.gz" -C "$out" $(cd "$out" && ls *.json)
