#!/usr/bin/env bash
# Run-to-run stability of the winner, with and without the re-rank of the leaders, on a GPU
# machine: the scale kernel (2^26 floats) and the tiled GEMM (4096^3) are each run once in full
# (their reference time of every config, many runs each), then tuned in RUNS fresh processes with
# the re-rank (the default) and RUNS without (--no-rerank). bench/measure/stability.py judges each
# winner by the reference times and prints a table last.
#
#   bash bench/measure/stability.sh OUT_DIR
#
# Environment: TUNEKIT_GPU_BUILD_DIR (default build-gpu), STABILITY_RUNS (default 10).
# OUT_DIR receives build.log, scale.json, gemm.json, {scale,gemm}_{rerank,plain}/NN.json,
# stability.json and stability.md.
set -uo pipefail
out=${1:?usage: bench/measure/stability.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${TUNEKIT_GPU_BUILD_DIR:-$root/build-gpu}
runs=${STABILITY_RUNS:-10}
jobs=$(nproc 2>/dev/null || echo 4)
if ! { cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DTUNEKIT_WERROR=OFF &&
       cmake --build "$build" -j "$jobs" --target tunekit_cuda_bench_scale \
         tunekit_cuda_bench_gemm; } >"$out/build.log" 2>&1; then
  echo "build failed:"
  tail -n 30 "$out/build.log"
  exit 1
fi
bin=$build/bench/cuda
status=0
"$bin/tunekit_cuda_bench_scale" --out "$out/scale.json" >"$out/scale.log" 2>&1 || status=1
"$bin/tunekit_cuda_bench_gemm" --out "$out/gemm.json" >"$out/gemm.log" 2>&1 || status=1
for kernel in scale gemm; do
  for mode in rerank plain; do
    mkdir -p "$out/${kernel}_$mode"
    flag=()
    [ "$mode" = plain ] && flag=(--no-rerank)
    for i in $(seq -w 1 "$runs"); do
      "$bin/tunekit_cuda_bench_$kernel" --tune-only "${flag[@]}" \
        --out "$out/${kernel}_$mode/$i.json" >/dev/null 2>>"$out/runs.log" || status=1
    done
  done
done
python3 "$root/bench/measure/stability.py" "$out" || status=1
exit "$status"
