#!/usr/bin/env bash
# Builds tunekit::nccl on a machine with two GPUs, runs its GPU tests and the two-GPU benchmark
# (one process per GPU, under mpirun when the benchmark was built with MPI), writes the JSON and
# logs into OUT_DIR and prints a short table last.
#
#   bash bench/nccl.sh OUT_DIR
#
# The build directory defaults to build-nccl-gpu (TUNEKIT_NCCL_BUILD_DIR overrides it). NVLink
# multicast stays off (NCCL_NVLS_ENABLE=0), as the shared machines require.
set -uo pipefail

out=${1:?usage: bench/nccl.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TUNEKIT_NCCL_BUILD_DIR:-$root/build-nccl-gpu}
jobs=$(nproc 2>/dev/null || echo 4)
export NCCL_NVLS_ENABLE=0
status=0

say() { echo "[nccl.sh $(date +%H:%M:%S)] $*" | tee -a "$out/nccl.log"; }
step() {
  local name=$1
  shift
  say "$name"
  if ! "$@" >"$out/$name.log" 2>&1; then
    say "$name FAILED ($name.log):"
    tail -n 20 "$out/$name.log" | sed 's/^/    /' | tee -a "$out/nccl.log"
    status=1
    return 1
  fi
}

nvidia-smi -L >>"$out/nccl.log" 2>&1 || true
step configure cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTUNEKIT_WERROR=OFF -DTUNEKIT_BUILD_TESTS=ON \
  -DTUNEKIT_BUILD_BENCH=ON -DTUNEKIT_NCCL=ON || exit 1
step build cmake --build "$build" -j "$jobs" --target tunekit_nccl_unit_tests \
  tunekit_nccl_gpu_tests tunekit_nccl_bench || exit 1

step ctest_nccl ctest --test-dir "$build" -R '^nccl\.' --output-on-failure --timeout 120

bench=$build/bench/nccl/tunekit_nccl_bench
args=(--out "$out/nccl.json" --cache-dir "$out/cache")
if grep -q TUNEKIT_BENCH_WITH_MPI "$build/bench/nccl/CMakeFiles/tunekit_nccl_bench.dir/flags.make" \
  2>/dev/null && command -v mpirun >/dev/null; then
  step bench mpirun -np 2 --allow-run-as-root --oversubscribe -x NCCL_NVLS_ENABLE "$bench" "${args[@]}"
else
  say "benchmark built without MPI: two processes, ncclUniqueId through a file"
  idfile=$out/nccl-id
  rm -f "$idfile"
  run_rank() {
    RANK=$1 LOCAL_RANK=$1 WORLD_SIZE=2 TUNEKIT_NCCL_ID_FILE=$idfile "$bench" "${args[@]}"
  }
  both() {
    run_rank 1 >"$out/bench_rank1.log" 2>&1 &
    local pid=$!
    run_rank 0
    local rc0=$?
    wait "$pid"
    local rc1=$?
    [ "$rc0" = 0 ] && [ "$rc1" = 0 ]
  }
  step bench both
fi
rm -rf "$out/cache"

if [ -f "$out/nccl.json" ]; then
  python3 - "$out/nccl.json" <<'PY' | tee "$out/summary.txt"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["ranks"]
print(f"NCCL {d['nccl_version']}, {len(r)} ranks: " + "; ".join(f"rank {x['rank']} on {x['hardware']}" for x in r))
lat = r[0]["collective_latency"]
for k, v in lat.items():
    print(f"  {k:40s} median {v['median_us']:8.1f} us  p90 {v['p90_us']:8.1f} us")
print(f"{'kernel':8s} {'identical':9s} {'split off ms':>12s} {'split on ms':>12s} {'speedup':>8s} {'hit+agree us':>13s} {'hit alone us':>13s} {'agree us':>9s}  winners by rank")
for k in ("scale", "gemm"):
    x = r[0][k]
    h = x["cache_hit"]
    winners = sorted({" | ".join(s["winner_by_rank"]) for s in x["searches"]})
    print(f"{k:8s} {str(all(y[k]['identical_winners_on_all_ranks'] for y in r)):9s} "
          f"{x['tuning_wall_ms_split_off_median']:12.1f} {x['tuning_wall_ms_split_on_median']:12.1f} "
          f"{x['split_speedup']:8.2f} {h['with_agreement']['median_us']:13.1f} "
          f"{h['without_agreement']['median_us']:13.1f} {h['agreement_cost_us']:9.1f}  {winners}")
PY
else
  say "no nccl.json"
  status=1
fi
exit $status
