# Sourced by bench/triton/*.sh: installs tunekit from this tree into the Python the GPU machine
# runs (`$PYTHON`, else python3), logging to "$out/pip.log"; exits when that fails. Sets `root`
# (the source tree) and `py`. The caller sets `out` first.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${PYTHON:-python3}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
if ! (cd "$root" && "$py" -m pip install --no-build-isolation --no-deps -v .) >"$out/pip.log" 2>&1
then
  echo "pip install failed:"
  tail -n 40 "$out/pip.log"
  exit 1
fi
