"""contextual_autotune with a stand-in for Triton's autotuner that has the attributes tunekit
relies on (configs, cache, arg_names, keys, fn, run; see tunekit/_triton.py)."""

from __future__ import annotations

import time

import pytest

import tunekit
from conftest import FakeTritonConfig as FakeConfig


class FakeKernel:
    """A JIT function stand-in: each launch sleeps for the time its config takes."""

    def __init__(self, name, cost):
        self.__name__ = name
        self.cost = cost
        self.launches = []

    def run(self, *args, grid=None, warmup=False, **meta):
        self.launches.append(dict(meta))
        t = self.cost(meta)
        if t is None:
            raise RuntimeError(f"out of resources for {meta}")
        time.sleep(t)
        return meta


@tunekit.register_autotuner_class
class FakeAutotuner:
    """Triton's Autotuner.run, reduced: benchmarks (here: counts) a key it has not cached when it
    has several configs; with one config it launches it directly."""

    def __init__(self, fn, arg_names, configs, key):
        self.fn = fn
        self.arg_names = arg_names
        self.configs = configs
        self.keys = key
        self.cache = {}
        self.own_benchmarks = 0

    def run(self, *args, **kwargs):
        if len(self.configs) > 1:
            nargs = dict(zip(self.arg_names, args))
            key = tuple(nargs[k] for k in self.keys)
            if key not in self.cache:
                self.own_benchmarks += 1
                self.cache[key] = self.configs[0]
            config = self.cache[key]
        else:
            config = self.configs[0]
        return self.fn.run(*args, **kwargs, **config.all_kwargs())

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)


class LaunchCost:
    """Times each launch as the kernel's cost for its config says, not by the clock (which a
    loaded machine makes noisy); a launch that raises still fails."""

    name = "simulated"

    def __init__(self, fast):
        self.fast = fast  # kernel name -> its fast num_warps

    def measure(self, run, request):
        run()
        warps = int(request.config["config"].split("num_warps=")[1].rstrip(")"))
        return [0.1 if self.fast[request.tuner] == warps else 0.2] * request.runs


def make_kernel(name, cost, warps=(4, 8)):
    configs = [FakeConfig({"BLOCK": 512}, w) for w in warps]
    return FakeAutotuner(FakeKernel(name, cost), ["x", "n"], configs, ["n"])


def warps_cost(fast):
    return lambda meta: 0.0002 if meta["num_warps"] == fast else 0.003


def test_tunes_inner_kernels_in_context_and_writes_their_caches(tmp_path):
    a = make_kernel("scale_kernel", warps_cost(8))
    b = make_kernel("add_kernel", warps_cost(4))
    runs = []

    @tunekit.contextual_autotune(is_dist=False, n_repeat=3, n_warmup=2,
                                 measurer=LaunchCost({"scale_kernel": 8, "add_kernel": 4}))
    def outer(x, n):
        runs.append(n)
        return (a[(1,)](x, n)["num_warps"], b[(1,)](x, n)["num_warps"])

    assert outer("x", 1024) == (8, 4)  # the result of the run with the winners
    assert a.cache[(1024,)] is a.configs[1] and b.cache[(1024,)] is b.configs[0]
    assert a.own_benchmarks == 0 and b.own_benchmarks == 0  # Triton's own tuning never ran
    # 2 configs x (2 warmup + 3 timed) launches each, then one run with the winners
    assert len(runs) == 2 * 5 + 1
    assert len(a.fn.launches) == 2 * 5 + 1
    log = (tmp_path / "logs" / "rank-0.log").read_text()
    assert "scale_kernel" in log and "best config" in log
    assert FakeAutotuner.run.__name__ == "run" and "tunekit" not in FakeAutotuner.run.__module__

    runs.clear()
    assert outer("x", 1024) == (8, 4)  # tuned: the outer function runs once
    assert runs == [1024]
    outer("x", 2048)  # a new key tunes again
    assert (2048,) in a.cache and len(runs) > 2


def test_failing_config_is_skipped_and_all_failing_is_a_runtime_error():
    a = make_kernel("k", lambda meta: None if meta["num_warps"] == 4 else 0.0001)

    @tunekit.contextual_autotune(n_repeat=2, n_warmup=1)
    def outer(n):
        return a[(1,)]("x", n)["num_warps"]

    assert outer(1) == 8
    bad = make_kernel("bad", lambda meta: None)

    @tunekit.contextual_autotune(n_repeat=2, n_warmup=1)
    def hopeless(n):
        return bad[(1,)]("x", n)

    with pytest.raises(RuntimeError, match="^cannot find valid config for kernel 'bad', key ") as err:
        hopeless(1)
    assert "none of the 2 measured candidates is valid" in str(err.value)
    assert isinstance(err.value.__cause__, tunekit.NoValidConfigError)  # the core's, by type
    assert FakeAutotuner.run.__module__ == __name__  # restored after the error


def test_single_config_kernels_and_plain_work_run_once():
    a = make_kernel("single", lambda meta: 0.0, warps=(4,))
    runs = []

    @tunekit.contextual_autotune()
    def outer():
        runs.append(1)
        return a[(1,)]("x", 3)

    outer()
    assert runs == [1] and a.cache == {}


def test_one_contextual_tuner_at_a_time():
    a = make_kernel("k", warps_cost(8))

    @tunekit.contextual_autotune(n_repeat=1, n_warmup=0)
    def inner(n):
        return a[(1,)]("x", n)

    @tunekit.contextual_autotune(n_repeat=1, n_warmup=0)
    def outer(n):
        return inner(n)

    with pytest.raises(RuntimeError, match="only one|already running"):
        outer(5)
    assert inner(6)["num_warps"] in (4, 8)  # the failed call left nothing active


def test_is_dist_needs_a_process_group():
    @tunekit.contextual_autotune(is_dist=True)
    def outer():
        return 1

    with pytest.raises(RuntimeError, match="torch.distributed is not initialised"):
        outer()


@pytest.mark.parametrize("effort", ["off", "cached"])
def test_no_measurement_under_effort_off_or_cached(monkeypatch, effort):
    monkeypatch.setenv("TUNEKIT_AUTOTUNE", effort)
    a = make_kernel("scale_kernel", warps_cost(8))
    a.cache[(64,)] = a.configs[1]  # a winner the autotuner holds for n=64
    runs = []

    @tunekit.contextual_autotune(measurer=LaunchCost({"scale_kernel": 8}))
    def outer(x, n):
        runs.append(n)
        return a[(1,)](x, n)["num_warps"]

    # Nothing held for n=1024: the first config, neither tunekit nor the autotuner benchmarks.
    assert outer("x", 1024) == 4 and runs == [1024] and a.own_benchmarks == 0
    assert (1024,) not in a.cache
    # A held winner is served under cached, ignored under off.
    assert outer("x", 64) == (8 if effort == "cached" else 4)
    assert a.own_benchmarks == 0
