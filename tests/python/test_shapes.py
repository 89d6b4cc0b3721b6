"""Key buckets and nearest-key serving from Python (docs/shapes.md): calls whose key values fall
in one bucket share one search and one entry; with ``on_miss="nearest"`` a key nothing is stored
for runs the winner of the nearest known key, without measuring. The Triton drop-in takes the
same options, its key values named by ``key=[...]``."""

from __future__ import annotations

import json
import os

import pytest

import tunekit


class KeyCost:
    """A measurer whose best BLOCK is the one nearest to the call's n (the key's first value)."""

    name = "simulated"

    def __init__(self):
        self.measured = 0

    def measure(self, run, request):
        self.measured += 1
        run()
        n = request.key[0]
        return [1.0 + abs(request.config["BLOCK"] - n) / 100.0] * request.runs


SPACE = [{"BLOCK": b} for b in (256, 512, 1024, 2048)]


def make(**kw):
    m = KeyCost()

    @tunekit.autotune(SPACE, lambda n, dtype="f32": (n, dtype), measurer=m, **kw)
    def scale(n, dtype="f32", *, BLOCK):
        return BLOCK

    return scale, m


def test_pow2_bucket_shares_one_search_and_one_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path))
    scale, m = make(key_buckets={0: tunekit.pow2()})
    assert scale(900) == 1024 and scale.last_source() == "search"
    assert scale(1000) == 1024 and scale.last_source() == "memory" and m.measured == 4
    record = tunekit.read_entry(scale.cache_path(1000, "f32"))["record"]
    assert record["key"] == (1024, "f32") and record["key_buckets"] == "[0] pow2"
    assert scale.cache_path(900, "f32") == scale.cache_path(1024, "f32")
    again, m2 = make(key_buckets={0: "pow2"})
    assert again(1023) == 1024 and again.last_source() == "cache" and m2.measured == 0


def test_buckets_by_key_name_edges_and_multiple(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path))
    scale, m = make(key_names=["n", "dtype"], key_buckets={"n": tunekit.edges(256, 2048)})
    scale(300)
    scale(1500)
    assert m.measured == 4  # 300 and 1500 are both in the bucket of 2048
    scale2, m2 = make(key_buckets={0: tunekit.multiple(1000)})
    scale2(1)
    assert tunekit.read_entry(scale2.cache_path(1, "f32"))["record"]["key"] == (1, "f32")
    scale2(1500)
    assert tunekit.read_entry(scale2.cache_path(1500, "f32"))["record"]["key"] == (2000, "f32")


def test_bad_buckets_are_clear_errors():
    with pytest.raises(ValueError, match="not one of the key's names"):
        make(key_names=["n"], key_buckets={"m": tunekit.pow2()})
    with pytest.raises(ValueError, match="not tunekit.pow2"):
        make(key_buckets={0: "log2"})
    with pytest.raises(TypeError, match="a position"):
        make(key_buckets={-1: "pow2"})
    scale, _ = make(key_buckets={1: "pow2"})
    with pytest.raises(tunekit.Error, match="not an int"):
        scale(4)  # value 1 of the key is the dtype, a string
    with pytest.raises(tunekit.Error, match="strictly ascending"):
        make(key_buckets={0: tunekit.edges(8, 4)})[0](1)
    with pytest.raises(ValueError, match="on_miss must be"):
        make(on_miss="closest")[0](1)


def test_nearest_serves_the_nearest_known_key_without_measuring(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path))
    seed, _ = make()
    assert seed(256) == 256 and seed(2048) == 2048
    scale, m = make(on_miss="nearest")
    assert scale(600) == 256 and scale.last_source() == "nearest" and m.measured == 0
    assert scale(1900) == 2048 and scale.last_source() == "nearest"
    assert scale(1900, "f16") == 2048 and scale.last_source() == "search"  # nothing with f16
    assert m.measured == 4
    assert scale(600) == 256 and scale.last_source() == "memory"
    tune, m3 = make()
    assert tune(600) == 512 and tune.last_source() == "search" and m3.measured == 4


def test_triton_dropin_takes_buckets_by_key_name(tmp_path, monkeypatch):
    triton = pytest.importorskip("triton")
    import tunekit.triton as tt

    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path))

    def _kernel_fn(x, N, BLOCK):
        pass

    class Kernel:
        arg_names = ["x", "N"]
        src = "def k(x, N, BLOCK): pass"

        def __init__(self):
            self.fn = _kernel_fn
            self.launches = []

        def run(self, *args, grid=None, warmup=False, **kw):
            self.launches.append(kw["BLOCK"])

    k = Kernel()
    calls = []

    def bench(kernel_call, quantiles):
        kernel_call()
        calls.append(k.launches[-1])
        return [float(abs(k.launches[-1] - 1000))] * 3

    cfgs = [triton.Config({"BLOCK": b}) for b in (256, 1024)]
    t = tt.autotune(configs=cfgs, key=["N"], do_bench=bench, key_buckets={"N": tunekit.pow2()},
                    on_miss="nearest")(k)
    t[(1,)](None, 1000)
    t[(1,)](None, 900)  # the bucket of 1024: from memory
    assert len(calls) == 2 and t.last_source() == "memory" and k.launches[-1] == 1024
    t[(1,)](None, 3000)  # bucket 4096, nothing stored: the nearest key's winner
    assert len(calls) == 2 and t.last_source() == "nearest" and k.launches[-1] == 1024


# ---- campaigns and per-shape files -----------------------------------------------------------


def test_campaign_tunes_each_call_once_resumes_and_writes_a_per_shape_file(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "cache"))
    scale, m = make(key_names=["M", "dtype"])
    ms = [1, 2, 4, 300, 700, 2000]
    result = tunekit.campaign(scale, [(M,) for M in ms], progress=False)
    assert result.size == 1 and result.tuned == len(ms) and m.measured == 4 * len(ms)
    # Run again (a campaign killed and started again): every call is a cache hit.
    again, m2 = make(key_names=["M", "dtype"])
    resumed = tunekit.campaign(again, [tunekit.Call(M) for M in ms], progress=False)
    assert resumed.tuned == 0 and set(resumed.sources.values()) == {"cache"} and m2.measured == 0
    out = tmp_path / "E=8,N=14336,device_name=Test.json"
    written = tunekit.write_per_shape_json(again, out, by="M")
    assert list(written) == ["1", "2", "4", "300", "700", "2000"]
    assert json.loads(out.read_text()) == written
    assert written["300"] == {"BLOCK": 256} and written["2000"] == {"BLOCK": 2048}
    # Served from the file by the nearest M, in a process with no winner cache.
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "empty"))
    served, m3 = make(key_names=["M", "dtype"], on_miss="nearest")
    assert tunekit.load_per_shape_json(served, out, key=lambda M: (M, "f32")) == 6
    assert served(300) == 256 and served.last_source() == "memory"
    assert served(1500) == 2048 and served.last_source() == "nearest"
    assert served(600) == 512  # 700 is nearer than 300: its winner
    assert m3.measured == 0


def test_per_shape_files_refuse_what_does_not_fit(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "cache"))
    scale, _ = make()
    scale(8, "f32")
    scale(8, "f16")
    with pytest.raises(ValueError, match="differ in other key values"):
        tunekit.write_per_shape_json(scale, tmp_path / "x.json", by=0)
    bad = tmp_path / "bad.json"
    bad.write_text('{"16": {"BLOCK": 333}}')
    with pytest.raises(ValueError, match="is not a config of"):
        tunekit.load_per_shape_json(scale, bad, key=lambda M: (M, "f32"))


def test_campaign_splits_calls_across_ranks():
    class Rank1Of2(tunekit.Communicator):
        def __init__(self):
            self.barriers = 0

        def rank(self):
            return 1

        def size(self):
            return 2

        def all_reduce_max(self, values):
            raise AssertionError("a rank tunes its share alone")

        all_reduce_min = all_reduce_max

        def broadcast(self, data, root):
            raise AssertionError("a rank tunes its share alone")

        def barrier(self):
            self.barriers += 1

    scale, m = make(use_disk_cache=False)
    group = Rank1Of2()
    result = tunekit.campaign(scale, [(M,) for M in (1, 2, 3, 4, 5)], pg=group, progress=False)
    assert sorted(result.sources) == [1, 3] and result.rank == 1 and group.barriers == 1
    assert m.measured == 8


CAMPAIGN_KILLED = r"""
import os, signal, sys
import tunekit

class DiesAtThirdKey:
    name = "simulated"
    def __init__(self):
        self.keys = set()
    def measure(self, run, request):
        self.keys.add(request.key)
        if len(self.keys) == 3:
            os.kill(os.getpid(), signal.SIGKILL)  # killed while tuning the third key
        run()
        return [1.0 + abs(request.config["BLOCK"] - request.key[0]) / 100.0] * request.runs

@tunekit.autotune([{"BLOCK": b} for b in (256, 512, 1024, 2048)], lambda n: (n,),
                  measurer=DiesAtThirdKey(), version="v1")
def scale(n, *, BLOCK):
    return BLOCK

tunekit.campaign(scale, [(n,) for n in (100, 600, 1100, 1600, 2100)], progress=False)
"""


CAMPAIGN_RESUMED = r"""
import json, sys
import tunekit
sys.path.insert(0, sys.argv[1])  # this test's folder: the measurer and space of its tests
from test_shapes import SPACE, KeyCost

m = KeyCost()

@tunekit.autotune(SPACE, lambda n: (n,), measurer=m, version="v1")
def scale(n, *, BLOCK):
    return BLOCK

result = tunekit.campaign(scale, [(n,) for n in (100, 600, 1100, 1600, 2100)], progress=False)
print(json.dumps([[result.sources[i] for i in range(5)], m.measured]))
"""


def test_a_campaign_killed_midway_resumes_where_it_stopped(tmp_path, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path))
    script = tmp_path / "campaign.py"
    script.write_text(CAMPAIGN_KILLED)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == -9, r.stderr
    # The campaign run again, as its user would, in a fresh process: one that imported nothing
    # else, so that its hardware and dependencies are the killed one's (a process that has CUDA
    # in use through PyTorch records the GPU and PyTorch's version, and would miss).
    resume = tmp_path / "resume.py"
    resume.write_text(CAMPAIGN_RESUMED)
    r = subprocess.run([sys.executable, str(resume), os.path.dirname(os.path.abspath(__file__))],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    sources, measured = json.loads(r.stdout.splitlines()[-1])
    assert sources == ["cache", "cache", "search", "search", "search"]
    assert measured == 3 * len(SPACE)
