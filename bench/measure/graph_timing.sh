#!/usr/bin/env bash
# Eager against graph timing on a GPU machine with PyTorch and Triton (no network needed): installs
# tunekit from this tree, compiles every config of two microsecond Triton kernels once, tunes them
# with tunekit.autotune(timing="eager") and (timing="graph") in alternating fresh processes, then
# times every config inside a captured CUDA graph, all interleaved, and prints a table last: each
# mode's picks, their time in the graph, and the tuning wall time per mode. With a C++ toolchain
# and CUDA it also builds and runs the C++ graph-timing GPU tests (GRAPH_TIMING_CXX=0 skips them).
#
#   bash bench/measure/graph_timing.sh OUT_DIR
#
# Environment: PYTHON (default python3), GRAPH_TIMING_REPEATS (fresh tuning processes per mode,
# default 3), GRAPH_TIMING_LAUNCHES (launches per graph in the comparison, default 200),
# GRAPH_TIMING_ROUNDS (interleaved rounds, default 100), GRAPH_TIMING_CXX (default 1).
#
# OUT_DIR receives pip.log, warm.log, tune-<mode>-<i>.json/.log, compare.json, compare.log,
# cxx-build.log and cxx-tests.log (when built), and summary.md (the table).
set -uo pipefail
out=${1:?usage: bench/measure/graph_timing.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${PYTHON:-python3}
repeats=${GRAPH_TIMING_REPEATS:-3}
launches=${GRAPH_TIMING_LAUNCHES:-200}
rounds=${GRAPH_TIMING_ROUNDS:-100}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
work=$(mktemp -d /tmp/tunekit-graph-timing.XXXXXX)
# One Triton cache for every process (the warm step fills it), one winner cache per process
# (unused: the script's tuners keep their winners in memory).
export TRITON_CACHE_DIR=$work/triton-cache TUNEKIT_CACHE_DIR=$work/cache \
  TUNEKIT_LOG_DIR=$work/logs PYTHONUNBUFFERED=1
status=0

say() { echo "[graph_timing.sh $(date +%H:%M:%S)] $*"; }

if ! "$py" -c 'import torch, triton, sys; sys.exit(0 if torch.cuda.is_available() else 3)' \
  >"$out/env.log" 2>&1; then
  echo "graph_timing.sh: $py needs PyTorch and Triton with a CUDA device:"
  cat "$out/env.log"
  exit 1
fi
nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true

say "installing tunekit from $root"
if ! (cd "$root" && "$py" -m pip install --no-build-isolation --no-deps -v .) >"$out/pip.log" 2>&1
then
  echo "pip install failed:"
  tail -n 40 "$out/pip.log"
  exit 1
fi
cd "$work" # not the source tree, so that the installed package is the one imported
script=$root/bench/measure/graph_timing.py

say "compiling every config once"
if ! "$py" "$script" warm 2>&1 | tee "$out/warm.log"; then
  echo "warm failed (warm.log)"
  exit 1
fi

tuned=()
for i in $(seq 1 "$repeats"); do
  for mode in eager graph; do
    say "tuning, timing=$mode, process $i/$repeats"
    if "$py" "$script" tune --timing "$mode" --out "$out/tune-$mode-$i.json" 2>&1 |
      tee "$out/tune-$mode-$i.log"; then
      tuned+=("$out/tune-$mode-$i.json")
    else
      echo "tune $mode $i FAILED (tune-$mode-$i.log)"
      status=1
    fi
  done
done
existing=()
for f in "${tuned[@]}"; do
  [ -s "$f" ] && existing+=("$f")
done
if ((${#existing[@]} == 0)); then
  echo "graph_timing.sh: no tuning run succeeded"
  exit 1
fi

if [ "${GRAPH_TIMING_CXX:-1}" = 1 ]; then
  build=$work/build-cxx
  say "C++ graph timing: building tunekit_cuda_gpu_tests"
  if cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTUNEKIT_WERROR=OFF -DTUNEKIT_CUDA=ON -DTUNEKIT_MPI=OFF -DTUNEKIT_SERVE=OFF \
    >"$out/cxx-build.log" 2>&1 &&
    cmake --build "$build" --target tunekit_cuda_gpu_tests tunekit_cuda_unit_tests \
      >>"$out/cxx-build.log" 2>&1; then
    "$build/tests/cuda/tunekit_cuda_unit_tests" --gtest_filter='graph_timing.*' \
      >"$out/cxx-tests.log" 2>&1 || status=1
    "$build/tests/cuda/tunekit_cuda_gpu_tests" --gtest_filter='graph_measurer_test.*' \
      >>"$out/cxx-tests.log" 2>&1 || status=1
    grep -E "^\[  (PASSED|FAILED) |^fill of|FAILED" "$out/cxx-tests.log" || true
  else
    echo "C++ build failed (cxx-build.log; it needs nlohmann-json and OpenSSL headers):"
    tail -n 15 "$out/cxx-build.log"
  fi
fi

say "timing every config inside a captured graph of $launches launches, $rounds rounds"
if ! "$py" "$script" compare --out "$out/compare.json" --launches "$launches" \
  --rounds "$rounds" "${existing[@]}" 2>&1 | tee "$out/compare.log"; then
  echo "compare FAILED (compare.log)"
  exit 1
fi
sed -n '/^| kernel |/,$p' "$out/compare.log" >"$out/summary.md"
echo "graph_timing.sh: exit $status (results in $out)"
exit $status
