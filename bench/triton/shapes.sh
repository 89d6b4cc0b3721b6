#!/usr/bin/env bash
# Shapes on a GPU machine with PyTorch and Triton: a campaign over M for one matmul shape written
# as a per-shape file, then served by the nearest M with no tuning
# (bench/triton/shapes_campaign.py), after installing tunekit from this tree.
#
#   bash bench/triton/shapes.sh OUT_DIR [shapes_campaign.py options]
#
# OUT_DIR receives pip.log, shapes.log (the script's output, its table last), shapes.jsonl and
# per_shape.json.
set -uo pipefail
out=${1:?usage: bench/triton/shapes.sh OUT_DIR [options]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$(dirname "${BASH_SOURCE[0]}")/install.sh"
work=$(mktemp -d /tmp/tunekit-shapes.XXXXXX)
cd "$work" # not the source tree, so that the installed package is the one imported
PYTHONUNBUFFERED=1 "$py" "$root/bench/triton/shapes_campaign.py" --out "$out" "$@" 2>&1 |
  tee "$out/shapes.log"
rc=${PIPESTATUS[0]}
cd / && rm -rf "$work"
exit "$rc"
