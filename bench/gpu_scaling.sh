#!/usr/bin/env bash
# How tuning scales with GPUs, one process per GPU: on 1 GPU of this machine (the baseline) and on
# each rank count given,
#  - C++ (bench/nccl/scaling_bench.cpp, under mpirun, over NCCL): the runtime-compiled GEMM's
#    split search (fixed budget, batch, lookahead and seed) and a campaign of 16 shapes;
#  - Python (bench/python/scaling.py, under torchrun, autotune_pg over NCCL): a Triton matmul's
#    split search and a campaign of 16 shapes, when PyTorch and Triton are installed.
# Writes every JSON and log into OUT_DIR and prints the curve last: wall time of the slowest rank,
# speed-up over 1 GPU, efficiency (speed-up / ranks), where the time went (waiting for compiles,
# inside the collectives), the configs compiled on all ranks together, and whether every rank
# holds the same winners.
#
#   bash bench/gpu_scaling.sh OUT_DIR [RANKS...]     (default: 2, 4, 8 up to the GPUs visible)
#
# Environment: BUILD_DIR (default build-gpu-scaling), SIZE (4096), BUDGET (256), BATCH (16),
# LOOKAHEAD (16; the split makes N x as many proposals ahead, each rank's share being this many),
# CAMPAIGN_BUDGET (24), PYTHON (python3; PY_SECTIONS=0 skips Python),
# SHARE_GPUS=1 (rank counts above the GPUs run over MPI with ranks sharing GPUs: a check of the
# logic only, marked "shared" in the table; without it they are skipped). NVLink multicast stays off
# (NCCL_NVLS_ENABLE=0).
set -uo pipefail

out=${1:?usage: bench/gpu_scaling.sh OUT_DIR [RANKS...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build-gpu-scaling}
py=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
ranks=("$@")
if ((${#ranks[@]} == 0)); then
  for n in 2 4 8; do
    ((n <= gpus)) && ranks+=("$n")
  done
fi
say() { echo "[gpu_scaling.sh $(date +%H:%M:%S)] $*" | tee -a "$out/gpu_scaling.log"; }
say "$gpus GPUs; rank counts: 1 ${ranks[*]}"
nvidia-smi -L >>"$out/gpu_scaling.log" 2>&1 || true
status=0

as_root=()
if [ "$(id -u)" -eq 0 ]; then
  as_root=(--allow-run-as-root)
fi

if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DTUNEKIT_WERROR=OFF -DTUNEKIT_BUILD_TESTS=OFF -DTUNEKIT_BUILD_BENCH=ON -DTUNEKIT_NCCL=ON \
  >"$out/configure.log" 2>&1 ||
  ! cmake --build "$build" -j "$(nproc)" --target tunekit_nccl_scaling_bench \
    >"$out/build.log" 2>&1; then
  say "build failed (configure.log, build.log):"
  tail -n 20 "$out/build.log" "$out/configure.log" 2>/dev/null
  exit 1
fi
bench=$build/bench/nccl/tunekit_nccl_scaling_bench

for n in 1 "${ranks[@]}"; do
  comm=nccl
  if ((n > gpus)); then
    if [ "${SHARE_GPUS:-0}" != 1 ]; then
      say "$n ranks: only $gpus GPUs, skipped (SHARE_GPUS=1 runs them over MPI on shared GPUs)"
      continue
    fi
    comm=mpi
  fi
  say "C++: $n ranks over $comm"
  if ! mpirun -np "$n" "${as_root[@]}" --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE \
    "$bench" --out "$out/cpp-$n.json" --cache-dir "$out/cache-$n" --comm "$comm" \
    --size "${SIZE:-4096}" --budget "${BUDGET:-256}" --batch "${BATCH:-16}" \
    --lookahead "${LOOKAHEAD:-16}" --campaign-budget "${CAMPAIGN_BUDGET:-24}" \
    >"$out/cpp-$n.log" 2>&1; then
    say "C++ on $n ranks failed (cpp-$n.log):"
    tail -n 20 "$out/cpp-$n.log" | sed 's/^/    /'
    status=1
  fi
  rm -rf "$out/cache-$n"
done

if [ "${PY_SECTIONS:-1}" = 1 ] && "$py" -c 'import torch, triton' 2>/dev/null; then
  say "Python: installing tunekit from this tree"
  if (cd "$root" && "$py" -m pip install --no-build-isolation --no-deps -v .) >"$out/pip.log" 2>&1
  then
    work=$(mktemp -d /tmp/tunekit-gpu-scaling.XXXXXX)
    for n in 1 "${ranks[@]}"; do
      backend=nccl
      if ((n > gpus)); then
        [ "${SHARE_GPUS:-0}" = 1 ] || continue
        backend=gloo # ranks sharing a GPU: NCCL refuses them
      fi
      say "Python: $n ranks over $backend"
      if ! (cd "$work" && "$py" -m torch.distributed.run --standalone --nproc-per-node "$n" \
        "$root/bench/python/scaling.py" --backend "$backend" --out "$out/python-$n.json") \
        >"$out/python-$n.log" 2>&1
      then
        say "Python on $n ranks failed (python-$n.log):"
        tail -n 20 "$out/python-$n.log" | sed 's/^/    /'
        status=1
      fi
    done
    rm -rf "$work"
  else
    say "pip install failed (pip.log)"
    status=1
  fi
else
  say "Python sections skipped (PY_SECTIONS=0, or no torch and triton for $py)"
fi

"$py" - "$out" 1 "${ranks[@]}" <<'PY' | tee "$out/summary.md"
import json, os, sys
out, counts = sys.argv[1], [int(n) for n in sys.argv[2:]]
print("| part | section | ranks | wall s | speed-up | efficiency | compile wait s (max rank) | "
      "collectives s (max rank) | compiled (all ranks) | same winners |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
ok = True
for part in ("cpp", "python"):
    runs = {n: json.load(open(f"{out}/{part}-{n}.json")) for n in counts
            if os.path.exists(f"{out}/{part}-{n}.json")}
    if 1 not in runs:
        continue
    for section in ("split_search", "campaign"):
        base = runs[1].get("sections", runs[1])[section]["wall_s"]
        for n, r in sorted(runs.items()):
            s = dict(r.get("sections", r)[section])  # Python's JSON keeps them under "sections"
            if "compile_s_by_rank" in s:  # Python: a rank's first runs of its configs
                s["wait_for_compile_s"] = {"max": max(s["compile_s_by_rank"])}
            speedup = base / s["wall_s"]
            shared = n > 1 and (r.get("communicator") == "mpi" or r.get("backend") == "gloo")
            ok = ok and s["same_winners"]
            get = lambda k: (f"{s[k]['max']:.2f}" if isinstance(s.get(k), dict)
                             else (f"{s[k]:.2f}" if k in s else "-"))
            print(f"| {part} | {section} | {n}{' (shared)' if shared else ''} | "
                  f"{s['wall_s']:.2f} | {speedup:.2f} | {speedup / n:.2f} | "
                  f"{get('wait_for_compile_s')} | {get('collectives_s')} | "
                  f"{int(s['compiled_total']) if 'compiled_total' in s else '-'} | "
                  f"{'yes' if s['same_winners'] else 'NO'} |")
sys.exit(0 if ok else 1)
PY
[ "${PIPESTATUS[0]}" = 0 ] || status=1
exit $status
