"""Triton's cache_results files (`<kernel>.autotune.json`) as measurements made before, without a
GPU: files laid out as Triton's `Autotuner.check_disk_cache` writes them (json.dumps of the key and
of each `triton.Config.__dict__` with its `do_bench` quantiles), imported into the drop-in over a
stand-in kernel whose benchmark calls are counted."""

from __future__ import annotations

import json
import os

import pytest

triton = pytest.importorskip("triton", reason="the drop-in subclasses Triton's Autotuner")
import tunekit.triton as tt  # noqa: E402


def _kernel_fn(dst, src, N, BLOCK_SIZE):
    pass


class Tensor:
    def __init__(self, dtype="fp32"):
        self.dtype = dtype


class Kernel:
    def __init__(self):
        self.arg_names = ["dst", "src", "N"]
        self.src = "def _kernel(dst, src, N, BLOCK_SIZE): pass"
        self.fn = _kernel_fn
        self.launches = []

    def run(self, *args, grid=None, warmup=False, **kwargs):
        self.launches.append(kwargs.get("BLOCK_SIZE"))


class Bench:
    def __init__(self, kernel):
        self.kernel = kernel
        self.benched = []

    def __call__(self, kernel_call, quantiles):
        kernel_call()
        block = self.kernel.launches[-1]
        self.benched.append(block)
        t = block / 1000.0
        return [t, t, t]


def configs(*blocks):
    return [triton.Config(kwargs={"BLOCK_SIZE": b}) for b in blocks]


def tuned(blocks, **kw):
    kernel = Kernel()
    bench = Bench(kernel)
    t = tt.autotune(configs=configs(*blocks), key=["N"], do_bench=bench, **kw)(kernel)
    return t, kernel, bench


def write_triton_file(path, key, timings):
    """What Triton's check_disk_cache puts: json.dumps({"key": key, "configs_timings": [...]})."""
    doc = {"key": key,
           "configs_timings": [(c.__dict__, t) for c, t in timings]}
    path.write_text(json.dumps(doc))  # Infinity for a failed config, as Triton writes it
    return path


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "cache"))


def test_imported_measurements_are_taken_and_only_the_rest_measured(tmp_path):
    c32, c64, c128, c512 = configs(32, 64, 128, 512)
    inf = float("inf")
    key = (1024, "fp32", "fp32")
    f = write_triton_file(tmp_path / "_kernel_fn.autotune.json", key, [
        (c32, [0.5, 0.4, 0.6]),      # slower than measured here: what counts is the file's
        (c128, [0.001, 0.001, 0.002]),  # the fastest
        (c512, [0.0001] * 3),        # not a config of this autotuner: not taken
        (c64, [inf, inf, inf]),      # failed under Triton
    ])
    assert "Infinity" in f.read_text()
    t, kernel, bench = tuned((32, 64, 128, 256))
    assert t.import_cache_results(f) == 3
    t[(1,)](Tensor(), Tensor(), 1024)
    assert bench.benched == [256]  # only the config the file lacks
    assert t.last_source() == "search"
    assert t.best_config.kwargs == {"BLOCK_SIZE": 128}
    assert kernel.launches[-1] == 128
    entry = json.loads(open(t.cache_path(key)).read())
    by_block = {c["config"]["BLOCK_SIZE"]: c for c in entry["candidates"]}
    assert by_block[32]["time_ms"] == pytest.approx(0.5)
    assert by_block[64]["status"] == "failed"
    assert "Triton cache_results" in by_block[64]["reason"]
    assert by_block[256]["time_ms"] == pytest.approx(0.256)
    # A key the file does not hold is measured whole.
    bench.benched.clear()
    t[(1,)](Tensor(), Tensor(), 2048)
    assert sorted(bench.benched) == [32, 64, 128, 256]


def test_a_folder_is_searched_for_the_kernels_files_and_a_bad_one_skipped(tmp_path):
    c32, c64 = configs(32, 64)
    root = tmp_path / "triton-cache"
    (root / "a1").mkdir(parents=True)
    (root / "b2").mkdir()
    (root / "c3").mkdir()
    write_triton_file(root / "a1" / "_kernel_fn.autotune.json", (16, "fp32", "fp32"),
                      [(c32, [1.0, 1.0, 1.0]), (c64, [2.0, 2.0, 2.0])])
    write_triton_file(root / "b2" / "other_kernel.autotune.json", (16, "fp32", "fp32"),
                      [(c32, [9.0, 9.0, 9.0])])
    (root / "c3" / "_kernel_fn.autotune.json").write_text('{"key": [16], "configs_')
    t, _, bench = tuned((32, 64))
    with pytest.warns(UserWarning, match=r"c3/_kernel_fn.autotune.json.*skipped"):
        assert t.import_cache_results(root) == 2
    t[(1,)](Tensor(), Tensor(), 16)
    assert bench.benched == []  # both taken from a1's file; b2's is another kernel's
    assert t.best_config.kwargs == {"BLOCK_SIZE": 32}


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "not a JSON object"),
    ('{"configs_timings": [[{}, [1.0]]]}', "'key' is missing"),
    ('{"key": [1], "configs_timings": []}', "'configs_timings' is missing, empty"),
    ('{"key": [1], "configs_timings": [[{"kwargs": {"B": 1}}]]}', "not a \\[config, timings\\]"),
    ('{"key": [1], "configs_timings": [[{"kwargs": {"B": 1}}, ["x"]]]}', "not a number"),
    ('{"key": [1], "configs_timings": [[{"kwargs": {"B": 1}}, [-1.0]]]}', "a timing is -1.0"),
    ('{"key": [1], "configs_timings": [[{"kwargs": 3}, [1.0]]]}', "'kwargs' is a int"),
    ('{"key": [1], "configs_timings": [[{"kwargs": {}, "pre_hook": "f"}, [1.0]]]}', "pre_hook"),
    ('{"key": [1], "configs_timings": [[{"kwargs": {}}, [NaN]]]}', "a timing is nan"),
    ('{"key": [1], "configs', "Unterminated string"),
    ('{"key": ' + "[" * 100000 + "]" * 100000 + "}", "nested too deeply"),
])
def test_a_bad_file_named_directly_is_a_clear_error(tmp_path, text, message):
    f = tmp_path / "bad.autotune.json"
    f.write_text(text)
    t, _, _ = tuned((32, 64))
    with pytest.raises(ValueError, match=message) as e:
        t.import_cache_results(f)
    assert str(f) in str(e.value)
    with pytest.raises(ValueError, match="no such file"):
        t.import_cache_results(tmp_path / "missing.autotune.json")


def test_a_fifo_or_a_file_over_the_size_limit_is_refused_without_reading_it(tmp_path, monkeypatch):
    t, _, _ = tuned((32, 64))
    fifo = tmp_path / "fifo.autotune.json"
    os.mkfifo(fifo)  # no writer: a blocking open would wait forever
    with pytest.raises(ValueError, match="is a FIFO, not a regular file"):
        t.import_cache_results(fifo)
    big = tmp_path / "big.autotune.json"
    big.write_text('{"key": [1], "configs_timings": []}' + " " * 2000)
    monkeypatch.setenv("TUNEKIT_MAX_FILE_SIZE", "1K")
    with pytest.raises(ValueError, match=r"larger than the limit of 1024 bytes \(TUNEKIT_MAX_FILE"):
        t.import_cache_results(big)


def test_without_a_gpu_target_cache_results_reads_nothing_and_tunes(tmp_path):
    # cache_results=True looks for the file Triton would read; without a GPU driver there is none
    # to work out, and every config is measured.
    t, _, bench = tuned((32, 64), cache_results=True)
    t[(1,)](Tensor(), Tensor(), 8)
    assert sorted(bench.benched) == [32, 64]
    assert t.last_source() == "search"
