#!/usr/bin/env bash
# Writes eight more measured spaces for replay: the convolution and pnpoly spaces measured with the
# kernels of the BAT benchmark suite (the data of its iWAPT 2023 paper, as the commit that added
# them says) on NVIDIA RTX 2080 Ti, RTX 3060 (laptop), RTX 3090 and RTX Titan, Kernel Tuner cache
# files in the repository fjwillemsen/PhD-autotuning (commit 59a5e25,
# cached_data_used/cachefiles/<kernel>/<GPU>.json; later commits removed them). They record the
# configs that failed to compile or run (22-23% of the convolution spaces, 8-9% of pnpoly's) and
# the compile time of each evaluation. Same kernels as bench/search/held_out.sh's, four other GPUs.
#
#   bench/search/bat_set.sh CLONE OUT_DIR    (CLONE: a clone of that repository, with its history)
#
# Writes OUT_DIR/<kernel>_<GPU>.json.gz.
set -euo pipefail
clone=${1:?usage: bat_set.sh CLONE OUT_DIR}
out=${2:?usage: bat_set.sh CLONE OUT_DIR}
commit=59a5e251fbc86e0d33500a2f0fe46f2a7ed7f30c
mkdir -p "$out"
for kernel in convolution pnpoly; do
  for gpu in RTX_2080_Ti RTX_3060_laptop RTX_3090 RTX_Titan; do
    path=cached_data_used/cachefiles/$kernel/$gpu.json
    part=$out/.${kernel}_$gpu.json.gz.part # moved into place once whole
    if ! git -C "$clone" show "$commit:$path" | gzip -n >"$part"; then
      rm -f "$part"
      echo "no $path at $commit in $clone" >&2
      exit 1
    fi
    mv "$part" "$out/${kernel}_$gpu.json.gz"
  done
done
echo "8 spaces in $out"
