#!/usr/bin/env bash
# Runs the serving load benchmark on CPU ranks and prints a Markdown table (and appends JSON lines
# to OUT.json when OUT is given): one rank (HTTP alone), then four ranks with the communicator
# waiting without a limit (MPI_Wait) and with a timeout at two poll intervals, then a handler
# doing 1 ms of work.
#
#   bash bench/serve/run.sh [BUILD_DIR] [OUT]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
out=${2:-}
bin=$build/bench/serve/tunekit_bench_serve_load
flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
json=()
[ -n "$out" ] && json=(--json "$out.json")

echo "| run | ranks | handler work (us) | communicator timeout | direct call (us) | one client: mean (us) | one client: p99 (us) | added per request (us) | 8 clients: requests/s | 8 clients: p99 (us) | failed |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
run() { mpiexec "${flags[@]}" "$@" "${json[@]}" | grep '^|'; }
run -n 1 "$bin" --label "HTTP alone" --timeout-ms 10000 --poll-us 50
run -n 4 "$bin" --label "4 ranks, MPI_Wait" --timeout-ms 0
run -n 4 "$bin" --label "4 ranks, timeout" --timeout-ms 10000 --poll-us 50
run -n 4 "$bin" --label "4 ranks, timeout, default poll" --timeout-ms 10000 --poll-us 2000
run -n 4 "$bin" --label "4 ranks, 1 ms handler" --timeout-ms 10000 --poll-us 50 --work-us 1000
