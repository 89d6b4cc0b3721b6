"""Kernel Tuner cache files, checked against Kernel Tuner itself: an entry that tunekit's tuner
wrote is exported with ``tunekit cache export kernel-tuner``, read back by Kernel Tuner's own
reader (``kernel_tuner.util.read_cache``) and replayed by ``kernel_tuner.tune_kernel`` in
simulation mode (no GPU), which must report the entry's winner and its time; and a file written by
Kernel Tuner's own writer (``util.store_cache``, ``util.close_cache``) goes through ``cache import
kernel-tuner`` and out again unchanged in what Kernel Tuner reads from it.

The ``tunekit`` command is ``$TUNEKIT_CLI`` when set (a C++ build's), else the installed
package's, else the first on PATH."""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import os
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

kernel_tuner = pytest.importorskip("kernel_tuner")
from kernel_tuner import util as kt_util  # noqa: E402

from conftest import CostMeasurer  # noqa: E402

# Kernel Tuner 1.4 on marks a failed record with "__error__" and its store_cache takes the file and
# the cache; 1.0 to 1.3 put the marker in "time" and take the tuning options.
KT_1_4 = len(inspect.signature(kt_util.store_cache).parameters) == 4


def _cli() -> str | None:
    if os.environ.get("TUNEKIT_CLI"):
        return os.environ["TUNEKIT_CLI"]
    if importlib.util.find_spec("tunekit") is not None:
        import tunekit

        if tunekit.cli_path() is not None:
            return tunekit.cli_path()
    return shutil.which("tunekit")


CLI = _cli()
if CLI is None:
    pytest.skip("no tunekit command (set TUNEKIT_CLI or install the package with its command)",
                allow_module_level=True)


def tunekit_cmd(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)


def tuned_entry(space, cost, fails=(), prune_fn=None, n=4096) -> dict:
    """Tunes `scale` over `space` with tunekit (simulated timings; configs in `fails` raise) and
    returns its winner-cache entry."""
    tunekit = pytest.importorskip("tunekit")
    if importlib.util.find_spec("tunekit._core") is None:
        pytest.skip("the tunekit package is not built")

    def scale(n, *, BLOCK, mode):
        if (BLOCK, mode) in fails:
            raise RuntimeError("too many resources requested for launch")
        return BLOCK

    tuned = tunekit.autotune(space, key_fn=lambda n: (n,), prune_fn=prune_fn, name="scale",
                             version="v1", measurer=CostMeasurer(cost))(scale)
    tuned(n)
    return json.loads(Path(tuned.cache_path(n)).read_text())


def export(tmp_path: Path, key: str = "[4096]") -> Path:
    out = tmp_path / "scale.json"
    run = tunekit_cmd("cache", "export", "kernel-tuner", "--function", "scale", "--key", key,
                      "--out", str(out))
    assert run.returncode == 0, run.stderr
    return out


def simulate(path: Path, restrictions=None):
    """Kernel Tuner's brute-force search over the cache file, in simulation mode."""
    doc = json.loads(path.read_text())
    keys = doc["tune_params_keys"]
    tune_params = {k: doc["tune_params"][k] for k in keys}
    with warnings.catch_warnings():  # it notes that the stand-in kernel has no arguments
        warnings.simplefilter("ignore", UserWarning)
        results, env = kernel_tuner.tune_kernel(
            doc["kernel_name"], "__global__ void scale() {}", tuple(doc["problem_size"]), [],
            tune_params, cache=str(path), simulation_mode=True, strategy="brute_force",
            restrictions=restrictions, quiet=True)
    return results, env, keys


def kt_error(rec: dict):
    """The error of a record as Kernel Tuner's reader gives it, or None."""
    if "__error__" in rec:
        return rec["__error__"]
    return rec["time"] if isinstance(rec.get("time"), kt_util.ErrorConfig) else None


def kt_store(key: str, params: dict, path: Path, cache: dict) -> None:
    if KT_1_4:
        kt_util.store_cache(key, params, str(path), cache)
    else:
        from kernel_tuner.interface import Options

        kt_util.store_cache(key, params, Options(cachefile=str(path), cache=cache))


def kt_key(config: dict, keys) -> str:
    return ",".join(str(config[k]) for k in keys)  # as Kernel Tuner's runners build it


SPACE = [{"BLOCK": b, "mode": m} for b in (64, 128, 256, 512) for m in ("fast", "safe")]


def cost(c):
    return {64: 4.0, 128: 2.0, 256: 1.25, 512: 1.5}[c["BLOCK"]] + (0.5 if c["mode"] == "safe"
                                                                   else 0.0)


def test_kernel_tuner_reads_an_exported_entry_and_replays_it_to_the_same_winner(tmp_path):
    entry = tuned_entry(SPACE, cost, fails={(512, "safe")})
    path = export(tmp_path)
    text = path.read_text()
    assert text.endswith("}\n}")  # what read_cache takes for a closed file

    data = kt_util.read_cache(str(path), open_cache=False)
    assert data["device_name"] == entry["hardware"]["name"]
    assert data["kernel_name"] == "scale"
    assert data["problem_size"] == [4096]
    assert data["tune_params_keys"] == ["BLOCK", "mode"]
    assert data["tune_params"] == {"BLOCK": [64, 128, 256, 512], "mode": ["fast", "safe"]}
    keys = data["tune_params_keys"]
    cache = data["cache"]
    assert len(cache) == len(entry["candidates"]) == 8
    for cand in entry["candidates"]:
        rec = cache[kt_key(cand["config"], keys)]
        assert {k: rec[k] for k in keys} == cand["config"]
        if cand["status"] == "ok":
            assert kt_error(rec) is None and rec["time"] == cand["time_ms"]
        else:
            assert isinstance(kt_error(rec), kt_util.RuntimeFailedConfig)

    results, env, keys = simulate(path)
    winner = entry["winner"]["config"]
    best = env["best_config"]
    assert {k: best[k] for k in keys} == winner == {"BLOCK": 256, "mode": "fast"}
    assert best["time"] == entry["candidates"][entry["winner"]["index"]]["time_ms"] == 1.25
    assert env["device_name"] == entry["hardware"]["name"]
    assert len(results) == 8
    failed = [r for r in results if kt_error(r) is not None]
    assert [(r["BLOCK"], r["mode"]) for r in failed] == [(512, "safe")]


def test_a_pruned_space_replays_with_restrictions_that_keep_what_was_measured(tmp_path):
    # prune_fn leaves (64, safe) out: the file's product has a config no record holds, which
    # Kernel Tuner's simulation refuses unless a restriction excludes it.
    entry = tuned_entry(SPACE, cost, prune_fn=lambda c, n: (c["BLOCK"], c["mode"]) != (64, "safe"))
    path = export(tmp_path)
    present = set(json.loads(path.read_text())["cache"])
    assert len(present) == len(entry["candidates"]) == 7

    def measured(*args):  # Kernel Tuner 1.5 passes a dict of the config, 1.0 to 1.3 its values
        values = [args[0][k] for k in ("BLOCK", "mode")] if isinstance(args[0], dict) else args
        return ",".join(str(v) for v in values) in present

    results, env, keys = simulate(path, restrictions=measured)
    assert {k: env["best_config"][k] for k in keys} == entry["winner"]["config"]
    assert len(results) == 7


def test_a_file_kernel_tuner_wrote_goes_through_import_and_export(tmp_path):
    # The header as process_cache writes it, the records by store_cache, closed by close_cache.
    src = tmp_path / "kt.json"
    header = {"device_name": "NVIDIA H200", "kernel_name": "vector_add", "problem_size": [1 << 20],
              "tune_params_keys": ["block_size_x", "use_ldg"],
              "tune_params": {"block_size_x": [128, 256, 1024], "use_ldg": [0, 1]},
              "objective": "time", "cache": {}}
    src.write_text(json.dumps(header, cls=kt_util.NpEncoder, indent="")[:-3])
    cache: dict = {}
    times = {(128, 0): 0.031, (128, 1): 0.029, (256, 0): 0.0275, (256, 1): 0.02625,
             (1024, 0): None, (1024, 1): 0.033}
    for (bx, ldg), t in times.items():
        params = {"block_size_x": bx, "use_ldg": ldg, "compile_time": 512.5,
                  "verification_time": 0, "benchmark_time": 3.5, "timestamp": "2026-01-02 "
                  "03:04:05.678901+00:00"}
        if t is None:
            params["__error__" if KT_1_4 else "time"] = kt_util.RuntimeFailedConfig()
        else:
            params.update(time=t, times=[t * 0.9, t, t * 1.1])
        kt_store(f"{bx},{ldg}", params, src, cache)
    kt_util.close_cache(str(src))

    run = tunekit_cmd("cache", "import", "kernel-tuner", str(src), "--function", "vector_add")
    assert run.returncode == 0, run.stderr
    assert "6 configs (1 failed) of NVIDIA H200" in run.stdout
    out = tmp_path / "out.json"
    run = tunekit_cmd("cache", "export", "kernel-tuner", "--function", "vector_add", "--key",
                      f"[{1 << 20}]", "--out", str(out))
    assert run.returncode == 0, run.stderr

    before = kt_util.read_cache(str(src), open_cache=False)
    after = kt_util.read_cache(str(out), open_cache=False)
    for field in ("device_name", "problem_size", "tune_params_keys", "tune_params"):
        assert after[field] == before[field], field
    assert after["cache"].keys() == before["cache"].keys()
    for key, rec in before["cache"].items():
        got = after["cache"][key]
        assert type(kt_error(got)) is type(kt_error(rec)), key
        if kt_error(rec) is None:
            assert got["time"] == rec["time"] and math.isclose(got["compile_time"], 512.5)
        assert got["timestamp"] == "2026-01-02 03:04:05+00:00"
