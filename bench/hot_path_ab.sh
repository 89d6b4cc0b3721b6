#!/usr/bin/env bash
# The hot-path benchmarks of two source trees in one run on a GPU machine, interleaved: the core's
# Google Benchmark (a resolved call), the tuned CUDA launch and the tuned runtime_kernel. Builds
# each tree's three targets, runs them ROUNDS times alternating which tree goes first, writes every
# JSON into OUT_DIR and prints the medians side by side last.
#
#   bash bench/hot_path_ab.sh OUT_DIR BEFORE_SRC [ROUNDS]
#
# BEFORE_SRC is a checkout of the earlier commit (e.g. `git archive <commit> | tar -x -C dir`);
# the tree this script lives in is "after".
set -uo pipefail

out=${1:?usage: bench/hot_path_ab.sh OUT_DIR BEFORE_SRC [ROUNDS]}
before_src=$(cd "${2:?usage: bench/hot_path_ab.sh OUT_DIR BEFORE_SRC [ROUNDS]}" && pwd)
rounds=${3:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
after_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 4)
targets=(tunekit_bench_hot_path tunekit_cuda_bench_hot_path tunekit_cuda_bench_rtc_hot_path)

build() { # build SRC DIR
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTUNEKIT_WERROR=OFF -DTUNEKIT_BUILD_TESTS=OFF >"$out/configure-$(basename "$2").log" 2>&1 &&
    cmake --build "$2" -j "$jobs" --target "${targets[@]}" >"$out/build-$(basename "$2").log" 2>&1
}
build "$before_src" "$after_src/build-hot-before" || { echo "before: build failed"; tail -20 "$out/build-build-hot-before.log"; exit 1; }
build "$after_src" "$after_src/build-hot-after" || { echo "after: build failed"; tail -20 "$out/build-build-hot-after.log"; exit 1; }

run_tree() { # run_tree NAME ROUND
  local b=$after_src/build-hot-$1
  "$b/bench/tunekit_bench_hot_path" --benchmark_repetitions=5 \
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
summary = {name: {"before": f("before"), "after": f("after")} for name, f in rows}
(out / "summary.json").write_text(json.dumps({"rounds": rounds, "medians": summary}, indent=2))
print(f"{'median over rounds':48} {'before':>10} {'after':>10}")
for name, v in summary.items():
    print(f"{name:48} {v['before']:10.4f} {v['after']:10.4f}")
PY
