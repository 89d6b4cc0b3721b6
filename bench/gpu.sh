#!/usr/bin/env bash
# Builds tunekit with CUDA on a GPU machine, runs the GPU tests and every GPU benchmark, writes
# the full results (JSON, logs) into OUT_DIR and prints a short table last.
#
#   bash bench/gpu.sh OUT_DIR
#
# Benchmarks: the core hot-path benchmark (if built); the hot path of a tuned CUDA launch; tuning
# cost, bandwidth and a reference table of the scale kernel at 2^26 elements; ten fresh processes
# tuning the scale space (stability); Triton's autotuner on the same kernel and space; the tiled
# GEMM at 4096^3 against cuBLAS, and ten fresh processes tuning it; the GEMM tuned in context
# beside a memory-bound kernel on another stream, against the GEMM tuned alone; isolated measurement
# of a space with a faulting and a spinning candidate. The build directory defaults
# to build-gpu (TUNEKIT_GPU_BUILD_DIR overrides it).
set -uo pipefail

out=${1:?usage: bench/gpu.sh OUT_DIR}
mkdir -p "$out/logs" "$out/scale_runs" "$out/gemm_runs"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TUNEKIT_GPU_BUILD_DIR:-$root/build-gpu}
jobs=$(nproc 2>/dev/null || echo 4)
status=0

say() { echo "[gpu.sh $(date +%H:%M:%S)] $*" | tee -a "$out/logs/gpu.log"; }
# step NAME COMMAND...: runs COMMAND with its output in logs/NAME.log; a failure is reported and
# remembered, and the script goes on with the next step.
step() {
  local name=$1
  shift
  say "$name"
  if ! "$@" >"$out/logs/$name.log" 2>&1; then
    say "$name FAILED (logs/$name.log):"
    tail -n 15 "$out/logs/$name.log" | sed 's/^/    /' | tee -a "$out/logs/gpu.log"
    status=1
    return 1
  fi
}

nvidia-smi >"$out/logs/nvidia-smi.txt" 2>&1 || true

# Warnings are errors in CI; here a newer compiler's new warning must not cost the run.
step configure cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTUNEKIT_WERROR=OFF || exit 1
if ! step build cmake --build "$build" -j "$jobs"; then
  say "full build failed; building the CUDA targets alone"
  step build_cuda cmake --build "$build" -j "$jobs" --target tunekit_cuda_unit_tests \
    tunekit_cuda_gpu_tests cuda_scale cuda_gemm tunekit_cuda_bench_hot_path \
    tunekit_cuda_bench_scale tunekit_cuda_bench_gemm tunekit_cuda_bench_contextual \
    tunekit_cuda_rtc_tests tunekit_cuda_rtc_gemm_tests tunekit_cuda_rtc_gemm_emulation_tests \
    tunekit_cuda_rtc_gpu_tests cuda_gemm_rtc tunekit_cuda_bench_rtc_hot_path \
    tunekit_cuda_bench_gemm_rtc tunekit-cuda-worker tunekit_cuda_bench_isolation \
    tunekit_cuda_bench_nvrtc_scaling \
    tunekit_cuda_isolation_gpu_tests || exit 1
fi

step ctest_gpu ctest --test-dir "$build" -L gpu --output-on-failure --timeout 300
cp "$out/logs/ctest_gpu.log" "$out/ctest_gpu.log"
step examples bash -c "'$build/examples/cuda/cuda_scale' && '$build/examples/cuda/cuda_gemm' 2048"

if [ -x "$build/bench/tunekit_bench_hot_path" ]; then
  step core_hot_path "$build/bench/tunekit_bench_hot_path" \
    --benchmark_out="$out/core_hot_path.json" --benchmark_out_format=json
else
  say "core hot-path benchmark ($build/bench/tunekit_bench_hot_path) not built; skipped"
fi

bin=$build/bench/cuda
step cuda_hot_path "$bin/tunekit_cuda_bench_hot_path" --out "$out/cuda_hot_path.json"
step scale "$bin/tunekit_cuda_bench_scale" --out "$out/scale.json"
for i in 01 02 03 04 05 06 07 08 09 10; do
  step "scale_run_$i" "$bin/tunekit_cuda_bench_scale" --tune-only --out "$out/scale_runs/$i.json"
done
step triton_scale env PYTHONUNBUFFERED=1 python3 "$root/bench/cuda/triton_scale.py" \
  --out "$out/triton_scale.json"
step gemm "$bin/tunekit_cuda_bench_gemm" --out "$out/gemm.json"
for i in 01 02 03 04 05 06 07 08 09 10; do
  step "gemm_run_$i" "$bin/tunekit_cuda_bench_gemm" --tune-only --out "$out/gemm_runs/$i.json"
done

step contextual "$bin/tunekit_cuda_bench_contextual" --out "$out/contextual.json"

# Runtime-compiled kernels (docs/runtime_compilation.md; their tests ran in ctest_gpu above): the
# hot path of a tuned runtime_kernel beside a plain cuLaunchKernel; the example on one shape; the
# Xgemm GEMM at 4096^3 over CLBlast's space with a cold and a warm compile cache, then over the
# wider space within a budget, and Triton's autotuner on an fp32 matmul space.
# TUNEKIT_RTC_GEMM_LIMIT: configs tuned, spread over the 17,956 of the space (default 2000; 0: all,
# whose cold compile wants many cores).
step rtc_hot_path "$bin/tunekit_cuda_bench_rtc_hot_path" --out "$out/rtc_hot_path.json"
step rtc_example "$build/examples/cuda/cuda_gemm_rtc" --sizes 1024 --limit 300
step nvrtc_scaling "$bin/tunekit_cuda_bench_nvrtc_scaling" --configs 256 \
  --out "$out/nvrtc_scaling.json"
step gemm_rtc "$bin/tunekit_cuda_bench_gemm_rtc" --limit "${TUNEKIT_RTC_GEMM_LIMIT:-2000}" \
  --out "$out/gemm_rtc.json"
# CLBlast's wider Xgemm space (241,600 configs: also KWG 16, KWI 8, strided STRM / STRN), too
# large to measure whole: the default strategy within TUNEKIT_RTC_EXTENDED_BUDGET evaluations.
step gemm_rtc_extended "$bin/tunekit_cuda_bench_gemm_rtc" --space extended \
  --budget "${TUNEKIT_RTC_EXTENDED_BUDGET:-1000}" --speedup-configs 1 \
  --out "$out/gemm_rtc_extended.json"
# The same search stopped by wall time (TUNEKIT_RTC_TIME_BUDGET seconds, default 15) before its
# 1,000 evaluations: the cold compiles count against it (docs/search.md, Budgets).
step gemm_rtc_time_budget "$bin/tunekit_cuda_bench_gemm_rtc" --space extended --budget 1000 \
  --time-budget "${TUNEKIT_RTC_TIME_BUDGET:-15}" --speedup-configs 1 \
  --out "$out/gemm_rtc_time_budget.json"
# Isolated measurement: a faulting and a spinning candidate in tunekit-cuda-worker.
step isolation env TUNEKIT_GPU_BUILD_DIR="$build" bash "$root/bench/cuda/isolation.sh" \
  "$out/isolation"
step triton_gemm env PYTHONUNBUFFERED=1 python3 "$root/bench/cuda/triton_gemm_rtc.py" \
  --out "$out/triton_gemm.json"

python3 "$root/bench/cuda/summarize.py" "$out" || status=1
python3 "$root/bench/cuda/summarize_rtc.py" "$out" || status=1
# Contextual tuning (issue: in-context vs isolated winner), after the main table.
[ -f "$out/logs/contextual.log" ] && tail -n 5 "$out/logs/contextual.log"
exit $status
