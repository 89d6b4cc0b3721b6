#!/usr/bin/env bash
# Triton's own autotuner tests (python/test/unit/runtime/test_autotuner.py) on a GPU machine with
# PyTorch and Triton, run twice: against Triton's triton.autotune, then with triton.autotune and
# triton.runtime.Autotuner replaced by tunekit.triton's before the test module is imported.
#
#   bash bench/triton/peer_tests.sh OUT_DIR PEER_DIR
#
# PEER_DIR holds test_autotuner.py and its conftest.py (the fixtures device, fresh_knobs,
# fresh_triton_cache). Installs tunekit from this tree first (as bench/python/gpu.sh does).
# OUT_DIR receives pip.log, triton.log, dropin.log (pytest -rA), triton.xml, dropin.xml (JUnit),
# hot_path.log and hot_path.jsonl (bench/triton/hot_path.py), compile_pool.log and
# compile_pool.jsonl (bench/triton/compile_pool.py) and table.txt, the per-test comparison
# printed last (before the hot path's and the compile pool's lines).
set -uo pipefail
out=${1:?usage: bench/triton/peer_tests.sh OUT_DIR PEER_DIR}
peer=${2:?usage: bench/triton/peer_tests.sh OUT_DIR PEER_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
peer=$(cd "$peer" && pwd)
for f in test_autotuner.py conftest.py; do
  [ -f "$peer/$f" ] || { echo "peer_tests.sh: $peer/$f is missing"; exit 2; }
done

. "$(dirname "${BASH_SOURCE[0]}")/install.sh"

work=$(mktemp -d /tmp/tunekit-triton-peer.XXXXXX)
cp "$peer/test_autotuner.py" "$peer/conftest.py" "$work/"
# The switch: a pytest plugin (-p tk_dropin) imported before conftest.py and the test module.
cat >"$work/tk_dropin.py" <<'PY'
import os

import triton
import triton.runtime

DROPIN = os.environ.get("TK_DROPIN") == "1"
if DROPIN:
    import tunekit.triton

    triton.autotune = tunekit.triton.autotune
    triton.runtime.Autotuner = tunekit.triton.Autotuner


def pytest_report_header(config):
    which = "tunekit.triton.autotune" if DROPIN else "triton.autotune"
    return f"autotuner under test: {which} (triton {triton.__version__})"
PY

cd "$work" # not the source tree, so that the installed package is the one imported
for run in triton dropin; do
  flag=0
  [ "$run" = dropin ] && flag=1
  TK_DROPIN=$flag TUNEKIT_CACHE_DIR=$work/cache-$run TUNEKIT_LOG_DIR=$work/logs-$run \
    PYTHONPATH="$work${PYTHONPATH:+:$PYTHONPATH}" \
    "$py" -m pytest -rA -p no:cacheprovider -p tk_dropin test_autotuner.py \
    --junitxml="$out/$run.xml" >"$out/$run.log" 2>&1
  echo "$run: pytest exit $? ($(tail -n 1 "$out/$run.log"))"
done

# The resolved launch's host cost against a plain launch and Triton's autotuner.
(cd "$work" && "$py" "$root/bench/triton/hot_path.py" --out "$out/hot_path.jsonl") \
  >"$out/hot_path.log" 2>&1 || echo "hot_path.py failed (see hot_path.log)"

# The compile pool: one key of the bf16 matmul tuned with candidates compiled at their launch,
# then compiled ahead by the pool.
(cd "$work" && "$py" "$root/bench/triton/compile_pool.py" --out "$out/compile_pool.jsonl") \
  >"$out/compile_pool.log" 2>&1 || echo "compile_pool.py failed (see compile_pool.log)"

"$py" - "$out" <<'PY' | tee "$out/table.txt"
import sys
import xml.etree.ElementTree as ET

out = sys.argv[1]


def results(path):
    res = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return res
    for case in root.iter("testcase"):
        name = case.get("name")
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                state = "failed" if child.tag == "failure" else "error"
                break
            if child.tag == "skipped":
                state = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        res[name] = state
    return res


a = results(f"{out}/triton.xml")
b = results(f"{out}/dropin.xml")
names = list(a) + [n for n in b if n not in a]
width = max([len(n) for n in names] + [4])
print(f"{'test':<{width}}  {'triton':<8}  tunekit.triton")
for n in names:
    x, y = a.get(n, "-"), b.get(n, "-")
    mark = "" if x == y else ("  <- better" if y == "passed" else "  <- worse" if x == "passed"
                               else "")
    print(f"{n:<{width}}  {x:<8}  {y}{mark}")
for label, r in (("triton", a), ("tunekit.triton", b)):
    counts = {}
    for s in r.values():
        counts[s] = counts.get(s, 0) + 1
    print(f"{label}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
PY
cat "$out/hot_path.log"
tail -n 3 "$out/compile_pool.log"
