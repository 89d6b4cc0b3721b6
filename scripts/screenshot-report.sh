#!/usr/bin/env bash
# Checks a `tunekit report` page in a real browser and takes its screenshot: headless Chromium
# (Debian's `chromium` package: apt-get install chromium) loads the page with every network name
# unresolvable, the script fails on a console error or when fewer plots rendered than the page
# holds, and writes the screenshot. A developer script, not part of CI (Chromium is heavy).
#
#   scripts/screenshot-report.sh REPORT.html [OUT.png] [WIDTHxHEIGHT]
#   scripts/screenshot-report.sh --demo [OUT.png]   # build the demo cache (scripts/report_demo.cpp,
#                                                   # real host searches) and report on it first
#
# --demo needs a build of the core (BUILD_DIR, default `build`; the tunekit_core target) and a
# Python with the tunekit package and plotly installed (PYTHON, default python3; see docs/report.md).
set -euo pipefail
cd "$(dirname "$0")/.."
chromium=${CHROMIUM:-chromium}
command -v "$chromium" >/dev/null || {
  echo "screenshot-report: $chromium not found (apt-get install chromium)" >&2
  exit 2
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ ${1:-} == --demo ]]; then
  build=${BUILD_DIR:-build}
  out=${2:-docs/report-example.png}
  size=${3:-1300x2600}
  lib="$build/src/core/libtunekit_core.a"
  [[ -f $lib ]] || {
    echo "screenshot-report: $lib not found (cmake --build $build --target tunekit_core)" >&2
    exit 2
  }
  libs=(-lcrypto -pthread)
  grep -q '^ZLIB_FOUND:.*=TRUE' "$build/CMakeCache.txt" 2>/dev/null && libs+=(-lz)
  c++ -std=c++20 -O2 -Iinclude -I"$build/include" scripts/report_demo.cpp "$lib" "${libs[@]}" \
    -o "$work/report_demo"
  "$work/report_demo" "$work/cache"
  page=${REPORT_OUT:-$work/report.html}
  "${PYTHON:-python3}" -m tunekit.report --cache-dir "$work/cache" -o "$page"
else
  page=${1:?usage: scripts/screenshot-report.sh REPORT.html [OUT.png] [WIDTHxHEIGHT] | --demo [OUT.png]}
  out=${2:-report.png}
  size=${3:-1300x2600}
fi

url="file://$(realpath "$page")"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
  --user-data-dir="$work/profile" --host-resolver-rules="MAP * ~NOTFOUND"
  --enable-logging=stderr --v=0 --virtual-time-budget=10000)

# The DOM after the scripts ran: plotly marks each rendered plot `js-plotly-plot`.
"$chromium" "${flags[@]}" --dump-dom "$url" >"$work/dom.html" 2>"$work/console.log" || true
figures=$(grep -o 'class="fig fig-' "$page" | wc -l)
rendered=$(grep -o 'class="plotly-graph-div js-plotly-plot"' "$work/dom.html" | wc -l)
errors=$(grep -E 'CONSOLE|Uncaught|ERR_' "$work/console.log" | grep -viE 'INFO:CONSOLE.*"\[?debug' || true)

"$chromium" "${flags[@]}" --window-size="${size/x/,}" --screenshot="$work/shot.png" "$url" \
  >/dev/null 2>>"$work/console.log" || true
[[ -s $work/shot.png ]] || {
  echo "screenshot-report: no screenshot written; chromium said:" >&2
  tail -20 "$work/console.log" >&2
  exit 1
}
cp "$work/shot.png" "$out"
echo "screenshot-report: $page: $rendered of $figures plots rendered; screenshot $out"
if [[ -n $errors ]]; then
  echo "screenshot-report: console messages:" >&2
  echo "$errors" >&2
  exit 1
fi
if ((rendered < figures)); then
  echo "screenshot-report: only $rendered of $figures plots rendered" >&2
  exit 1
fi
