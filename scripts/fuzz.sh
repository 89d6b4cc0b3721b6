#!/usr/bin/env bash
# Builds the libFuzzer targets of tunekit's readers with clang (address and undefined-behaviour
# sanitizers on) and runs each for a while from seeds taken from the documentation's examples.
#   scripts/fuzz.sh [seconds per reader, default 30] [reader...]
# With reader names (cache_entry, artifact, lookup_table, replay, kernel_tuner, kernel_launcher),
# only those are fuzzed.
# The readers are fuzzed one after another, each alone on a core (two at once on a 2-core machine
# ran about a quarter fewer inputs each). A finding stops the script with the reproducer that
# libFuzzer writes (crash-*, in the build directory's fuzz/ folder).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build=${FUZZ_BUILD_DIR:-build-fuzz}
all_readers=(cache_entry artifact lookup_table replay kernel_tuner kernel_launcher)
readers=("${@:2}")
if ((${#readers[@]} == 0)); then
  readers=("${all_readers[@]}")
fi
for r in "${readers[@]}"; do
  [[ " ${all_readers[*]} " == *" $r "* ]] || { echo "fuzz.sh: no reader named $r" >&2; exit 2; }
done
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
  -DTUNEKIT_FUZZ=ON -DTUNEKIT_WERROR=OFF -DTUNEKIT_BUILD_TESTS=OFF -DTUNEKIT_BUILD_EXAMPLES=OFF \
  -DTUNEKIT_BUILD_BENCH=OFF -DTUNEKIT_INSTALL=OFF -DTUNEKIT_CUDA=OFF -DTUNEKIT_MPI=OFF \
  -DTUNEKIT_BUILD_CLI=OFF -DTUNEKIT_SERVE=OFF >/dev/null
# This configuration's whole build is the core and the fuzz targets: built as one goal, the fuzz
# targets compile in parallel (a --target list is built one target after another).
cmake --build "$build" -j"$(nproc)"
for r in "${readers[@]}"; do
  [ -x "$build/tests/fuzz/tunekit_fuzz_$r" ] || { echo "tunekit_fuzz_$r was not built" >&2; exit 1; }
done

# Seeds: the JSON examples of the documentation, one per reader, and tests/fuzz/corpus. Inputs
# may grow to 256 KiB (deep enough to pass the nesting limit many times over); the dictionary
# (tests/fuzz/json.dict) holds JSON's structure and the members the readers look for.
work="$build/fuzz"
mkdir -p "$work"
python3 - "$work" <<'PY'
import pathlib, re, sys
work = pathlib.Path(sys.argv[1])
def first_json(page):
    text = pathlib.Path(page).read_text()
    return re.search(r"```json\n(.*?)```", text, re.S).group(1)
seeds = {
    "cache_entry": first_json("docs/cache.md"),
    "artifact": first_json("docs/artifacts.md"),
    "lookup_table": first_json("docs/lookup_tables.md"),
    "replay": '{"tune_params": {"a": [1, 2], "b": [3]},'
              ' "cache": {"1,3": {"time": 1.5}, "2,3": "InvalidConfig"}}',
}
# Every reader also starts from nesting just past the limit the parser enforces (512 levels).
deep = "[" * 600 + "]" * 600
for reader in ("cache_entry", "artifact", "lookup_table", "replay", "kernel_tuner",
               "kernel_launcher"):
    d = work / ("corpus-" + reader)
    d.mkdir(exist_ok=True)
    if reader in seeds:
        (d / "seed.json").write_text(seeds[reader])
    (d / "deep.json").write_text(deep)
# Readers with seeds of their own in the repository (tests/fuzz/corpus/<reader>).
for src in pathlib.Path("tests/fuzz/corpus").iterdir():
    d = work / ("corpus-" + src.name)
    d.mkdir(exist_ok=True)
    for f in src.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
PY
dict="$PWD/tests/fuzz/json.dict"
for r in "${readers[@]}"; do
  echo "fuzzing the $r reader for ${seconds} s"
  (cd "$work" && "../tests/fuzz/tunekit_fuzz_$r" -max_total_time="$seconds" -max_len=262144 \
     -dict="$dict" \
     -print_final_stats=1 "corpus-$r" 2>&1 | grep -E "^stat::number_of_executed_units|ERROR|finding" || true)
  if ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* >/dev/null 2>&1; then
    echo "fuzz finding in the $r reader: $(ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null)"
    exit 1
  fi
done
