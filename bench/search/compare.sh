#!/usr/bin/env bash
# Compares tunekit's search strategies with Kernel Tuner's and Optuna's on measured spaces: creates a
# virtual environment, installs kernel_tuner and optuna from PyPI, runs their strategies
# (compare.py) and tunekit's (tunekit_replay) over the same files, same seeds, same counting, and
# prints the tables. tunekit's tables also give the time-based score and both countings of failures
# (charged: a failure uses an evaluation, as Kernel Tuner counts one in max_fevals; free: it costs
# nothing); the joined tables use the charged counting.
#
#   bench/search/compare.sh [build-dir] [files...]     (default: build, the GEMM and convolution files)
# Environment: SEEDS (default 20), SLOW_SEEDS (seeds of bayes_opt and Optuna TPE, default SEEDS),
# JOBS (parallel runs, default all cores), VENV (default .venv-search-compare), OUT (directory for
# the JSON and logs, default a new temporary one), HELD_OUT (prefixes of the files not used to
# choose tunekit's hyperparameters, reported apart by report.py; default convolution).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
data=$root/../shared/data/search-spaces
files=("$@")
if ((${#files[@]} == 0)); then
  files=("$data"/GEMM_*.json.gz "$data"/convolution_*.json.gz)
fi
seeds=${SEEDS:-20}
venv=${VENV:-$root/.venv-search-compare}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q kernel_tuner optuna
fi
"$venv/bin/python" -c 'import kernel_tuner, optuna; print("kernel_tuner", kernel_tuner.__version__, "optuna", optuna.__version__)'
cmake --build "$build" --target tunekit_replay >/dev/null
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
echo "## tunekit (tunekit_replay, $seeds seeds)"
"$build/bench/replay/tunekit_replay" --seeds "$seeds" --json "$out/tunekit.json" "${files[@]}"
echo
echo "## tunekit with transfer (3 distinct best of each other GPU of the same kernel, $seeds seeds)"
"$build/bench/replay/tunekit_replay" --strategy hybrid,tpe --seeds "$seeds" --transfer 3 \
  --json "$out/tunekit-transfer.json" "${files[@]}"
echo
echo "## Kernel Tuner and Optuna (compare.py)"
"$venv/bin/python" "$root/bench/search/compare.py" --seeds "$seeds" \
  --slow-seeds "${SLOW_SEEDS:-$seeds}" --jobs "${JOBS:-$(nproc)}" --json "$out/external.json" \
  "${files[@]}" 2>"$out/external.log"
echo
echo "## All together (held out: ${HELD_OUT:-convolution})"
python3 "$root/bench/search/report.py" --tunekit "$out/tunekit.json" \
  --transfer "$out/tunekit-transfer.json" --external "$out/external.json" \
  --held-out "${HELD_OUT:-convolution}" --json "$out/all.json"
echo
echo "(JSON and logs in $out)"
