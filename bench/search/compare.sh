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
# choose tunekit's hyperparameters, reported apart by report.py; default convolution), DEVELOPMENT
# (instead: suffixes of the files used to choose them, every other held out; e.g. A100,V100,TITAN_RTX
# for the spaces of bench/search/held_out.sh), EXTERNAL (JSON files an earlier compare.py --json
# wrote for these files, space-separated: reused instead of running Kernel Tuner and Optuna again,
# whose results do not change with tunekit; the venv is then not needed), REPLAY_ARGS (more
# arguments for both tunekit_replay runs, e.g. --failed-from-kernel), TRANSFER_ARGS (more for the
# transfer run only, e.g. --source-budget 100: sources as a search of 100 evaluations leaves them),
# KERNELS (comma-separated: a table of each kernel's held-out files, e.g. GEMM,convolution,pnpoly).
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
read -r -a external <<<"${EXTERNAL:-}"
read -r -a replay_args <<<"${REPLAY_ARGS:-}"
read -r -a transfer_args <<<"${TRANSFER_ARGS:-}"
if ((${#external[@]} == 0)); then
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q kernel_tuner optuna
  fi
  "$venv/bin/python" -c 'import kernel_tuner, optuna; print("kernel_tuner", kernel_tuner.__version__, "optuna", optuna.__version__)'
fi
cmake --build "$build" --target tunekit_replay >/dev/null
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
echo "## tunekit (tunekit_replay, $seeds seeds)"
"$build/bench/replay/tunekit_replay" --seeds "$seeds" "${replay_args[@]}" \
  --json "$out/tunekit.json" "${files[@]}"
echo
echo "## tunekit with transfer (3 distinct best of each other GPU of the same kernel, $seeds seeds${TRANSFER_ARGS:+, $TRANSFER_ARGS})"
"$build/bench/replay/tunekit_replay" --strategy hybrid,tpe --seeds "$seeds" --transfer 3 \
  "${replay_args[@]}" "${transfer_args[@]}" --json "$out/tunekit-transfer.json" "${files[@]}"
echo
if ((${#external[@]} == 0)); then
  echo "## Kernel Tuner and Optuna (compare.py)"
  "$venv/bin/python" "$root/bench/search/compare.py" --seeds "$seeds" \
    --slow-seeds "${SLOW_SEEDS:-$seeds}" --jobs "${JOBS:-$(nproc)}" --json "$out/external.json" \
    "${files[@]}" 2>"$out/external.log"
  external=("$out/external.json")
else
  echo "## Kernel Tuner and Optuna: reused from ${external[*]}"
fi
echo
echo "## All together (held out: ${DEVELOPMENT:+all but those ending }${DEVELOPMENT:-${HELD_OUT:-convolution}})"
python3 "$root/bench/search/report.py" --tunekit "$out/tunekit.json" \
  --transfer "$out/tunekit-transfer.json" --external "${external[@]}" \
  --held-out "${HELD_OUT:-convolution}" --development "${DEVELOPMENT:-}" --kernels "${KERNELS:-}" \
  --json "$out/all.json"
echo
echo "(JSON and logs in $out)"
