"""Rules the package leaves to the C++ core: pinned values (keyword arguments that name config
fields), configs handed back as indices of the space, the "no valid config" error type and the
environment."""

from __future__ import annotations

import time

import pytest

import tunekit
from conftest import CostMeasurer
from tunekit import _core


def by_warps(cfg):
    return {4: 2.0, 8: 1.0}[cfg["warps"]] + cfg["BLOCK"] / 1e4


def pinned_kernel():
    space = [{"BLOCK": b, "warps": w} for b in (256, 512) for w in (4, 8)]
    m = CostMeasurer(by_warps)
    calls = []

    def kernel(n, *, BLOCK, warps):
        calls.append((BLOCK, warps))
        return BLOCK, warps

    return tunekit.autotune(space, key_fn=lambda n, **k: (n,), measurer=m)(kernel), m, calls


def test_a_keyword_argument_that_names_a_field_is_a_pinned_value():
    tuned, m, calls = pinned_kernel()
    assert tuned(100, BLOCK=64, autotune_allow_arg_overwrite=True) == (64, 8)
    # Candidates that become equal once BLOCK is pinned are measured once.
    assert m.measured == [{"BLOCK": 64, "warps": 4}, {"BLOCK": 64, "warps": 8}]
    assert {b for b, _ in calls} == {64}
    # The core's key for a pinned call: key_fn's values, then ("pinned BLOCK", 64).
    path = tuned.cache_path(100, BLOCK=64)
    assert path != tuned.cache_path(100)
    got = tunekit.read_entry(path)
    assert got["status"] == "found"
    assert got["record"]["key"] == (100, "pinned BLOCK", 64)
    assert got["record"]["space"]["size"] == 2
    assert tuned.best_config(100, BLOCK=64) == {"BLOCK": 64, "warps": 8}
    assert tuned.best_config(100) is None

    # The same pinned call again: the core's memory answers; nothing is measured.
    assert tuned(100, BLOCK=64, autotune_allow_arg_overwrite=True) == (64, 8)
    assert tuned.last_source() == "memory" and len(m.measured) == 2
    # Another pinned value is another key.
    assert tuned(100, BLOCK=32, autotune_allow_arg_overwrite=True) == (32, 8)
    assert tuned.last_source() == "search" and len(m.measured) == 4

    # The unpinned call is not served the pinned call's winner: it tunes the whole space.
    assert tuned(100) == (256, 8)
    assert tuned.last_source() == "search" and len(m.measured) == 8
    assert tuned.best_config(100) == {"BLOCK": 256, "warps": 8}


def test_a_pinned_value_is_refused_without_the_flag():
    tuned, m, calls = pinned_kernel()
    with pytest.raises(ValueError, match="BLOCK"):
        tuned(100, BLOCK=64)
    assert m.measured == [] and calls == []
    # A keyword argument that is no config field is the function's own: not pinned.
    space = [{"BLOCK": 1}, {"BLOCK": 2}]
    t = tunekit.autotune(space, key_fn=lambda n, **k: (n,),
                         measurer=CostMeasurer(lambda c: c["BLOCK"]))(
                             lambda n, *, BLOCK, alpha: (BLOCK, alpha))
    assert t(3, alpha=0.5) == (1, 0.5)
    assert tunekit.read_entry(t.cache_path(3, alpha=0.5))["record"]["key"] == (3,)


def test_pruning_a_large_space_maps_each_config_to_its_index_once():
    """The core hands configs back; the binding finds their indices by hash, so asking prune_fn
    about N candidates costs O(N) (a linear search each made it O(N^2))."""
    n = 60_000
    # Configs that differ only in their last field, behind a long shared one: comparing two costs
    # tens of nanoseconds, so a linear search per config (~1.8e9 comparisons) takes a minute.
    shared = "a shared value that every config holds, compared before the index " * 2
    space = [{"layout": shared, "i": i} for i in range(n)]
    asked = []

    def prune(cfg, x):
        asked.append(cfg["i"])
        return cfg["i"] % 20_000 == 7

    m = CostMeasurer(lambda c: 1.0 + c["i"] / n)
    tuned = tunekit.autotune(space, key_fn=lambda x: (x,), prune_fn=prune, measurer=m,
                             warmup=0, runs=1)(lambda x, *, layout, i: i)
    start = time.perf_counter()
    assert tuned(1) == 7
    elapsed = time.perf_counter() - start
    assert sorted(asked) == list(range(n))
    assert [c["i"] for c in m.measured] == [7, 20_007, 40_007]
    assert elapsed < 15, f"pruning {n} configs took {elapsed:.1f} s"


def test_no_valid_config_is_its_own_error_type():
    assert issubclass(tunekit.NoValidConfigError, tunekit.Error)
    assert tunekit.NoValidConfigError is _core.NoValidConfigError

    def kernel(n, *, BLOCK):
        raise RuntimeError(f"no resources for {BLOCK}")

    tuned = tunekit.autotune([{"BLOCK": 1}, {"BLOCK": 2}], key_fn=lambda n: (n,),
                             measurer=CostMeasurer(lambda c: 1.0))(kernel)
    with pytest.raises(tunekit.NoValidConfigError, match="no resources for 2"):
        tuned(1)
    # Other errors of the core stay plain tunekit.Error.
    pruned = tunekit.autotune([{"BLOCK": 1}], key_fn=lambda n: (n,),
                              prune_fn=lambda c, n: False)(kernel)
    with pytest.raises(tunekit.Error) as err:
        pruned(1)
    assert not isinstance(err.value, tunekit.NoValidConfigError)


def test_tunekit_verbose_is_read_by_the_core(monkeypatch):
    monkeypatch.setenv("TUNEKIT_VERBOSE", "yes")
    assert _core.environment()["verbose"] is True
    tuned, _, _ = pinned_kernel()
    tuned(1)
    assert tuned.autotuner.tuner.every_call_verbose is True
    monkeypatch.setenv("TUNEKIT_VERBOSE", "0")
    assert _core.environment()["verbose"] is False
