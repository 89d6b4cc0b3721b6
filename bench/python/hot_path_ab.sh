#!/usr/bin/env bash
# The Python hot path, A/B and interleaved: the package built from BEFORE_SRC (another checkout)
# and from this tree, each installed into its own directory, then the host hot path
# (bench/python/hot_path.py) and the GPU one (gpu_examples.py hot-path) run alternately ROUNDS
# times, so that the machine's drift (other tenants, clocks) falls on both sides alike.
#
#   bash bench/python/hot_path_ab.sh OUT_DIR BEFORE_SRC [ROUNDS]
#
# OUT_DIR receives pip-before.log, pip-after.log, host-<side>-<round>.log, ab-<side>.jsonl and
# prints a table of the medians last.
set -uo pipefail
out=${1:?usage: bench/python/hot_path_ab.sh OUT_DIR BEFORE_SRC [ROUNDS]}
before=$(cd "${2:?usage: bench/python/hot_path_ab.sh OUT_DIR BEFORE_SRC [ROUNDS]}" && pwd)
rounds=${3:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${PYTHON:-python3}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
work=$(mktemp -d /tmp/tunekit-python-ab.XXXXXX)
export TUNEKIT_CACHE_DIR=$work/cache TUNEKIT_LOG_DIR=$work/logs
for side in before after; do
  src=$root
  [ "$side" = before ] && src=$before
  if ! "$py" -m pip install --no-build-isolation --no-deps --target "$work/$side" "$src" \
    >"$out/pip-$side.log" 2>&1; then
    echo "pip install ($side) failed:"
    tail -n 30 "$out/pip-$side.log"
    exit 1
  fi
done
cd "$work"
for r in $(seq "$rounds"); do
  for side in before after; do
    PYTHONPATH=$work/$side "$py" "$root/bench/python/hot_path.py" >"$out/host-$side-$r.log" 2>&1
    PYTHONPATH=$work/$side TUNEKIT_CACHE_DIR=$work/cache-$side-$r "$py" \
      "$root/bench/python/gpu_examples.py" hot-path --out "$out/ab-$side.jsonl" \
      >"$out/gpu-$side-$r.log" 2>&1 || echo "round $r $side: gpu_examples failed"
  done
done
"$py" - "$out" "$rounds" <<'PY'
import json, re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
print(f"| median of {rounds} interleaved rounds | before | after |\n|---|---|---|")
host = {}
for side in ("before", "after"):
    vals = []
    for r in range(1, rounds + 1):
        m = re.search(r"added by tunekit\s+([\d.]+) ns \(([\d.]+) ns besides",
                      open(f"{out}/host-{side}-{r}.log").read())
        if m:
            vals.append((float(m.group(1)), float(m.group(2))))
    host[side] = vals
gpu = {s: [json.loads(l)["hot_path"] for l in open(f"{out}/ab-{s}.jsonl")]
       for s in ("before", "after")}
def med(xs):
    return statistics.median(xs) if xs else float("nan")
print(f"| host: added by tunekit (ns) | {med([v[0] for v in host['before']]):.0f} | "
      f"{med([v[0] for v in host['after']]):.0f} |")
print(f"| host: besides key_fn (ns) | {med([v[1] for v in host['before']]):.0f} | "
      f"{med([v[1] for v in host['after']]):.0f} |")
for k, label in (("by_hand_us", "GPU: host function by hand (us)"),
                 ("tunekit_us", "GPU: tunekit.autotune resolved (us)"),
                 ("tunekit_added_us", "GPU: added over by hand (us)"),
                 ("triton_added_us", "GPU: triton.autotune added (us)")):
    print(f"| {label} | {med([g[k] for g in gpu['before']]):.2f} | "
          f"{med([g[k] for g in gpu['after']]):.2f} |")
PY
