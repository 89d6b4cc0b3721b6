#!/usr/bin/env bash
# How much parallel CPU work this machine does, to read the compile pool's speed-up against:
#  1. J CPU-bound processes (a Python loop each) against one: wall time and the CPUs kept busy;
#  2. two such processes pinned to CPU 0 and CPU c, for every c: a pair that runs much slower
#     than the others shares one physical core (hidden from a virtual machine's topology);
#  3. with the nvrtc_scaling benchmark given, J compile workers compiling the same Xgemm configs,
#     each count in a fresh process, with the CPUs they kept busy.
#
#   bash bench/cpu_scaling.sh [PATH/tunekit_cuda_bench_nvrtc_scaling [CONFIGS [WORKER_COUNTS]]]
#
# WORKER_COUNTS defaults to "1 2 4 8 16 <cpus> <2 x cpus> <3 x cpus>"; "-" skips parts 1 and 2.
set -euo pipefail

bench=${1:-}
configs=${2:-384}
cpus=$(nproc)
counts=${3:-"1 2 4 8 16 $cpus $((2 * cpus)) $((3 * cpus))"}

# busy and total jiffies of all CPUs
jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
now() { date +%s.%N; }
# report LABEL T0 JIFFIES0: wall seconds and the mean number of busy CPUs since then
report() {
  local label=$1 t0=$2 j0=$3 t1 j1
  t1=$(now)
  j1=$(jiffies)
  awk -v l="$label" -v t0="$t0" -v t1="$t1" -v j0="$j0" -v j1="$j1" -v n="$cpus" 'BEGIN {
    split(j0, a, " "); split(j1, b, " ");
    printf "| %s | %.2f | %.1f |\n", l, t1 - t0, n * (b[1] - a[1]) / (b[2] - a[2]) }'
}
loop='import os, sys
if len(sys.argv) > 1: os.sched_setaffinity(0, {int(sys.argv[1])})
x = 0
for i in range(10_000_000): x += i'

echo "$cpus CPUs; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket)' || true
if [ "${counts:0:1}" != "-" ]; then
  echo
  echo "| CPU-bound processes | wall s | busy CPUs |"
  echo "| --- | --- | --- |"
  for j in 1 2 4 8 16 "$cpus"; do
    [ "$j" -gt "$cpus" ] && continue
    t0=$(now); j0=$(jiffies)
    for _ in $(seq "$j"); do python3 -c "$loop" & done
    wait
    report "$j" "$t0" "$j0"
  done | awk '!seen[$2]++'
  echo
  echo "| pair pinned to CPUs | wall s | busy CPUs |"
  echo "| --- | --- | --- |"
  for c in $(seq 1 $((cpus - 1))); do
    t0=$(now); j0=$(jiffies)
    python3 -c "$loop" 0 & python3 -c "$loop" "$c" &
    wait
    report "0 and $c" "$t0" "$j0"
  done
fi
counts=${counts#-}
if [ -n "$bench" ]; then
  echo
  echo "| compile workers ($configs configs) | wall s | busy CPUs |"
  echo "| --- | --- | --- |"
  "$bench" --curve 1 --configs 8 >/dev/null # NVRTC's files read once
  for j in $counts; do
    t0=$(now); j0=$(jiffies)
    "$bench" --curve "$j" --configs "$configs" >/dev/null
    report "$j" "$t0" "$j0"
  done | awk '!seen[$2]++'
fi
