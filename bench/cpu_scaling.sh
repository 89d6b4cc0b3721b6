#!/usr/bin/env bash
# How much parallel CPU work this machine does, to read the compile pool's speed-up against:
#  1. J CPU-bound processes (a Python loop each) against one: wall time and the CPUs kept busy;
#  2. two such processes pinned to CPU 0 and CPU c, for every c: a pair that runs much slower
#     than the others shares one physical core (hidden from a virtual machine's topology);
#  3. with the nvrtc_scaling benchmark given, J compile workers compiling the same Xgemm configs,
#     each count in a fresh process, with the CPUs they kept busy, the CPU time the hypervisor
#     took (steal), and where the workers were when sampled every 20 ms: running (R), asleep (S,
#     with the kernel function they sleep in) or in uninterruptible I/O (D).
#
#   bash bench/cpu_scaling.sh [PATH/tunekit_cuda_bench_nvrtc_scaling [CONFIGS [WORKER_COUNTS]]]
#
# WORKER_COUNTS defaults to "1 2 4 8 16 <cpus> <2 x cpus> <3 x cpus>"; "-" skips parts 1 and 2.
set -euo pipefail

bench=${1:-}
configs=${2:-384}
cpus=$(nproc)
counts=${3:-"1 2 4 8 16 $cpus $((2 * cpus)) $((3 * cpus))"}

# busy, total and stolen jiffies of all CPUs
jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8+$9, $9}' /proc/stat; }
now() { date +%s.%N; }
# report LABEL T0 JIFFIES0: wall seconds and the mean number of busy CPUs since then
report() {
  local label=$1 t0=$2 j0=$3 t1 j1
  t1=$(now)
  j1=$(jiffies)
  awk -v l="$label" -v t0="$t0" -v t1="$t1" -v j0="$j0" -v j1="$j1" -v n="$cpus" 'BEGIN {
    split(j0, a, " "); split(j1, b, " ");
    printf "| %s | %.2f | %.1f | %.1f |\n", l, t1 - t0, n * (b[1] - a[1]) / (b[2] - a[2]),
      n * (b[3] - a[3]) / (b[2] - a[2]) }'
}
# sample_workers FILE: every 20 ms, one line "STATE WCHAN" per compile worker, until killed (one
# Python process; the workers' ids looked up again every half second)
sample_workers() {
  python3 -c '
import os, sys, time
out = open(sys.argv[1], "w")
def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None
pids, listed = [], 0.0
while True:
    if time.monotonic() - listed > 0.5:
        pids = [p for p in os.listdir("/proc")
                if p.isdigit() and read(f"/proc/{p}/comm") == "tunekit-cuda-wo\n"]
        listed = time.monotonic()
    for p in pids:
        stat, wchan = read(f"/proc/{p}/stat"), read(f"/proc/{p}/wchan")
        if stat and wchan is not None:
            out.write(stat.rsplit(")", 1)[1].split()[0] + " " + (wchan or "-") + "\n")
    out.flush()
    time.sleep(0.02)
' "$1"
}
# states FILE: the share of samples in each state (and sleeping function), most common first
states() {
  awk 'NF == 2 && length($1) == 1' "$1" | sort | uniq -c | sort -rn | head -6 |
    awk -v n="$(wc -l <"$1")" '{ printf "%s%s %s %.0f%%", sep, $2, $3, 100 * $1 / n; sep = ", " }'
}
loop='import os, sys
if len(sys.argv) > 1: os.sched_setaffinity(0, {int(sys.argv[1])})
x = 0
for i in range(10_000_000): x += i'

echo "$cpus CPUs; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket)' || true
if [ "${counts:0:1}" != "-" ]; then
  echo
  echo "| CPU-bound processes | wall s | busy CPUs | stolen CPUs |"
  echo "| --- | --- | --- | --- |"
  for j in 1 2 4 8 16 "$cpus"; do
    [ "$j" -gt "$cpus" ] && continue
    t0=$(now); j0=$(jiffies)
    for _ in $(seq "$j"); do python3 -c "$loop" & done
    wait
    report "$j" "$t0" "$j0"
  done | awk '!seen[$2]++'
  echo
  echo "| pair pinned to CPUs | wall s | busy CPUs | stolen CPUs |"
  echo "| --- | --- | --- | --- |"
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
  echo "| compile workers ($configs configs) | wall s | busy CPUs | stolen CPUs | workers sampled |"
  echo "| --- | --- | --- | --- | --- |"
  "$bench" --curve 1 --configs 8 >/dev/null # NVRTC's files read once
  samples=$(mktemp)
  for j in $counts; do
    sample_workers "$samples" </dev/null >/dev/null 2>&1 &
    sampler=$!
    t0=$(now); j0=$(jiffies)
    "$bench" --curve "$j" --configs "$configs" >/dev/null
    line=$(report "$j" "$t0" "$j0")
    kill "$sampler"
    wait "$sampler" 2>/dev/null || true
    echo "$line $(states "$samples") |"
  done | awk '!seen[$2]++'
  rm -f "$samples"
fi
