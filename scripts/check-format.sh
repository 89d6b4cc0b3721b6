#!/usr/bin/env bash
# Checks that C++ files follow the repository's .clang-format (clang-format --dry-run -Werror).
# With file arguments, checks those; without, every tracked C++ file. Prints each file that needs
# formatting and exits non-zero if any does. Fix with: clang-format -i FILE...
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null; then
  echo "check-format: $clang_format not found (scripts/install-deps.sh installs clang-format)" >&2
  exit 2
fi
if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h')
fi
bad=0
for f in "${files[@]}"; do
  if ! "$clang_format" --style=file --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "needs formatting: $f"
    bad=$((bad + 1))
  fi
done
echo "check-format: ${#files[@]} files, $bad need formatting"
((bad == 0))
