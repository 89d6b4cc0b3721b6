"""tunekit.triton's compile pool without a GPU: real Triton compiles (for sm_90, with the ptxas
Triton ships) in forked worker processes, landing in Triton's cache on disk where the launch's own
compile finds them. The launch is a stand-in that binds its arguments as JITFunction.run does and
hands them to ``_do_compile``."""

from __future__ import annotations

import glob
import os
import time
import types

import pytest

triton = pytest.importorskip("triton", reason="the compile pool compiles Triton kernels")
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler.compiler import ASTSource, make_backend  # noqa: E402

from tunekit.triton._compile import CompilePool  # noqa: E402


@triton.jit
def _scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


TARGET = GPUTarget("cuda", 90, 32)
SIGNATURE = {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


class Launch:
    """What the pool calls as ``owner.fn``: ``run(*args, grid, warmup, **meta)`` reaching the
    JIT function's ``_do_compile`` with the arguments JITFunction.run would give it."""

    def __init__(self, jit):
        self.fn = jit
        self.arg_names = ["x_ptr", "n", "BLOCK"]
        self.backend = make_backend(TARGET)
        # What JITFunction.create_binder sets up, without a driver to ask for the target.
        jit.device_caches[0] = ({}, {}, TARGET, self.backend, None)
        jit.ASTSource, jit.compile = ASTSource, triton.compile
        self.runs = []

    def args_of(self, kw):
        options = self.backend.parse_options({"num_warps": kw["num_warps"],
                                              "num_stages": kw["num_stages"]})
        return SIGNATURE, {(2,): kw["BLOCK"]}, options, {}

    def run(self, *args, grid, warmup, **kw):
        self.runs.append((warmup, kw["BLOCK"]))
        signature, constexprs, options, attrs = self.args_of(kw)
        return self.fn._do_compile(("k", kw["BLOCK"]), signature, 0, constexprs, options, attrs,
                                   warmup)


def cubins(root):
    return sorted(glob.glob(os.path.join(root, "**", "*.cubin"), recursive=True))


@pytest.fixture
def triton_cache(tmp_path, monkeypatch):
    root = tmp_path / "triton-cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(root))
    return str(root)


def test_candidates_compile_in_workers_into_tritons_cache(triton_cache):
    launch = Launch(_scale)
    cfgs = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((64, 2), (128, 4), (256, 4))]
    owner = types.SimpleNamespace(fn=launch, configs=cfgs)
    pool = CompilePool(owner, 2)
    pool.begin(("x", 1000), {"grid": (1,), "warmup": False})
    start = time.perf_counter()
    pool.prepare([0, 1, 2])
    handed = time.perf_counter() - start
    assert [r[0] for r in launch.runs] == [True, True, True]  # bound here, compiled there
    assert "_do_compile" not in vars(_scale)  # the method is Triton's again
    for i in range(3):
        pool.wait(i)
    assert pool.compiled == 3 and all(pool.prepare_ms(i) > 0 for i in range(3))
    assert pool.disabled is None
    assert len(cubins(triton_cache)) == 3
    # The launch's own compile of the same arguments is a hit in Triton's cache: no new binary,
    # and far quicker than the workers' compiles.
    start = time.perf_counter()
    for c in cfgs:
        signature, constexprs, options, attrs = launch.args_of(c.all_kwargs())
        triton.compile(ASTSource(_scale, signature, constexprs, attrs), target=TARGET,
                       options=options.__dict__)
    assert len(cubins(triton_cache)) == 3
    assert time.perf_counter() - start < sum(pool.prepare_ms(i) for i in range(3)) / 1e3
    # Handing the batch over does not wait for the compiles.
    assert handed < sum(pool.prepare_ms(i) for i in range(3)) / 1e3
    pool.end()


def test_a_failing_compile_is_left_to_the_launch_and_the_rest_go_on(triton_cache):
    launch = Launch(_scale)
    cfgs = [triton.Config({"BLOCK": 100}), triton.Config({"BLOCK": 64})]  # arange needs 2^k
    pool = CompilePool(types.SimpleNamespace(fn=launch, configs=cfgs), 2)
    pool.begin(("x", 10), {"grid": (1,), "warmup": False})
    pool.prepare([0, 1])
    pool.prepare([0, 1])  # already handed over: not again
    pool.wait(0)
    pool.wait(1)
    assert len(launch.runs) == 2
    assert pool.prepare_ms(0) is None and pool.prepare_ms(1) > 0 and pool.compiled == 1
    pool.wait(5)  # never prepared: nothing to wait for
    pool.end()
    pool.prepare([0])  # after end(): the call's arguments are gone, nothing is done
    assert len(launch.runs) == 2


def test_pool_stands_aside_where_it_cannot_work(triton_cache, monkeypatch):
    class NotJit:
        fn = None

        def run(self, *a, **k):
            raise AssertionError("not called")

    pool = CompilePool(types.SimpleNamespace(fn=NotJit(), configs=[triton.Config({})]), 2)
    pool.begin((), {"grid": (1,), "warmup": False})
    pool.prepare([0])
    assert pool.disabled == "the kernel is not a triton.jit function"
    assert pool.prepare_ms(0) is None
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    launch = Launch(_scale)
    pool = CompilePool(types.SimpleNamespace(fn=launch, configs=[triton.Config({"BLOCK": 64})]),
                       2)
    pool.begin(("x", 10), {"grid": (1,), "warmup": False})
    pool.prepare([0])
    assert pool.disabled == "TRITON_ALWAYS_COMPILE is set" and launch.runs == []


def test_default_workers_divide_the_node_between_its_ranks(monkeypatch):
    from tunekit.triton import _compile

    for name in _compile._LOCAL_SIZE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 128)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(128)))
    assert _compile.default_workers() == 32  # alone on the node: the cap
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "8")  # torchrun, 8 ranks on the node
    assert _compile.default_workers() == 16
    monkeypatch.delenv("LOCAL_WORLD_SIZE")
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "64")
    assert _compile.default_workers() == 2
    # Bound to 12 CPUs by the launcher: its share already.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(12)))
    assert _compile.default_workers() == 12
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "not a number")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(128)))
    assert _compile.default_workers() == 32


def test_autotuner_compiles_ahead_through_the_core(triton_cache, tmp_path, monkeypatch):
    import json

    import tunekit.triton as tt

    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "tk"))
    launch = Launch(_scale)
    compiled_before_launch = []

    def bench(kernel_call, quantiles):
        # When a candidate is timed its compile is done: its binary is in Triton's cache.
        compiled_before_launch.append(len(cubins(triton_cache)))
        kernel_call()
        return [float(launch.runs[-1][1])] * 3

    cfgs = [triton.Config({"BLOCK": b}) for b in (256, 64, 128, 512)]
    t = tt.autotune(configs=cfgs, key=["n"], do_bench=bench, compile_workers=2)(launch)
    assert t.compile_workers == 2
    t[(1,)]("x", 1000)
    assert t.best_config is cfgs[1] and t._pool is not None and t._pool.compiled == 4
    assert compiled_before_launch[0] >= 1 and len(cubins(triton_cache)) == 4
    entry = json.load(open(t.cache_path((1000,))))
    assert all(c.get("prepare_ms", 0) > 0 for c in entry["candidates"]), entry["candidates"]
    # compile_workers=0: no pool, every candidate compiles at its launch.
    t0 = tt.autotune(configs=cfgs, key=["n"], do_bench=bench, compile_workers=0,
                     use_disk_cache=False)(Launch(_scale))
    assert t0.compile_workers == 0
    with pytest.raises(ValueError, match="compile_workers must be >= 0"):
        tt.autotune(configs=cfgs, key=["n"], compile_workers=-1)(launch)


def test_a_triton_whose_do_compile_differs_turns_the_pool_off(triton_cache):
    launch = Launch(_scale)

    def run(*args, grid, warmup, **kw):  # a newer Triton passing one more argument
        return launch.fn._do_compile("key", SIGNATURE, 0, {}, None, {}, True, "extra")

    launch.run = run
    pool = CompilePool(types.SimpleNamespace(fn=launch, configs=[triton.Config({"BLOCK": 64})]),
                       2)
    pool.begin(("x", 10), {"grid": (1,), "warmup": False})
    pool.prepare([0])
    assert "takes 8 positional" in pool.disabled and pool.prepare_ms(0) is None
    assert "_do_compile" not in vars(_scale)
