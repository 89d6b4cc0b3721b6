#!/usr/bin/env bash
# Writes the measured spaces that tunekit's search settings were not chosen on, for replay: run 1 of
# each space of the data published with Schoonhoven, van Werkhoven and Batenburg (IEEE TEVC 2022;
# repository schoonhovenrichard/GPU_benchmarking_paper, irace_tune/stochastic_cache_files), the
# same source as ../shared/data/search-spaces, which holds only its A100, V100 and TITAN RTX files.
# The others: GEMM, convolution and pnpoly on GTX 1080 Ti, GTX Titan X, K20, P100, RTX 2070 SUPER,
# and GEMM and convolution on the AMD MI50 (17 spaces).
#
#   bench/search/held_out.sh CLONE OUT_DIR    (CLONE: a clone of that repository)
#
# Writes OUT_DIR/<kernel>_<GPU>.json.gz (the MI50 files keep their own names), every GPU's file,
# those already in ../shared/data included, so that leave-one-GPU-out transfer sees every GPU.
set -euo pipefail
clone=${1:?usage: held_out.sh CLONE OUT_DIR}
out=${2:?usage: held_out.sh CLONE OUT_DIR}
dir=irace_tune/stochastic_cache_files
mkdir -p "$out"
n=0
for f in $(git -C "$clone" ls-tree --name-only HEAD "$dir/" | grep '_processed_run1\.json$'); do
  name=$(basename "$f" _processed_run1.json)
  git -C "$clone" show "HEAD:$f" | gzip -n >"$out/$name.json.gz"
  n=$((n + 1))
done
if ((n == 0)); then
  echo "no $dir/*_processed_run1.json in $clone" >&2
  exit 1
fi
echo "$n spaces in $out"
