#!/usr/bin/env bash
# Triton's cache_results files taken by tunekit.triton as measurements, on a GPU machine with
# PyTorch and Triton (bench/triton/cache_results.py), after installing tunekit from this tree.
#
#   bash bench/triton/cache_results.sh OUT_DIR
#
# OUT_DIR receives pip.log, cache_results.log (its table last) and cache_results.json.
set -uo pipefail
out=${1:?usage: bench/triton/cache_results.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$(dirname "${BASH_SOURCE[0]}")/install.sh"
work=$(mktemp -d /tmp/tunekit-cache-results.XXXXXX)
cd "$work" # not the source tree, so that the installed package is the one imported
PYTHONUNBUFFERED=1 "$py" "$root/bench/triton/cache_results.py" --out "$out" 2>&1 |
  tee "$out/cache_results.log"
rc=${PIPESTATUS[0]}
cd / && rm -rf "$work"
exit "$rc"
