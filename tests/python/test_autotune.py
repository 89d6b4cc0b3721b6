"""The seed's rules of ``autotune``, with plain Python functions and a deterministic measurer."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest

import tunekit
from conftest import CostMeasurer, FakeTritonConfig
from tunekit._measure import cuda_in_use


def by_block(cfg):
    return {256: 3.0, 512: 1.0, 1024: 2.0}[cfg["BLOCK"]]


def make(space=None, key_fn=None, prune_fn=None, cost=by_block, fn=None, **kw):
    space = space if space is not None else [{"BLOCK": b} for b in (256, 512, 1024)]
    m = CostMeasurer(cost)
    calls = []

    def scale(n, alpha=1.0, *, BLOCK):
        calls.append(BLOCK)
        return (n, alpha, BLOCK)

    tuned = tunekit.autotune(space, key_fn or (lambda n, *a, **k: (n,)), prune_fn,
                             measurer=m, **kw)(fn or scale)
    return tuned, m, calls


def test_fields_injected_winner_measured_five_plus_ten_and_one_more_call():
    tuned, m, calls = make()
    assert tuned(100, 2.0) == (100, 2.0, 512)
    assert [c["BLOCK"] for c in m.measured] == [256, 512, 1024]
    assert all(r.warmup == 5 and r.runs == 10 for r in m.requests)
    # 15 runs per candidate, then one more call with the winner, whose result is returned
    assert len(calls) == 3 * 15 + 1 and calls[-1] == 512
    assert tuned.last_source() == "search"


def test_resolved_key_measures_nothing_and_other_keys_tune_separately():
    tuned, m, calls = make()
    tuned(100)
    calls.clear()
    assert tuned(100) == (100, 1.0, 512)
    assert calls == [512] and len(m.measured) == 3
    tuned(200)
    assert len(m.measured) == 6


def test_autotune_false_runs_first_config_without_key_prune_or_measurement():
    def boom(*a, **k):
        raise AssertionError("must not be called")

    tuned, m, calls = make(key_fn=boom, prune_fn=boom)
    assert tuned(7, autotune=False) == (7, 1.0, 256)
    assert m.measured == [] and calls == [256]


def test_clash_with_config_field_is_a_value_error_unless_allowed():
    tuned, m, calls = make(cost=lambda cfg: cfg["BLOCK"] / 100)
    with pytest.raises(ValueError, match="BLOCK"):
        tuned(100, BLOCK=64)
    with pytest.raises(ValueError, match="BLOCK"):
        tuned(100, BLOCK=64, autotune=False)
    assert m.measured == [] and calls == []
    assert tuned(100, BLOCK=64, autotune_allow_arg_overwrite=True) == (100, 1.0, 64)
    assert calls[-1] == 64
    # The argument wins in every candidate; the three become one (tests/python/test_core_rules.py).
    assert m.measured == [{"BLOCK": 64}]


def test_business_kwargs_reach_key_prune_and_function():
    seen = []

    def key_fn(n, *args, **kwargs):
        seen.append(("key", kwargs))
        return (n, kwargs["alpha"])

    def prune_fn(cfg, n, *args, **kwargs):
        seen.append(("prune", kwargs))
        return cfg["BLOCK"] <= n

    tuned, m, calls = make(key_fn=key_fn, prune_fn=prune_fn)
    assert tuned(600, alpha=3.0) == (600, 3.0, 512)
    assert [c["BLOCK"] for c in m.measured] == [256, 512]  # 1024 > 600 was pruned, never run
    assert 1024 not in calls
    assert ("key", {"alpha": 3.0}) in seen and ("prune", {"alpha": 3.0}) in seen
    entry = json.loads(tunekit.read_entry(tuned.cache_path(600, alpha=3.0))["entry"])
    assert [c["config"]["BLOCK"] for c in entry["candidates"] if c["status"] == "ok"] == [256, 512]
    assert all(c["status"] == "pruned" for c in entry["candidates"] if c["config"]["BLOCK"] == 1024)


def test_prune_keeping_nothing_is_an_error():
    tuned, _, _ = make(prune_fn=lambda cfg, n, *a, **k: False)
    with pytest.raises(tunekit.Error, match="prune_fn removed all 3 configs"):
        tuned(5)


def test_failing_candidate_scores_inf_and_is_skipped():
    def scale(n, *, BLOCK):
        if BLOCK == 512:
            raise MemoryError("out of shared memory")
        return BLOCK

    tuned, m, _ = make(fn=scale)
    assert tuned(100) == 1024
    entry = json.loads(tunekit.read_entry(tuned.cache_path(100))["entry"])
    bad = entry["candidates"][1]
    assert bad["status"] == "failed" and "out of shared memory" in bad["reason"]
    assert entry["winner"]["index"] == 2


def test_all_candidates_failing_is_an_error_naming_them():
    def scale(n, *, BLOCK):
        raise RuntimeError(f"no resources for {BLOCK}")

    tuned, _, _ = make(fn=scale)
    with pytest.raises(tunekit.Error, match="^cannot find valid config for ") as err:
        tuned(1)
    assert "no resources for 1024" in str(err.value)


@dataclasses.dataclass(frozen=True)
class Tile:
    m: int
    n: int


def test_arbitrary_objects_as_config_values_are_recorded_by_description():
    space = [{"cfg": FakeTritonConfig({"BLOCK": b}, w), "tile": Tile(b, w)}
             for b in (256, 512) for w in (4, 8)]
    got = []

    def scale(n, *, cfg, tile):
        got.append(cfg)
        return cfg

    cost = lambda c: 1.0 if "BLOCK=512" in c["cfg"] and "num_warps=4" in c["cfg"] else 2.0
    tuned, m, _ = make(space=space, fn=scale, cost=cost)
    assert tuned(10) is space[2]["cfg"]  # the object itself is passed, not its description
    entry = json.loads(tunekit.read_entry(tuned.cache_path(10))["entry"])
    descriptions = [c["config"]["cfg"] for c in entry["candidates"]]
    assert descriptions[2].endswith("FakeTritonConfig(BLOCK=512, num_warps=4)")
    assert entry["candidates"][2]["config"]["tile"].endswith("Tile(m=512, n=4)")
    assert entry["winner"]["index"] == 2


def test_undescribable_value_is_a_clear_error():
    class Opaque:
        __slots__ = ()

    with pytest.raises(ValueError, match="cannot describe"):
        make(space=[{"cfg": Opaque()}])


def test_bad_spaces():
    with pytest.raises(ValueError, match="cannot be empty"):
        make(space=[])
    with pytest.raises(TypeError, match="not a dict"):
        make(space=[("BLOCK", 1)])
    with pytest.raises(ValueError, match=r"config_space\[2\] is described as config_space\[0\]"):
        make(space=[{"BLOCK": 1}, {"BLOCK": 2}, {"BLOCK": 1}])


def test_a_new_process_reads_the_cache_and_a_changed_space_is_a_miss():
    tuned, m, _ = make()
    tuned(100)
    again, m2, calls = make()  # same function source, same space: another process's view
    assert again(100) == (100, 1.0, 512)
    assert m2.measured == [] and again.last_source() == "cache" and calls == [512]
    # the same winner remains in the space, but the space changed: a miss
    changed, m3, _ = make(space=[{"BLOCK": b} for b in (256, 512, 2048)],
                          cost=lambda c: {256: 3.0, 512: 1.0, 2048: 2.0}[c["BLOCK"]])
    changed(100)
    assert len(m3.measured) == 3 and changed.last_source() == "search"


def test_always_tune_retunes(monkeypatch):
    tuned, _, _ = make()
    tuned(100)
    monkeypatch.setenv("TUNEKIT_ALWAYS_TUNE", "1")
    again, m2, _ = make()
    again(100)
    assert len(m2.measured) == 3


def test_keys_nested_tuples_and_types():
    seen = []

    def key_fn(shape, dtype, flag, scale, *a, **k):
        return (shape, dtype, flag, scale)

    def fn(shape, dtype, flag, scale, *, BLOCK):
        seen.append(BLOCK)
        return BLOCK

    tuned, m, _ = make(key_fn=key_fn, fn=fn)
    tuned((1024, (3, 4)), "float16", True, 0.5)
    entry = json.loads(tunekit.read_entry(tuned.cache_path((1024, (3, 4)), "float16", True,
                                                           0.5))["entry"])
    assert entry["key"] == ["(1024, (3, 4))", "float16", True, 0.5]
    tuned((1024, (3, 4)), "float16", False, 0.5)  # another key
    assert len(m.measured) == 6


def test_bad_keys_are_clear_errors():
    tuned, _, _ = make(key_fn=lambda n, *a, **k: (n, object()))
    with pytest.raises(TypeError, match=r"tuner 'scale': key_fn's key\[1\]: a value of type "
                       "'object'"):
        tuned(1)
    tuned, _, _ = make(key_fn=lambda n, *a, **k: (n, float("nan")))
    # The NaN's tuner and its position in the key.
    with pytest.raises(tunekit.Error, match=r"tuner 'scale': key_fn's key\[1\] is nan: a value "
                       "must be finite"):
        tuned(1)


def test_verbose_prints_info_on_stdout(capsys):
    tuned, _, _ = make()
    tuned(100, autotune_verbose=True)
    out = capsys.readouterr().out
    assert "[tunekit] INFO tuner 'scale', key (100)" in out and "winner [BLOCK=512]" in out
    tuned(100, autotune_verbose=True)
    assert "memory -> [BLOCK=512]" in capsys.readouterr().out


def test_host_measurer_times_real_work():
    def work(n, *, delay):
        time.sleep(delay)
        return delay

    tuned = tunekit.autotune([{"delay": 0.03}, {"delay": 0.0}], key_fn=lambda n: (n,),
                             warmup=1, runs=3)(work)
    if cuda_in_use():
        pytest.skip("PyTorch uses CUDA here: the default measurer is CUDA events, not the host clock")
    assert tuned(1) == 0.0
    entry = json.loads(tunekit.read_entry(tuned.cache_path(1))["entry"])
    assert entry["measurer"] == "host" and entry["candidates"][0]["time_ms"] >= 30.0


def test_source_change_is_a_miss():
    code = "def kernel(n, *, BLOCK):\n    return BLOCK{}\n"
    ns1, ns2 = {}, {}
    exec(code.format(""), ns1)
    exec(code.format(" + 0"), ns2)
    space = [{"BLOCK": b} for b in (256, 512, 1024)]
    a = tunekit.autotune(space, lambda n: (n,), measurer=CostMeasurer(by_block))(ns1["kernel"])
    b = tunekit.autotune(space, lambda n: (n,), measurer=CostMeasurer(by_block))(ns2["kernel"])
    assert a.name == b.name == "kernel" and a.version != b.version
    a(1)
    b(1)
    assert b.last_source() == "search"


def test_forget_and_best_config():
    tuned, m, _ = make()
    assert tuned.best_config(100) is None
    tuned(100)
    assert tuned.best_config(100) == {"BLOCK": 512}
    tuned.forget()
    tuned(100)
    assert tuned.last_source() == "cache" and len(m.measured) == 3


def test_methods_can_be_decorated():
    class Op:
        def __init__(self):
            self.factor = 3

        @tunekit.autotune([{"BLOCK": 1}, {"BLOCK": 2}], key_fn=lambda self, n: (n,),
                          measurer=CostMeasurer(lambda c: c["BLOCK"]))
        def run(self, n, *, BLOCK):
            return self.factor * BLOCK

    assert Op().run(5) == 3


def test_keyboard_interrupt_in_a_candidate_stops_tuning():
    def scale(n, *, BLOCK):
        if BLOCK == 512:
            raise KeyboardInterrupt
        return BLOCK

    tuned, m, _ = make(fn=scale)
    with pytest.raises(KeyboardInterrupt):
        tuned(100)
    assert not __import__("os").path.exists(tuned.cache_path(100))


def test_tunekit_verbose_reports_every_call(monkeypatch, capsys):
    monkeypatch.setenv("TUNEKIT_VERBOSE", "1")
    tuned, _, _ = make()
    tuned(100)
    capsys.readouterr()
    tuned(100)
    assert "memory -> [BLOCK=512]" in capsys.readouterr().out
