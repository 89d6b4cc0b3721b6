#!/usr/bin/env bash
# Builds the core, its tests and the CLI with address and undefined-behaviour sanitizers and runs
# those tests (no CUDA, no MPI: the sanitizers watch tunekit's own code).
# The compiler is clang (SANITIZE_CXX to change it): the same checks at the same optimization level
# as with GCC, in well under half the compile time (GCC 12's undefined-behaviour instrumentation at
# -O2 is what makes that build slow). The plain build (scripts/test.sh) uses the default compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-sanitize}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNEKIT_SANITIZE=ON -DTUNEKIT_CUDA=OFF \
  -DCMAKE_CXX_COMPILER="${SANITIZE_CXX:-clang++}" \
  -DTUNEKIT_MPI=OFF -DTUNEKIT_NCCL=OFF -DTUNEKIT_BUILD_BENCH=OFF -DTUNEKIT_BUILD_EXAMPLES=OFF \
  -DTUNEKIT_INSTALL=OFF
cmake --build "$build" -j"$(nproc)" --target tunekit_core_tests tunekit_cache_process
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir "$build" -R '^core\.' --output-on-failure -j"$(nproc)"
