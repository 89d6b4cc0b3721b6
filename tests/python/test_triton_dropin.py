"""tunekit.triton.autotune, the drop-in for @triton.autotune, without a GPU: Triton's own classes
(triton.Config, the Autotuner base, triton.heuristics) over stand-in kernels whose launches are
recorded, and a do_bench that reports fixed costs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import tunekit.triton as tt


def test_import_does_not_import_triton():
    code = ("import sys, tunekit.triton as tt; assert 'triton' not in sys.modules; "
            "assert callable(tt.autotune)")
    env = dict(os.environ)
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


triton = pytest.importorskip("triton", reason="the drop-in subclasses Triton's Autotuner")
from triton.runtime.autotuner import Autotuner as TritonAutotuner  # noqa: E402
from triton.runtime.errors import AutotunerError, OutOfResources  # noqa: E402


def _kernel_fn(dst, src, N, BLOCK_SIZE):  # what base_fn resolves to (name and source)
    pass


class Tensor:
    """What the hooks and the key use of a tensor: dtype, zero_, clone, copy_."""

    def __init__(self, value=0.0, dtype="fp32"):
        self.value = value
        self.dtype = dtype

    def zero_(self):
        self.value = 0.0

    def clone(self):
        return Tensor(self.value, self.dtype)

    def copy_(self, other):
        self.value = other.value


class Kernel:
    """A stand-in for a JITFunction: arg_names, src, fn and run(*args, grid, warmup, **meta)."""

    def __init__(self, arg_names=("dst", "src", "N"), src="def _kernel(dst, src, N, B): pass",
                 fail=None, write=None):
        self.arg_names = list(arg_names)
        self.src = src
        self.fn = _kernel_fn
        self.launches = []
        self.fail = fail
        self.write = write

    def run(self, *args, grid=None, warmup=False, **kwargs):
        self.launches.append(kwargs.get("BLOCK_SIZE"))
        self.last = (args, grid, warmup, kwargs)
        if self.fail is not None:
            exc = self.fail(kwargs)
            if exc is not None:
                raise exc
        if self.write is not None:
            self.write(dict(zip(self.arg_names, args)), kwargs)


class Bench:
    """A do_bench: one kernel_call, then the cost of the block size launched."""

    def __init__(self, cost=lambda block: float(block)):
        self.cost = cost
        self.calls = 0

    def __call__(self, kernel_call, quantiles):
        self.calls += 1
        kernel_call()
        t = self.cost(self.kernel.launches[-1])
        return [t, t, t]


def configs(*blocks):
    return [triton.Config(kwargs={"BLOCK_SIZE": b}) for b in blocks]


def tuned(kernel, cfgs, key=("N",), cost=lambda b: float(b), **kw):
    bench = Bench(cost)
    bench.kernel = kernel
    t = tt.autotune(configs=cfgs, key=list(key), do_bench=bench, **kw)(kernel)
    return t, bench


def test_is_a_triton_autotuner_with_its_signature():
    import inspect

    t, _ = tuned(Kernel(), configs(32, 128))
    assert isinstance(t, TritonAutotuner) and isinstance(t, tt.Autotuner)
    ours = list(inspect.signature(tt.autotune).parameters)[:12]
    theirs = list(inspect.signature(triton.autotune).parameters)
    assert ours == theirs
    with pytest.raises(TypeError, match="unexpected keyword argument 'autotune_effort'"):
        tt.autotune(configs=configs(1), key=[], autotune_effort="off")


def test_key_is_tritons():
    cfgs = configs(32, 128)
    theirs_kernel = Kernel()
    bench = Bench()
    bench.kernel = theirs_kernel
    theirs = triton.autotune(configs=cfgs, key=["N"], do_bench=bench)(theirs_kernel)
    ours, _ = tuned(Kernel(), cfgs)
    grid = (1,)
    for k in (theirs, ours):
        k[grid](Tensor(), Tensor(dtype="fp16"), 1024)
        k[grid](dst=Tensor(), src=Tensor(), N=512)
        k[grid](Tensor(), src=Tensor(dtype="bf16"), N=1024, BLOCK_SIZE_N=4)
    assert set(theirs.cache) == set(ours.cache) == {
        (1024, "fp32", "fp16"), (512, "fp32", "fp32"), (1024, "fp32", "bf16")}
    assert ours.key_of((Tensor(), Tensor()), {"N": 8}) == (8, "fp32", "fp32")
    # A resolved positional launch (the shortcut) files under the same key and launches the
    # cached config with its keywords.
    assert ours.key_of((Tensor(), Tensor(dtype="fp16"), 1024), {"grid": grid}) == \
        (1024, "fp32", "fp16")
    launches = len(ours.fn.launches)
    ours[grid](Tensor(), Tensor(dtype="fp16"), 1024)
    best = ours.cache[(1024, "fp32", "fp16")]
    assert ours.best_config is best and len(ours.fn.launches) == launches + 1
    assert ours.fn.launches[-1] == best.kwargs["BLOCK_SIZE"]


def test_dtype_object_in_key():
    import triton.language as tl

    k = Kernel(arg_names=("dst", "src", "DTYPE"))
    t, bench = tuned(k, configs(32, 128), key=("DTYPE",))
    t[(1,)](Tensor(), Tensor(), tl.float32)
    # tl.float32 has no dtype attribute: it is in the key as itself, the tensors by dtype.
    assert list(t.cache) == [(tl.float32, "fp32", "fp32")]
    assert t.cache_path(next(iter(t.cache))).endswith(".json")
    assert bench.calls == 2


def test_winner_in_cache_and_best_config_and_served_from_disk():
    k = Kernel()
    cfgs = configs(128, 32, 64)
    t, bench = tuned(k, cfgs)
    t[(1,)](Tensor(), Tensor(), 1024)
    key = (1024, "fp32", "fp32")
    assert t.cache[key] is cfgs[1] and t.best_config is cfgs[1]
    assert t.last_source() == "search" and bench.calls == 3
    assert k.launches[-1] == 32  # the launch itself runs the winner
    assert set(t.configs_timings) == set(cfgs)
    entry = json.load(open(t.cache_path(key)))
    assert entry["winner"]["config"]["BLOCK_SIZE"] == 32
    assert entry["candidates"][0]["config"] == {"BLOCK_SIZE": 128, "num_warps": 4,
                                                "num_ctas": 1, "num_stages": 3}
    # A second process's autotuner over the same kernel: from the winner cache, no benchmark.
    k2 = Kernel()
    t2, bench2 = tuned(k2, configs(128, 32, 64))
    t2[(1,)](Tensor(), Tensor(), 1024)
    assert bench2.calls == 0 and t2.last_source() == "cache"
    assert t2.best_config.kwargs == {"BLOCK_SIZE": 32} and k2.launches == [32]
    # The second launch is served from .cache, nothing asks the core.
    t2[(1,)](Tensor(), Tensor(), 1024)
    assert k2.launches == [32, 32]
    # Another kernel source is another version: a miss.
    k3 = Kernel(src="def _kernel(dst, src, N, B): return")
    t3, bench3 = tuned(k3, configs(128, 32, 64))
    t3[(1,)](Tensor(), Tensor(), 1024)
    assert bench3.calls == 3 and t3.last_source() == "search"


def test_use_disk_cache_false_and_name():
    t, _ = tuned(Kernel(), configs(2, 1), use_disk_cache=False, name="my_kernel")
    t[(1,)](Tensor(), Tensor(), 8)
    path = t.cache_path((8, "fp32", "fp32"))
    assert "my_kernel" in path and not os.path.exists(path)
    t2, bench2 = tuned(Kernel(), configs(2, 1), name="my_kernel")
    t2[(1,)](Tensor(), Tensor(), 8)
    assert bench2.calls == 2


def test_early_config_prune_sees_named_args_and_kwargs():
    seen = {}

    def early(cfgs, named_args, **kwargs):
        seen["named"] = sorted(named_args)
        seen["N"] = kwargs.get("N")
        return cfgs[1:]

    t, bench = tuned(Kernel(), configs(1, 2, 3), prune_configs_by={"early_config_prune": early})
    t[(1,)](Tensor(), Tensor(), N=1024)
    assert seen == {"named": ["dst", "src"], "N": 1024}
    assert bench.calls == 2 and t.best_config.kwargs == {"BLOCK_SIZE": 2}


def test_perf_model_top_k():
    estimated = []

    def model(**kwargs):
        estimated.append(kwargs["BLOCK_SIZE"])
        return -kwargs["BLOCK_SIZE"]

    t, bench = tuned(Kernel(), configs(1, 2, 3, 4),
                     prune_configs_by={"perf_model": model, "top_k": 2})
    t[(1,)](Tensor(), Tensor(), 16)
    assert sorted(estimated) == [1, 2, 3, 4]
    assert bench.calls == 2 and t.best_config.kwargs == {"BLOCK_SIZE": 3}


def test_fractional_top_k_after_early_prune():
    # Triton's test_prune_configs_fractional_top_k_after_early_prune, through the drop-in class.
    cfgs = [triton.Config(kwargs={"BLOCK_SIZE": b}) for b in range(1, 11)]
    estimated, launched, benchmarked = [], [], []

    class K:
        def __init__(self):
            self.fn = lambda: None

        def run(self, **kwargs):
            launched.append(kwargs["BLOCK_SIZE"])

    def do_bench(kernel_call, quantiles):
        kernel_call()
        benchmarked.append(launched[-1])
        return [launched[-1]] * 3

    def model(*args, **kwargs):
        estimated.append(kwargs["BLOCK_SIZE"])
        return kwargs["BLOCK_SIZE"]

    t = tt.Autotuner(K(), arg_names=[], configs=cfgs, key=[], reset_to_zero=None,
                     restore_value=None, do_bench=do_bench,
                     prune_configs_by={"early_config_prune": lambda c, n, **k: c[:6],
                                       "perf_model": model, "top_k": 0.5})
    t.run()
    assert estimated == list(range(1, 7))
    assert benchmarked == [1, 2, 3]
    assert t.best_config is cfgs[0]


@pytest.mark.parametrize("kind", ["early_config_prune", "perf_model", "fraction"])
def test_one_config_left_is_not_benchmarked(kind):
    cfgs = configs(32, 128)
    if kind == "early_config_prune":
        by = {"early_config_prune": lambda c, n, **k: [c[1]]}
    elif kind == "perf_model":
        by = {"perf_model": lambda **k: 0 if k["BLOCK_SIZE"] == 128 else 1, "top_k": 1}
    else:  # int(2 * 0.3) == 0: at least one is kept
        by = {"perf_model": lambda **k: 0 if k["BLOCK_SIZE"] == 128 else 1, "top_k": 0.3}
    k = Kernel()
    t, bench = tuned(k, cfgs, prune_configs_by=by)
    t[(1,)](Tensor(), Tensor(), N=1024)
    assert bench.calls == 0 and k.launches == [128]
    assert t.best_config is cfgs[1] and t.last_source() == "pruned"


def test_none_left_raises_tritons_error():
    t, bench = tuned(Kernel(), configs(32, 128),
                     prune_configs_by={"early_config_prune": lambda c, n, **k: []})
    with pytest.raises(triton.TritonError) as e:
        t[(1,)](Tensor(), Tensor(), N=1024)
    assert isinstance(e.value, AutotunerError)
    assert str(e.value) == ("Autotuner error: No valid autotuner configs after pruning. "
                            "`early_config_prune` should return at least one config.")


def test_out_of_resources_scores_inf_and_the_rest_go_on():
    exceptions = []
    k = Kernel(fail=lambda kw: OutOfResources(99999, 1024, "shared memory")
               if kw["BLOCK_SIZE"] == 4096 else None)
    t, bench = tuned(k, configs(4096, 64, 32),
                     post_hook=lambda nargs, exception: exceptions.append(exception))
    t[(1,)](Tensor(), Tensor(), 4096)
    assert t.best_config.kwargs == {"BLOCK_SIZE": 32}
    assert isinstance(exceptions[0], OutOfResources) and exceptions[1:] == [None] * 2
    assert t.configs_timings[t.configs[0]] == [float("inf")] * 3
    entry = json.load(open(t.cache_path((4096, "fp32", "fp32"))))
    failed = entry["candidates"][0]
    assert failed["status"] != "ok" and "out of resource: shared memory" in json.dumps(failed)


def test_other_candidate_errors_reach_the_launch():
    k = Kernel(fail=lambda kw: RuntimeError("boom") if kw["BLOCK_SIZE"] == 64 else None)
    t, _ = tuned(k, configs(32, 64))
    with pytest.raises(RuntimeError, match="boom"):
        t[(1,)](Tensor(), Tensor(), 4096)


def test_conflicting_meta_parameters():
    t, _ = tuned(Kernel(), configs(32, 64))
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK_SIZE"):
        t[(1,)](Tensor(), Tensor(), 4096, BLOCK_SIZE=16)


def test_effort_off_runs_the_first_config(monkeypatch):
    monkeypatch.setenv("TUNEKIT_AUTOTUNE", "off")
    k = Kernel()
    cfgs = configs(128, 32)
    t, bench = tuned(k, cfgs)
    t[(1,)](Tensor(), Tensor(), 1024)
    assert bench.calls == 0 and k.launches == [128] and t.best_config is cfgs[0]
    assert t.last_source() == "disabled" and not t.cache


def test_restore_and_reset_skip_none_and_restore_after_tuning():
    def write(named, meta):
        if named["src"] is not None:
            named["src"].value += 1
        named["dst"].value = 1.0

    k = Kernel(write=write)
    t, bench = tuned(k, configs(32, 128), restore_value=["src"], reset_to_zero=["dst"])
    src = Tensor(0.0)
    t[(1,)](Tensor(2.0), src, 8)
    assert bench.calls == 2 and src.value == 1.0  # restored after each candidate; one real run
    k2 = Kernel(write=write)
    t2, bench2 = tuned(k2, configs(32, 128), restore_value=["src"], reset_to_zero=["src"],
                       key=("N",), name="other")
    dst = Tensor(2.0)
    t2[(1,)](dst, None, 8)
    assert bench2.calls == 2 and dst.value == 1.0


def test_user_hooks_are_called_around_each_candidate():
    counter = {"pre": 0, "post": 0}
    t, bench = tuned(Kernel(), configs(32, 128),
                     pre_hook=lambda nargs, reset_only=False: counter.__setitem__(
                         "pre", counter["pre"] + 1),
                     post_hook=lambda nargs, exception: counter.__setitem__(
                         "post", counter["post"] + 1))
    t[(1,)](Tensor(), Tensor(), 8)
    # Triton: one pre and post per candidate, one pre(reset_only=True) after benchmarking.
    assert counter == {"pre": 3, "post": 2}


def test_stacked_on_heuristics():
    k = Kernel(arg_names=("dst", "src", "N"))
    h = triton.heuristics({"EXTRA": lambda nargs: nargs["N"] * 2})(k)
    bench = Bench()
    bench.kernel = k
    t = tt.autotune(configs=configs(8, 4), key=["N"], do_bench=bench)(h)
    t[(1,)](Tensor(), Tensor(), 5)
    assert t.best_config.kwargs == {"BLOCK_SIZE": 4} and bench.calls == 2
    assert t.name == "_kernel_fn"


def test_one_config_kernel_never_tunes():
    k = Kernel()
    t, bench = tuned(k, configs(16))
    t[(1,)](Tensor(), Tensor(), 8)
    assert bench.calls == 0 and k.launches == [16] and not t.cache


def test_resolved_launch_passes_grid_warmup_and_the_winners_keywords():
    import sys

    k = Kernel()
    cfgs = [triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
            triton.Config({"BLOCK_SIZE": 32}, num_warps=8)]
    t, bench = tuned(k, cfgs)

    def grid(meta):
        return (4,)

    dst, src = Tensor(), Tensor()
    t[grid](dst, src, 1024)  # tunes
    t[grid](dst, src, 1024)  # the winner's keywords taken (and held) once
    assert bench.calls == 2
    refs = (sys.getrefcount(cfgs[1]), sys.getrefcount(grid), sys.getrefcount(dst))
    for _ in range(1000):
        t[grid](dst, src, 1024)
    assert (sys.getrefcount(cfgs[1]), sys.getrefcount(grid), sys.getrefcount(dst)) == refs
    args, g, warm, kw = k.last
    assert args == (dst, src, 1024) and g is grid and warm is False
    assert kw == cfgs[1].all_kwargs() and bench.calls == 2
    t.best_config = None
    t[grid](dst, src, 1024)
    assert t.best_config is cfgs[1]
    # A kernel argument by keyword takes Python's run: the same key, the same launch.
    t[grid](dst, src, N=1024)
    assert k.last[3] == {"N": 1024, **cfgs[1].all_kwargs()} and bench.calls == 2
    # A launch keyword that is not a kernel argument is passed on.
    t[grid](dst, src, 1024, enable_fp_fusion=False)
    assert k.last[3] == {"enable_fp_fusion": False, **cfgs[1].all_kwargs()}
    # Another dtype is another key; a replaced cache is the one consulted.
    t[grid](Tensor(dtype="fp16"), src, 1024)
    assert bench.calls == 4
    t.cache = {}
    t[grid](dst, src, 1024)
    assert t.last_source() == "memory" and (1024, "fp32", "fp32") in t.cache


def test_resolved_launch_with_a_config_pre_hook_and_one_config():
    seen = []
    cfgs = [triton.Config({"BLOCK_SIZE": 8}, pre_hook=lambda nargs: seen.append(nargs["N"])),
            triton.Config({"BLOCK_SIZE": 16})]
    t, bench = tuned(Kernel(), cfgs, cost=lambda b: 1.0 if b == 8 else 2.0)
    t[(1,)](Tensor(), Tensor(), 5)
    seen.clear()
    t[(1,)](Tensor(), Tensor(), 6)  # tunes: each candidate's pre_hook, then the launch's
    t[(1,)](Tensor(), Tensor(), 6)
    assert seen[-1] == 6 and t.best_config is cfgs[0] and t.fn.launches[-1] == 8
    one = Kernel()
    t1, b1 = tuned(one, configs(64))
    t1[(2,)](Tensor(), Tensor(), 3)
    t1[(2,)](Tensor(), Tensor(), 3)
    assert one.launches == [64, 64] and b1.calls == 0 and t1.best_config is t1.configs[0]
    assert one.last[1] == (2,) and one.last[3] == t1.configs[0].all_kwargs()


class TwoRanks:
    """Rank 0 of a two-rank group whose other rank measures candidate #1 ten times slower:
    the reductions of the candidates' times (a vector of the three and the failure flag) bring
    the other rank's values; broadcasts are rank 0's."""

    def __init__(self):
        self.calls = []

    def rank(self):
        return 0

    def size(self):
        return 2

    def local_rank(self):
        return 0

    def all_reduce_max(self, values):
        self.calls.append("max")
        values = list(values)
        if len(values) == 4 and values[3] == 0.0:  # three times and "no rank failed"
            values[1] *= 10
        return values

    def all_reduce_min(self, values):
        self.calls.append("min")
        return list(values)

    def broadcast(self, data, root):
        self.calls.append("broadcast")
        return data

    def barrier(self):
        self.calls.append("barrier")


def test_autotune_pg_the_worst_rank_decides():
    import tunekit

    class Group(TwoRanks, tunekit.Communicator):
        pass

    group = Group()
    t, bench = tuned(Kernel(), configs(128, 32, 64), autotune_pg=group)
    t[(1,)](Tensor(), Tensor(), 4096)
    assert "max" in group.calls and bench.calls == 3
    # Here 32 is fastest; on the other rank it takes 320: the worst rank's time decides.
    assert t.best_config.kwargs == {"BLOCK_SIZE": 64}


def test_deferred_runs_the_first_config_until_armed():
    import tunekit

    k = Kernel()
    t, bench = tuned(k, configs(128, 32, 64), deferred=True, use_disk_cache=False)
    t[(1,)](Tensor(), Tensor(), 7)
    t[(1,)](Tensor(), Tensor(), 7)
    assert bench.calls == 0 and k.launches == [128, 128] and not t.cache
    assert t.recorded_keys() == [(7, "fp32", "fp32")]
    assert tunekit.arm() >= 1
    t[(1,)](Tensor(), Tensor(), 7)
    assert bench.calls == 3 and t.best_config.kwargs == {"BLOCK_SIZE": 32}


def test_start_configs_and_budget_search_a_product_space():
    import itertools

    space = [triton.Config({"BLOCK_SIZE": b, "UNROLL": u}, num_warps=w)
             for b, u, w in itertools.product((16, 32, 64, 128, 256), (1, 2, 4, 8), (2, 4, 8))]
    best = dict(BLOCK_SIZE=64, UNROLL=4, num_warps=4)

    def cost(block):
        return 1.0

    k = Kernel()
    bench = Bench()
    bench.kernel = k

    def do_bench(kernel_call, quantiles):
        bench.calls += 1
        kernel_call()
        kw = k.last[3]
        t = 1.0 + sum(abs(kw[n] - v) / v for n, v in best.items())
        return [t, t, t]

    t = tt.autotune(configs=space, key=["N"], do_bench=do_bench, budget=20, seed=3,
                    start_configs=[space[0]], use_disk_cache=False)(k)
    t[(1,)](Tensor(), Tensor(), 1)
    assert bench.calls == 20 and len(t.configs_timings) == 20
    assert space[0] in t.configs_timings  # the start config was measured
    found = min(t.configs_timings, key=lambda c: t.configs_timings[c][0])
    assert t.best_config is found


def test_contextual_autotune_takes_over_these_autotuners():
    import tunekit

    k = Kernel()
    t, bench = tuned(k, configs(128, 32))

    class Cost:
        name = "simulated"

        def measure(self, run, request):
            run()
            return [1.0 if "32" in str(request.config) else 2.0] * request.runs

    @tunekit.contextual_autotune(n_repeat=2, n_warmup=1, measurer=Cost())
    def outer(n):
        t[(1,)](Tensor(), Tensor(), n)
        return k.launches[-1]

    assert outer(64) == 32
    assert bench.calls == 0  # the drop-in's own tuning never ran
    assert t.cache[(64, "fp32", "fp32")].kwargs == {"BLOCK_SIZE": 32}
    k.launches.clear()
    t[(1,)](Tensor(), Tensor(), 64)  # the contextual winner, served by the launch in C
    assert k.launches == [32] and t.best_config.kwargs == {"BLOCK_SIZE": 32}
