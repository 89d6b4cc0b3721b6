#!/usr/bin/env bash
# The bf16 matmul tuning campaign (bench/triton/matmul_campaign.py) on a GPU machine with PyTorch
# and Triton: per shape, tunekit.triton.autotune over the whole space, Triton's autotuner over a
# random subset of it, and the two winners against cuBLAS.
#
#   bash bench/triton/campaign.sh OUT_DIR [matmul_campaign.py options]
#   e.g. bash bench/triton/campaign.sh /tmp/mm --shapes 4096x4096x4096 --compile-workers 8
#
# Installs tunekit from this tree first (as bench/triton/peer_tests.sh does), then runs the script
# from a directory outside the source tree, so that the installed package is the one imported.
# The script's time guard (--max-minutes, default 9) counts from the start of this script, the
# install included. OUT_DIR receives pip.log, campaign.log (the script's output), campaign.jsonl
# (one line per shape and contender), campaign.md (the table, printed last), env.json,
# timings/ (each tuner's per-config times) and tunekit-cache/ (tunekit's winner cache entries).
set -uo pipefail
start=$(date +%s)
out=${1:?usage: bench/triton/campaign.sh OUT_DIR [matmul_campaign.py options]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)

. "$(dirname "${BASH_SOURCE[0]}")/install.sh"
echo "pip install: $(( $(date +%s) - start )) s"

work=$(mktemp -d /tmp/tunekit-mm-campaign.XXXXXX)
cd "$work" # not the source tree, so that the installed package is the one imported
# Options given after OUT_DIR come last, so they override --clock-start too.
PYTHONUNBUFFERED=1 "$py" "$root/bench/triton/matmul_campaign.py" --out "$out" \
  --clock-start "$start" "$@" 2>&1 | tee "$out/campaign.log"
rc=${PIPESTATUS[0]}
cd / && rm -rf "$work"
exit "$rc"
