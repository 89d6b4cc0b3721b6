#!/usr/bin/env bash
# Writes the measured spaces kept apart for judging tunekit's search, for replay: the brute-forced
# convolution and dedispersion spaces of the FAIR Benchmark Hub for Auto-Tuning (repository
# AutoTuningAssociation/benchmark_hub, cachefiles/<kernel>_milo/<GPU>.json.gz, Kernel Tuner cache
# files) on six GPUs: NVIDIA A100, A4000 and A6000, AMD MI250X, W6600 and W7800 (12 spaces). No
# setting of tunekit was chosen on them, and none may be: they judge, they do not tune. The hub's
# second A6000 measurement of convolution (A6000_original) and its T4 copies are left out.
#
#   bench/search/judging_set.sh CLONE OUT_DIR    (CLONE: a clone of that repository)
#
# Writes OUT_DIR/<kernel>_<GPU>.json.gz as committed (gzip-compressed) at the clone's HEAD, not from
# its work tree, which the repository's hooks may have decompressed.
set -euo pipefail
clone=${1:?usage: judging_set.sh CLONE OUT_DIR}
out=${2:?usage: judging_set.sh CLONE OUT_DIR}
mkdir -p "$out"
for kernel in convolution dedispersion; do
  for gpu in A100 A4000 A6000 MI250X W6600 W7800; do
    path=cachefiles/${kernel}_milo/$gpu.json.gz
    part=$out/.${kernel}_$gpu.json.gz.part # moved into place once whole
    if ! git -C "$clone" show "HEAD:$path" >"$part"; then
      rm -f "$part"
      echo "no $path in $clone" >&2
      exit 1
    fi
    mv "$part" "$out/${kernel}_$gpu.json.gz"
  done
done
echo "12 spaces in $out"
