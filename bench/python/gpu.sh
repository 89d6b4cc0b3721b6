#!/usr/bin/env bash
# tunekit for Python on a GPU machine with PyTorch and Triton (no network needed: scikit-build-core,
# nanobind, CMake and ninja come with such an image; the C++ build needs nlohmann-json and
# OpenSSL's headers, as bench/gpu.sh does). Installs the package from this tree and runs
# gpu_examples.py's sections; the dist section needs 2 GPUs (it is skipped with fewer).
#
#   bash bench/python/gpu.sh OUT_DIR
#
# OUT_DIR receives pip.log, examples.log, pytest.log (tests/python with PyTorch: CUDA events, two
# gloo ranks), host-hot-path.log, hot-path.log, artifact.log, inplace.log, dist.log,
# dist-contextual.log and python-gpu.jsonl (one JSON line per section).
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
# The offline round trip: forced tuning writes the artifact, a fresh cache serves it.
art=$work/artifacts
TUNEKIT_ALWAYS_TUNE=1 TUNEKIT_ARTIFACT_DIR=$art TUNEKIT_CACHE_DIR=$work/cache-write \
  "$py" "$root/bench/python/gpu_examples.py" artifact --out "$out/python-gpu.jsonl" 2>&1 |
  tee "$out/artifact.log" || status=1
TUNEKIT_ARTIFACT_DIR=$art TUNEKIT_CACHE_DIR=$work/cache-serve \
  "$py" "$root/bench/python/gpu_examples.py" artifact --out "$out/python-gpu.jsonl" 2>&1 |
  tee -a "$out/artifact.log" || status=1
"$py" "$root/bench/python/gpu_examples.py" inplace --out "$out/python-gpu.jsonl" 2>&1 |
  tee "$out/inplace.log" || status=1
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
# The short table: one line per result.
"$py" - "$out/python-gpu.jsonl" <<'PY' || true
import json, sys
rows = {}
for line in open(sys.argv[1]):
    rows.update({k: v for k, v in json.loads(line).items() if k != "section"})
h = rows.get("hot_path", {})
print("| result | value |\n|---|---|")
if h:
    print(f"| resolved call, added over by hand | {h['tunekit_added_us']:.2f} us "
          f"(goal <= 0.5: {'met' if h['goal_met'] else 'MISSED'}) |")
    print(f"| triton.autotune, added over the launch | {h['triton_added_us']:.2f} us |")
for phase in ("write", "serve"):
    a = rows.get(f"artifact_{phase}")
    if a:
        print(f"| artifact {phase} | source {a['source']}, measured {a['measured']} |")
i = rows.get("inplace")
if i:
    print(f"| in place, max error with / without reset_to_zero | {i['with_reset_max_err']:.3g} / "
          f"{i['without_reset_max_err']:.3g} |")
PY
echo "gpu.sh: exit $status"
exit $status
