#!/usr/bin/env bash
# Builds tunekit::serve with tunekit::nccl on a machine with two GPUs, runs the serving tests and
# the GPU serving benchmark (a tuned GEMM sharded over the GPUs behind rank 0's endpoint, one
# process per GPU under mpirun), writes the JSON and logs into OUT_DIR and prints the table last.
#
#   bash bench/serve/gpu.sh OUT_DIR [HTTPLIB_INCLUDE_DIR]
#
# cpp-httplib: where pkg-config knows no cpp-httplib (the GPU image), give a directory holding
# upstream's single-header httplib.h (header-only; default: build-serve-deps/httplib, ignored by
# git). It comes from Debian's source package, on a machine with network access:
#   mkdir -p build-serve-deps/httplib && curl -sSfL \
#     http://deb.debian.org/debian/pool/main/c/cpp-httplib/cpp-httplib_0.11.4+ds.orig.tar.xz |
#     tar -xJO yhirose-cpp-httplib-7992b14/httplib.h > build-serve-deps/httplib/httplib.h
# The build directory defaults to build-serve-gpu (TUNEKIT_SERVE_BUILD_DIR overrides it). NVLink
# multicast stays off (NCCL_NVLS_ENABLE=0), as the shared machines require.
set -uo pipefail

out=${1:?usage: bench/serve/gpu.sh OUT_DIR [HTTPLIB_INCLUDE_DIR]}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${TUNEKIT_SERVE_BUILD_DIR:-$root/build-serve-gpu}
httplib=${2:-$root/build-serve-deps/httplib}
jobs=$(nproc 2>/dev/null || echo 4)
export NCCL_NVLS_ENABLE=0
status=0

say() { echo "[serve/gpu.sh $(date +%H:%M:%S)] $*" | tee -a "$out/serve.log"; }
step() {
  local name=$1
  shift
  say "$name"
  if ! "$@" >"$out/$name.log" 2>&1; then
    say "$name FAILED ($name.log):"
    tail -n 20 "$out/$name.log" | sed 's/^/    /' | tee -a "$out/serve.log"
    status=1
    return 1
  fi
}

httplib_flag=()
if ! pkg-config --exists cpp-httplib 2>/dev/null; then
  if [ ! -f "$httplib/httplib.h" ]; then
    say "no cpp-httplib: put upstream's httplib.h in $httplib (see the top of this script)"
    exit 1
  fi
  httplib_flag=(-Dhttplib_INCLUDE_DIR="$httplib")
fi

nvidia-smi -L >>"$out/serve.log" 2>&1 || true
step configure cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTUNEKIT_WERROR=OFF -DTUNEKIT_BUILD_TESTS=ON \
  -DTUNEKIT_BUILD_BENCH=ON -DTUNEKIT_NCCL=ON -DTUNEKIT_MPI=ON -DTUNEKIT_SERVE=ON \
  "${httplib_flag[@]}" || exit 1
step build cmake --build "$build" -j "$jobs" --target tunekit_serve_tests \
  tunekit_serve_follower_exit_test tunekit_bench_serve_gemm_nccl tunekit_bench_serve_load || exit 1

step ctest_serve ctest --test-dir "$build" -R '^serve\.' --output-on-failure --timeout 120

mpi=(mpirun --allow-run-as-root --oversubscribe -x NCCL_NVLS_ENABLE)
step bench_gemm "${mpi[@]}" -np 2 "$build/bench/serve/tunekit_bench_serve_gemm_nccl" \
  --sizes 1024,2048,4096 --requests 200 --clients 4 --json "$out/serve-gemm-nccl.json"
step bench_cpu bash "$root/bench/serve/run.sh" "$build" "$out/serve-cpu"

say "done (status $status)"
grep '^|' "$out/bench_gemm.log" 2>/dev/null
grep '^|' "$out/bench_cpu.log" 2>/dev/null
exit $status
