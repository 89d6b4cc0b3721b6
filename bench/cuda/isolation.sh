#!/usr/bin/env bash
# Isolated measurement on a GPU machine: builds tunekit-cuda-worker and the isolation benchmark,
# runs it (a saxpy space over BLOCK x VEC with one candidate that writes to an illegal address and
# one that spins forever), and keeps its output in OUT_DIR/isolation.txt.
#
#   bash bench/cuda/isolation.sh OUT_DIR [DEADLINE_MS]
#
# It prints, per candidate, the in-process and the isolated time; the two bad candidates must be
# failed with +inf ("... illegal memory access ..." and "exceeded the deadline of ... ms"), the
# rest ok; the winner must be the same in process and isolated; and the tuning time per candidate
# both ways (the overhead of isolation). Exit status 0 when the bad candidates are as expected.
# The build directory defaults to build-gpu (TUNEKIT_GPU_BUILD_DIR overrides it); the compile
# cache goes to a fresh directory under OUT_DIR so the worker reads what the parent compiled.
set -euo pipefail

out=${1:?usage: bench/cuda/isolation.sh OUT_DIR [DEADLINE_MS]}
deadline=${2:-5000}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${TUNEKIT_GPU_BUILD_DIR:-$root/build-gpu}
jobs=$(nproc 2>/dev/null || echo 4)

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTUNEKIT_WERROR=OFF
fi
cmake --build "$build" -j "$jobs" --target tunekit-cuda-worker tunekit_cuda_bench_isolation

export TUNEKIT_CACHE_DIR="$out/isolation-cache"
rm -rf "$TUNEKIT_CACHE_DIR"
"$build/bench/cuda/tunekit_cuda_bench_isolation" "$build/src/cuda/tunekit-cuda-worker" \
  "$deadline" 2>&1 | tee "$out/isolation.txt"
