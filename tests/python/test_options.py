"""Every core option from Python: search settings and the measurement policy, artifacts and the
default, lookup tables and templates, the effort switch, deferred tuning, and the papercuts of a
first use (last_source, NumPy values, fields the function does not take, messages)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import tunekit
from conftest import CostMeasurer

try:
    import numpy as np
except ImportError:  # the NumPy tests skip themselves
    np = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy is not installed")

# A device with a complete identity, so that artifacts can be written and matched.
GPU = {"kind": "cuda", "name": "Test GPU 9000", "arch": "sm_90", "units": 132, "count": 1}


def by_block(cfg):
    return {256: 3.0, 512: 1.0, 1024: 2.0}[cfg["BLOCK"]]


def scale(n, *, BLOCK):
    return (n, BLOCK)


def make(space=None, cost=by_block, fn=scale, key_fn=None, **kw):
    space = space if space is not None else [{"BLOCK": b} for b in (256, 512, 1024)]
    m = CostMeasurer(cost)
    tuned = tunekit.autotune(space, key_fn or (lambda n, *a, **k: (n,)), measurer=m, **kw)(fn)
    return tuned, m


def entry_of(tuned, *args):
    found = tunekit.read_entry(tuned.cache_path(*args))
    assert found["status"] == "found", found["detail"]
    return found["record"]


# ---- search settings and the measurement policy ----------------------------------------------

GRID = [{"A": a, "B": b} for a in range(10) for b in range(10)]


def bowl(cfg):
    return 1.0 + (cfg["A"] - 6) ** 2 + (cfg["B"] - 3) ** 2


def grid_fn(n, *, A, B):
    return (A, B)


def test_budget_in_evaluations_bounds_what_is_measured_and_names_the_strategy():
    tuned, m = make(GRID, bowl, grid_fn, budget=30, strategy="random", seed=7)
    tuned(1)
    assert 0 < len(m.measured) <= 30
    search = entry_of(tuned, 1)["search"]
    assert search["strategy"] == "random" and search["seed"] == 7
    assert search["max_evaluations"] == 30 and search["evaluations"] == len(m.measured)


def test_a_budget_object_sets_time_and_patience():
    tuned, m = make(GRID, bowl, grid_fn, budget=tunekit.Budget(evaluations=50, patience=5))
    tuned(1)
    search = entry_of(tuned, 1)["search"]
    assert search["patience"] == 5 and search["max_evaluations"] == 50
    assert len(m.measured) <= 50


def test_a_space_within_the_budget_is_measured_whole():
    tuned, m = make(budget=3)
    tuned(1)
    assert len(m.measured) == 3 and entry_of(tuned, 1)["search"] is None


def test_a_time_or_patience_limit_holds_for_a_space_within_the_budget():
    # The space fits the 1,000 evaluations, so it would be measured whole; with a limit the
    # strategy orders it and the limit stops it (patience), or it runs out of candidates (time).
    tuned, m = make(GRID, bowl, grid_fn, budget=tunekit.Budget(time_s=600.0))
    tuned(1)
    search = entry_of(tuned, 1)["search"]
    assert search["stop"] == "exhausted" and search["evaluations"] == len(GRID)
    assert len(m.measured) == len(GRID) and tuned.best_config(1) == {"A": 6, "B": 3}
    flat, m = make(GRID, lambda cfg: 1.0, grid_fn, budget=tunekit.Budget(patience=5))
    flat(2)  # another key: key 1's entry above would answer from the cache
    search = entry_of(flat, 2)["search"]
    assert search["stop"] == "patience" and len(m.measured) == 6


@pytest.mark.parametrize("bad", ["10", 0, True, -1])
def test_a_bad_budget_is_refused(bad):
    with pytest.raises((TypeError, ValueError), match="budget|evaluations"):
        make(budget=bad)


def test_start_configs_are_measured_first():
    tuned, m = make(GRID, bowl, grid_fn, budget=20, start_configs=[{"A": 6, "B": 3},
                                                                  {"A": 0, "B": 0}])
    tuned(1)
    assert m.measured[:2] == [{"A": 6, "B": 3}, {"A": 0, "B": 0}]
    assert tuned.best_config(1) == {"A": 6, "B": 3}


def test_batch_size_and_lookahead_are_recorded():
    tuned, _ = make(GRID, bowl, grid_fn, budget=24, batch_size=4, lookahead=2)
    tuned(1)
    search = entry_of(tuned, 1)["search"]
    assert search["batch_size"] == 4 and search["lookahead"] == 2


def test_transfer_from_cache_starts_from_the_winner_of_another_key():
    tuned, _ = make(GRID, bowl, grid_fn, budget=100)
    tuned(1)  # measured whole: the winner is A=6, B=3
    again, m = make(GRID, bowl, grid_fn, budget=20, transfer_from_cache=True)
    again(2)
    assert m.measured[0] == {"A": 6, "B": 3}
    assert entry_of(again, 2)["search"]["transferred"] >= 1


class Spiky(CostMeasurer):
    """BLOCK=256 has the lowest minimum and the highest mean."""

    def measure(self, run, request):
        self.measured.append(dict(request.config))
        for _ in range(request.warmup + request.runs):
            run()
        if request.config["BLOCK"] == 256:
            return [0.5] + [9.0] * (request.runs - 1)
        return [float(by_block(request.config))] * request.runs


@pytest.mark.parametrize("stat,winner", [("mean", 512), ("min", 256), ("median", 512)])
def test_the_statistic_decides(stat, winner):
    m = Spiky(by_block)
    tuned = tunekit.autotune([{"BLOCK": b} for b in (256, 512, 1024)], lambda n: (n,),
                             measurer=m, statistic=stat, warmup=0, runs=5)(scale)
    tuned(1)
    assert tuned.best_config(1) == {"BLOCK": winner}
    assert entry_of(tuned, 1)["policy"]["statistic"] == stat


def test_an_unknown_statistic_is_refused_when_the_tuner_is_built():
    tuned, _ = make(statistic="mode")
    with pytest.raises(ValueError, match="statistic must be 'mean', 'median' or 'min'"):
        tuned(1)


def test_the_early_stop_reaches_the_measurer_and_the_entry():
    tuned, m = make(early_stop_factor=1.5, early_stop_after=2)
    tuned(1)
    policy = entry_of(tuned, 1)["policy"]
    assert policy["early_stop_factor"] == 1.5 and policy["early_stop_after"] == 2


def test_the_typed_options_are_the_options_autotune_takes():
    from tunekit._autotune import _OPTIONS, AutotuneOptions

    assert set(AutotuneOptions.__annotations__) == set(_OPTIONS)


def test_an_unknown_option_is_a_type_error_at_decoration():
    with pytest.raises(TypeError, match="budgett"):
        tunekit.autotune([{"BLOCK": 1}], lambda n: (n,), budgett=3)


# ---- artifacts and the default ---------------------------------------------------------------


def test_forced_tuning_writes_an_artifact_that_a_fresh_process_serves(tmp_path, monkeypatch):
    art = tmp_path / "artifacts"
    monkeypatch.setenv("TUNEKIT_ARTIFACT_DIR", str(art))
    monkeypatch.setenv("TUNEKIT_ALWAYS_TUNE", "1")
    tuned, m = make(artifact_name="scale_kernel", key_names=["N"], hardware=GPU)
    assert tuned(4096) == (4096, 512)
    assert tuned.last_source() == "search" and len(m.measured) == 3
    files = list(art.rglob("*.json"))
    assert len(files) == 1
    doc = json.loads(files[0].read_text())
    assert doc["artifact"] == "scale_kernel" and doc["key_names"] == ["N"]
    assert doc["config"] == {"BLOCK": 512}

    # A fresh process: no winner cache, no forced tuning; the artifact answers, nothing measured.
    monkeypatch.delenv("TUNEKIT_ALWAYS_TUNE")
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "empty-cache"))
    fresh, m2 = make(artifact_name="scale_kernel", key_names=["N"], hardware=GPU,
                     cost=lambda c: 1.0)
    assert fresh(4096) == (4096, 512)
    assert fresh.last_source() == "artifact" and m2.measured == []


def test_order_is_cache_then_artifact_then_default_then_search(tmp_path, monkeypatch):
    art = tmp_path / "artifacts"
    monkeypatch.setenv("TUNEKIT_ARTIFACT_DIR", str(art))
    # The default answers when nothing is stored: nothing measured.
    tuned, m = make(artifact_name="k", hardware=GPU, default={"BLOCK": 1024})
    assert tuned(8) == (8, 1024) and tuned.last_source() == "default"
    assert m.measured == []
    # A default that is a callable of the call's arguments.
    tuned, m = make(artifact_name="k", hardware=GPU,
                    default=lambda n: {"BLOCK": 256 if n < 100 else 1024})
    assert tuned(8) == (8, 256) and tuned(1000) == (1000, 1024) and m.measured == []
    # Forced tuning searches and writes the artifact; then the artifact beats the default.
    monkeypatch.setenv("TUNEKIT_ALWAYS_TUNE", "1")
    forced, _ = make(artifact_name="k", hardware=GPU, default={"BLOCK": 1024},
                     use_disk_cache=False)
    forced(8)
    monkeypatch.delenv("TUNEKIT_ALWAYS_TUNE")
    served, m = make(artifact_name="k", hardware=GPU, default={"BLOCK": 1024},
                     use_disk_cache=False)
    assert served(8) == (8, 512) and served.last_source() == "artifact" and m.measured == []
    # Without a default or an artifact for the key: a search.
    plain, m = make(artifact_name="k", hardware=GPU)
    plain(9)
    assert plain.last_source() == "search" and len(m.measured) == 3


def _cli():
    exe = tunekit.cli_path()
    if exe is None:
        build = Path(os.environ.get("TUNEKIT_CXX_BUILD") or Path(__file__).parents[2] / "build")
        exe = build / "apps" / "tunekit" / "tunekit"
        if not exe.exists():
            pytest.skip("no tunekit command (set TUNEKIT_CXX_BUILD)")
    return str(exe)


def test_the_cpp_command_checks_python_artifacts_and_emits_ones_python_serves(tmp_path,
                                                                             monkeypatch):
    exe = _cli()
    art = tmp_path / "artifacts"
    cache = tmp_path / "cache"
    monkeypatch.setenv("TUNEKIT_ARTIFACT_DIR", str(art))
    monkeypatch.setenv("TUNEKIT_ALWAYS_TUNE", "1")
    tuned, _ = make(artifact_name="shared", key_names=["N"], hardware=GPU)
    tuned(64)
    check = subprocess.run([exe, "artifact", "check", str(art)], capture_output=True, text=True)
    assert check.returncode == 0 and "1 artifact, 0 bad" in check.stdout, check.stdout

    # The C++ command writes artifacts from the winner cache; a Python tuner serves them.
    monkeypatch.delenv("TUNEKIT_ALWAYS_TUNE")
    tuned, _ = make(hardware=GPU)
    tuned(128)  # a winner cache entry for key (128)
    emitted = tmp_path / "emitted"
    emit = subprocess.run([exe, "--cache-dir", str(cache), "artifact", "emit", "--name", "shared",
                           "--function", "scale", "--key-names", "N", "--out", str(emitted)],
                          capture_output=True, text=True)
    assert emit.returncode == 0, emit.stderr
    monkeypatch.setenv("TUNEKIT_ARTIFACT_DIR", str(emitted))
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "fresh"))
    served, m = make(artifact_name="shared", key_names=["N"], hardware=GPU, cost=lambda c: 1.0)
    assert served(128) == (128, 512)
    assert served.last_source() == "artifact" and m.measured == []


def test_a_default_outside_the_space_is_a_clear_error():
    tuned, _ = make(default={"BLOCK": 333})
    with pytest.raises(tunekit.Error, match=r"default_fn gave \[BLOCK=333\].*not a config"):
        tuned(1)


# ---- lookup tables and templates -------------------------------------------------------------

TEMPLATED = [{"template_id": "tiled", "BLOCK": b} for b in (256, 512, 1024)]


def tiled(n, *, BLOCK):
    return (n, BLOCK)


def test_a_table_dict_answers_with_one_choice_and_the_template_is_not_passed():
    table = {"(7)+mm": [{"template_id": "tiled", "BLOCK": 1024}]}
    tuned, m = make(TEMPLATED, fn=tiled, lookup_table=table, op_name="mm")
    assert tuned(7) == (7, 1024)
    assert tuned.last_source() == "table" and m.measured == []


def test_a_table_file_with_params_narrows_the_search_to_its_choices(tmp_path):
    path = tmp_path / "table.json"
    path.write_text(json.dumps({"(7)+alpha=1+mm": [{"template_id": "tiled", "BLOCK": 256},
                                                   {"template_id": "tiled", "BLOCK": 1024}]}))
    tuned, m = make(TEMPLATED, fn=tiled, lookup_table=str(path), op_name="mm",
                    table_params={"alpha": 1})
    assert tuned(7) == (7, 1024)
    assert tuned.last_source() == "table_search"
    assert sorted(c["BLOCK"] for c in m.measured) == [256, 1024]


def test_a_stale_template_hash_drops_the_entry_with_a_warning():
    table = {"(7)+mm": [{"template_id": "tiled", "BLOCK": 1024, "template_hash": "old"}]}
    space = [{**c, "template_hash": "new"} for c in TEMPLATED]
    tuned, m = make(space, fn=tiled, lookup_table=table, op_name="mm")
    with pytest.warns(tunekit.TunekitWarning, match="stale|hash"):
        tuned(7)
    assert tuned.last_source() == "search" and len(m.measured) == 3


def test_the_template_id_is_passed_to_a_function_that_takes_it():
    seen = []

    def multi(n, *, template_id, BLOCK):
        seen.append(template_id)
        return (template_id, BLOCK)

    space = TEMPLATED + [{"template_id": "split", "BLOCK": 128}]
    tuned, _ = make(space, cost=lambda c: 0.5 if c["BLOCK"] == 128 else by_block(c), fn=multi)
    assert tuned(3) == ("split", 128)
    assert set(seen) == {"tiled", "split"}
    assert entry_of(tuned, 3)["winner"]["template_id"] == "split"


def test_two_template_hashes_for_one_template_are_refused():
    space = [{"template_id": "t", "BLOCK": 1, "template_hash": "a"},
             {"template_id": "t", "BLOCK": 2, "template_hash": "b"}]
    with pytest.raises(ValueError, match="template 't'"):
        make(space)


# ---- the effort switch -----------------------------------------------------------------------


def test_effort_off_runs_the_first_config_or_the_default(monkeypatch):
    monkeypatch.setenv("TUNEKIT_AUTOTUNE", "off")
    tuned, m = make()
    assert tuned(5) == (5, 256) and m.measured == []
    assert tuned.last_source() == "disabled"
    tuned, m = make(default={"BLOCK": 1024})
    assert tuned(5) == (5, 1024) and tuned.last_source() == "default"
    assert m.measured == []


def test_under_effort_off_a_keys_answer_is_served_from_the_hot_path(monkeypatch):
    monkeypatch.setenv("TUNEKIT_AUTOTUNE", "off")
    tuned, m = make(default=lambda n: {"BLOCK": 1024 if n > 10 else 256})
    assert tuned(5) == (5, 256) and tuned(50) == (50, 1024)
    assert tuned(5) == (5, 256) and tuned.last_source() == "memory"
    assert tuned.autotuner._memo and m.measured == []
    # Without a default: the first config; a call with its own effort tunes, and is not what
    # plain calls then run.
    plain, m = make()
    assert plain(5) == (5, 256) and plain(5) == (5, 256) and plain.last_source() == "memory"
    assert plain(5, autotune_effort="full") == (5, 512) and len(m.measured) == 3
    assert plain(5) == (5, 256)


def test_effort_cached_serves_what_is_stored_and_never_measures():
    tuned, m = make()
    tuned(5)  # stored in the winner cache
    fresh, m2 = make()
    assert fresh(5, autotune_effort="cached") == (5, 512)
    assert fresh.last_source() == "cache" and m2.measured == []
    # Nothing stored for 6: the first config, not remembered; a full call then searches.
    assert fresh(6, autotune_effort="cached") == (6, 256)
    assert fresh.last_source() == "disabled" and m2.measured == []
    assert fresh(6) == (6, 512) and fresh.last_source() == "search" and len(m2.measured) == 3


def test_effort_quick_measures_a_small_budget_with_few_runs(monkeypatch):
    monkeypatch.setenv("TUNEKIT_AUTOTUNE", "quick")
    tuned, m = make(GRID, bowl, grid_fn)
    tuned(1)
    assert 0 < len(m.measured) <= 32
    assert all(r.warmup <= 1 and r.runs <= 3 for r in m.requests)


def test_a_per_call_effort_overrides_the_environment_and_a_bad_one_is_refused(monkeypatch):
    monkeypatch.setenv("TUNEKIT_AUTOTUNE", "off")
    tuned, m = make()
    assert tuned(5, autotune_effort="full") == (5, 512) and len(m.measured) == 3
    with pytest.raises(ValueError, match="autotune_effort must be one of off, cached"):
        tuned(5, autotune_effort="fast")


# ---- deferred tuning and the parallel split --------------------------------------------------


def test_deferred_tuners_run_the_first_config_until_armed():
    tuned, m = make(deferred=True)
    assert tuned(5) == (5, 256) and tuned.last_source() == "default"
    assert tuned(6) == (6, 256) and m.measured == []
    assert tuned.recorded_keys() == [(5,), (6,)]
    assert tunekit.arm() >= 1
    assert tuned(5) == (5, 512) and tuned.last_source() == "search" and len(m.measured) == 3


def test_the_parallel_split_on_one_process_measures_every_candidate():
    tuned, m = make(parallel_split=True)
    assert tuned(5) == (5, 512) and len(m.measured) == 3


# ---- papercuts -------------------------------------------------------------------------------


def test_last_source_is_none_before_a_call_disabled_without_tuning_and_memory_on_hits():
    tuned, _ = make()
    assert tuned.last_source() is None
    tuned(1, autotune=False)
    assert tuned.last_source() == "disabled"
    tuned(1)
    assert tuned.last_source() == "search"
    tuned(1)  # served by the hot path's memo
    assert tuned.last_source() == "memory"
    tuned(2)
    assert tuned.last_source() == "search"
    tuned(1)
    assert tuned.last_source() == "memory"
    tuned(1)
    assert tuned.last_source() == "memory"


@needs_numpy
def test_numpy_scalars_in_configs_and_keys_are_stored_as_json_numbers():
    space = [{"BLOCK": np.int64(b), "scale": np.float32(0.5), "on": np.bool_(True)}
             for b in (256, 512, 1024)]

    def fn(n, *, BLOCK, scale, on):
        return int(BLOCK)

    tuned, _ = make(space, cost=lambda c: by_block(c), fn=fn,
                    key_fn=lambda n: (np.int32(n), np.float32(1.5)))
    assert tuned(3) == 512
    record = entry_of(tuned, 3)
    assert record["winner"]["config"] == {"BLOCK": 512, "scale": 0.5, "on": True}
    assert record["key"] == (3, 1.5)
    text = open(tuned.cache_path(3)).read()
    assert '"BLOCK": 512' in text.replace('"BLOCK":512', '"BLOCK": 512') and "np." not in text


def test_a_config_field_the_function_does_not_take_is_one_clear_error():
    def fn(n, *, BLOCK):
        return n

    with pytest.raises(TypeError, match=r"config_space\[0\] has the field 'BLOK'"):
        tunekit.autotune([{"BLOK": 1}, {"BLOCK": 2}], lambda n: (n,))(fn)


class FakeDtype:
    pass


FakeDtype.__name__ = "dtype"
FakeDtype.__qualname__ = "dtype"


@needs_numpy
def test_numpy_dtypes_and_arrays_in_a_key_say_what_to_pass():
    tuned, _ = make(key_fn=lambda x: (x.dtype,))
    with pytest.raises(TypeError, match=r"key_fn's key\[0\].*pass str\(x.dtype\)"):
        tuned(np.zeros(3))
    tuned, _ = make(key_fn=lambda x: (x,))
    with pytest.raises(TypeError, match=r"pass its shape and dtype"):
        tuned(np.zeros(3))


def test_a_dtype_in_a_key_suggests_its_text():
    tuned, _ = make(key_fn=lambda n: (n, FakeDtype()))
    with pytest.raises(TypeError, match=r"key_fn's key\[1\].*pass str\(x.dtype\)"):
        tuned(1)


# ---- isolated measurement --------------------------------------------------------------------

WORKER = """
import json, os, sys, time
for line in sys.stdin:
    req = json.loads(line)
    block = req["config"]["BLOCK"]
    if block == 1024:
        os._exit(3)                      # a candidate that takes its process down
    if block == 2048:
        time.sleep(30)                   # one that never finishes
    extra = req["request"] or {}         # what request= made, as JSON
    ms = {256: 3.0, 512: 1.0}[block] + extra.get("offset", 0.0)
    print(json.dumps({"times_ms": [ms] * req["policy"]["runs"]}), flush=True)
"""


def test_an_isolated_measurer_runs_candidates_in_a_worker_that_survives_them(tmp_path):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    import sys

    meas = tunekit.IsolatedMeasurer([sys.executable, str(worker)], deadline_s=2.0,
                                    request=lambda key, config: json.dumps({"offset": 0.25}))
    ran = []

    def fn(n, *, BLOCK):
        ran.append(BLOCK)
        return BLOCK

    tuned = tunekit.autotune([{"BLOCK": b} for b in (256, 512, 1024, 2048)], lambda n: (n,),
                             measurer=meas)(fn)
    assert tuned(1) == 512
    assert ran == [512]  # the worker ran the candidates; this process only the winner's call
    record = entry_of(tuned, 1)
    by_block = {c["config"]["BLOCK"]: c for c in record["candidates"]}
    assert by_block[512]["time_ms"] == pytest.approx(1.25)
    assert by_block[1024]["status"] == "failed" and by_block[2048]["status"] == "failed"
    assert "deadline" in by_block[2048]["reason"] or "2000" in by_block[2048]["reason"]
    # one worker for 256, 512 and the crash; a second for the candidate past its deadline
    assert record["measurer"] == "isolated" and meas.worker_starts == 2
