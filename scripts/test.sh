#!/usr/bin/env bash
# Configures, builds and runs tunekit's tests (GPU tests are skipped where no GPU exists).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" -LE gpu --output-on-failure -j"$(nproc)"
