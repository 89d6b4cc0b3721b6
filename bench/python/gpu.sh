#!/usr/bin/env bash
# tunekit for Python on a GPU machine with PyTorch and Triton (no network needed: scikit-build-core,
# nanobind, CMake and ninja come with such an image; the C++ build needs nlohmann-json and
# OpenSSL's headers, as bench/gpu.sh does). Installs the package from this tree and runs
# gpu_examples.py's sections; the dist section needs 2 GPUs (it is skipped with fewer).
#
#   bash bench/python/gpu.sh OUT_DIR
#
# OUT_DIR receives pip.log, examples.log, pytest.log (tests/python with PyTorch: CUDA events, two
# gloo ranks), host-hot-path.log, hot-path.log, dist.log, dist-contextual.log and
# python-gpu.jsonl (one JSON line per section).
set -uo pipefail
out=${1:?usage: bench/python/gpu.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${PYTHON:-python3}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
work=$(mktemp -d /tmp/tunekit-python-gpu.XXXXXX)
export TUNEKIT_CACHE_DIR=$work/cache TUNEKIT_LOG_DIR=$work/logs

if ! (cd "$root" && "$py" -m pip install --no-build-isolation --no-deps -v .) >"$out/pip.log" 2>&1
then
  echo "pip install failed:"
  tail -n 40 "$out/pip.log"
  exit 1
fi
cd "$work" # not the source tree, so that the installed package is the one imported
status=0
"$py" "$root/bench/python/gpu_examples.py" examples --out "$out/python-gpu.jsonl" 2>&1 |
  tee "$out/examples.log" || status=1
"$py" -m pytest -q -p no:cacheprovider "$root/tests/python" \
  --ignore="$root/tests/python/test_report.py" 2>&1 | tee "$out/pytest.log" || status=1
"$py" "$root/bench/python/hot_path.py" 2>&1 | tee "$out/host-hot-path.log" || status=1
"$py" "$root/bench/python/gpu_examples.py" hot-path --out "$out/python-gpu.jsonl" 2>&1 |
  tee "$out/hot-path.log" || status=1
gpus=$("$py" -c 'import torch; print(torch.cuda.device_count())')
if [ "${gpus:-0}" -ge 2 ]; then
  "$py" -m torch.distributed.run --nproc-per-node 2 "$root/bench/python/gpu_examples.py" dist \
    --out "$out/python-gpu.jsonl" 2>&1 | tee "$out/dist.log" || status=1
  "$py" -m torch.distributed.run --nproc-per-node 2 "$root/bench/python/gpu_examples.py" \
    dist-contextual --out "$out/python-gpu.jsonl" 2>&1 | tee "$out/dist-contextual.log" ||
    status=1
else
  echo "dist: skipped ($gpus GPU)" | tee "$out/dist.log"
fi
echo "gpu.sh: exit $status"
exit $status
