#!/usr/bin/env bash
# How tuning scales with ranks, one process per rank under mpirun, on CPUs with a simulated measurer
# (bench/scaling/scaling_bench.cpp): a search of one key with its candidates split between the
# ranks (parallel_split), and a campaign of 16 keys split between the ranks. Builds the benchmark,
# runs it on 1 rank (the baseline) and on each rank count given, writes one JSON per count into
# OUT_DIR and prints the curve last: wall time, speed-up, efficiency (speed-up / ranks), the
# slowest rank's time outside measurement (strategy, waiting in collectives, winner cache), and
# whether every rank holds the same winners.
#
#   bash bench/scaling.sh OUT_DIR [RANKS...]        (default ranks: 2 4)
#
# Environment: BUILD_DIR (default build), BUDGET (256), BATCH (16), RUN_MS (1.0: a run of the
# fastest candidate sleeps this long), POLL_US (2000: the MPI communicator's longest sleep between
# polls of a pending collective), COMPILE_MS (0: nothing to compile; else each candidate is first
# compiled, a sleep of about that long, on the rank's share of COMPILE_THREADS, default 16, the
# host's compile threads), LOOKAHEAD (0: proposals made, and compiled, ahead of the batch measured).
# More ranks than cores is fine: a run and a compile sleep, they do not spin.
set -euo pipefail

out=${1:?usage: bench/scaling.sh OUT_DIR [RANKS...]}
shift
ranks=("$@")
if ((${#ranks[@]} == 0)); then
  ranks=(2 4)
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log"
cmake --build "$build" -j "$(nproc)" --target tunekit_scaling_bench >"$out/build.log"
bench=$build/bench/scaling/tunekit_scaling_bench
if [ ! -x "$bench" ]; then
  echo "no $bench: tunekit was configured without MPI (configure.log)" >&2
  exit 1
fi

as_root=()
if [ "$(id -u)" -eq 0 ]; then
  as_root=(--allow-run-as-root)
fi
for n in 1 "${ranks[@]}"; do
  mpirun -np "$n" "${as_root[@]}" --oversubscribe "$bench" --out "$out/scaling-$n.json" \
    --cache-dir "$out/cache-$n" --budget "${BUDGET:-256}" --batch "${BATCH:-16}" \
    --run-ms "${RUN_MS:-1.0}" --poll-us "${POLL_US:-2000}" --compile-ms "${COMPILE_MS:-0}" \
    --compile-threads "${COMPILE_THREADS:-16}" --lookahead "${LOOKAHEAD:-0}" \
    >"$out/scaling-$n.log" 2>&1 ||
    { echo "$n ranks failed:" >&2; tail -n 20 "$out/scaling-$n.log" >&2; exit 1; }
done

python3 - "$out" 1 "${ranks[@]}" <<'PY'
import json, sys
out, counts = sys.argv[1], [int(n) for n in sys.argv[2:]]
runs = {n: json.load(open(f"{out}/scaling-{n}.json")) for n in counts}
base = runs[1]
print(f"budget {base['budget']}, batch {base['batch']}, {base['shapes']} campaign keys, "
      f"run {base['run_ms']} ms, poll {base['poll_us']} us, compile {base['compile_ms']} ms on "
      f"{base['compile_threads']} threads, lookahead {base['lookahead']}")
print("| section | ranks | wall s | speed-up | efficiency | compile wait s | other s | "
      "compiled | same winners |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
ok = True
for section in ("split_search", "campaign"):
    for n in counts:
        s = runs[n][section]
        speedup = base[section]["wall_s"] / s["wall_s"]
        ok = ok and s["same_winners"]
        print(f"| {section} | {n} | {s['wall_s']:.3f} | {speedup:.2f} | {speedup / n:.2f} | "
              f"{s['compile_wait_s_max_rank']:.3f} | {s['other_s_max_rank']:.3f} | "
              f"{int(s['compiled_total'])} | {'yes' if s['same_winners'] else 'NO'} |")
sys.exit(0 if ok else 1)
PY
