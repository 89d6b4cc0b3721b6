"""``tunekit report`` (python/tunekit/report/): the page holds the right data, parsed back from the
JSON it embeds, for caches written by the C++ core (a test helper binary, and the package's tuner),
entries written in the core's format (a strategy search, several ranks, the older schema /1), bad
entries (listed, not fatal) and an empty cache.

The report reads entries through the core's reader, so these tests need the installed package
(with its compiled extension) and plotly, which the package depends on."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _package_installed() -> bool:
    try:
        import tunekit  # noqa: F401

        return importlib.util.find_spec("tunekit._core") is not None
    except ImportError:
        return False


if not _package_installed():
    pytest.skip("the tunekit package is not installed (pip install .)", allow_module_level=True)
import plotly  # noqa: E402,F401  (an installed package brings plotly: its absence is a bug)
from tunekit import _core  # noqa: E402
from tunekit import report  # noqa: E402

HW = {"kind": "host", "name": "Test CPU", "arch": "x86_64", "units": 8, "count": 1}
HW["digest"] = _core.hardware_digest(HW)


def entry(name, key, candidates, winner, *, search=None, world_size=1, version="v1",
          schema="tunekit.winner_cache/1"):
    """An entry in the core's format (docs/cache.md); schema /1 unless told, which its reader
    converts (the measuring rank from the reasons)."""
    e = {
        "schema": schema,
        "function": {"name": name, "version": version},
        "key": key,
        "hardware": HW,
        "dependencies": {"compiler": "gcc 12.2.0", "tunekit": "0.1.0"},
        "winner": {"config": candidates[winner]["config"], "index": winner},
        "candidates": candidates,
        "policy": {"warmup": 5, "runs": 10, "statistic": "mean"},
        "measurer": "simulated",
        "world_size": world_size,
        "timestamp": "2026-11-30T12:00:00Z",
    }
    if search is not None:
        e["search"] = search
    return e


def ok(cfg, t, reason=None):
    c = {"config": cfg, "status": "ok", "time_ms": t,
         "stats": {"mean": t, "median": t, "min": t, "max": t, "stddev": 0.0}}
    if reason:
        c["reason"] = reason
    return c


def failed(cfg, reason, status="failed"):
    return {"config": cfg, "status": status, "time_ms": None, "reason": reason}


def write(cache: Path, e: dict) -> Path:
    """Writes `e` as it is, where the core keeps it (the file named by its identity)."""
    text = json.dumps(e)
    p = Path(_core.entry_path(str(cache), text))
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def page_data(cache: Path, functions=()) -> tuple[str, dict]:
    text = report.build_html(cache, functions)
    return text, report.read_report_data(text)


def by_function(data):
    return {(a["function"], a["key_text"]): a for a in data["entries"]}


def _expected_trace(times_in_order):
    best, out = math.inf, []
    for t in times_in_order:
        if t is not None and t < best:
            best = t
        out.append(None if math.isinf(best) else best)
    return out


# --- a cache the C++ core wrote ---------------------------------------------------------------

def _cpp_helper():
    build = Path(os.environ.get("TUNEKIT_CXX_BUILD") or ROOT / "build")
    exe = build / "tests" / "core" / "tunekit_cache_process"
    return exe if exe.exists() else None


def test_a_cache_written_by_the_cpp_core(tmp_path):
    exe = _cpp_helper()
    if exe is None:
        pytest.skip("no C++ build of tests/core/tunekit_cache_process (set TUNEKIT_CXX_BUILD)")
    cache = tmp_path / "cache"
    for args in (["1024"], ["300", "636166e9"]):  # the second key holds the bytes "caf\xe9"
        run = subprocess.run([str(exe), str(cache), *args], capture_output=True, text=True,
                             timeout=60)
        assert run.returncode == 0, run.stderr
    files = sorted((cache / "autotune").rglob("*.json"))
    assert len(files) == 2
    text, data = page_data(cache)
    assert data["bad"] == [] and len(data["entries"]) == 2
    for f in files:
        raw = json.loads(f.read_text())
        (a,) = [a for a in data["entries"] if a["path"] == str(f)]
        assert a["function"] == raw["function"]["name"] and a["key"] == raw["key"]
        cands = raw["candidates"]
        ok_times = [c["time_ms"] for c in cands if c["status"] == "ok"]
        assert a["times"] == ok_times
        assert a["winner"]["config"] == raw["winner"]["config"]
        assert a["winner"]["time_ms"] == cands[raw["winner"]["index"]]["time_ms"]
        # Exhaustive: the default is candidate 0 (the space's first config); the curve follows
        # the candidate order of the measured ones.
        assert a["default"]["config"] == cands[0]["config"]
        measured = [c for c in cands if c["status"] != "pruned"]
        space = raw.get("space")  # entries list the kept candidates and count the pruned ones
        assert a["pruned"] == (space["pruned"] if space else len(cands) - len(measured))
        assert a["best_so_far"] == _expected_trace([c["time_ms"] for c in measured])
        if cands[0]["status"] == "ok":
            assert a["speedup"] == pytest.approx(cands[0]["time_ms"] / a["winner"]["time_ms"])
        assert a["log_path"] == str(f.with_suffix(".log"))
    keys = sorted(a["key_text"] for a in data["entries"])
    assert keys == ["(1024)", "(300, b'caf\\xe9')"]
    # One plotly figure per plot: distribution, parameters and convergence for each entry.
    assert text.count('class="fig fig-') == 6
    assert "b&#x27;caf\\xe9&#x27;" in text  # the key's bytes, shown in the page


def test_entries_the_package_tuner_wrote(tmp_path, monkeypatch):
    """The installed package's tuner (the C++ core underneath) with candidates that fail."""
    if not _package_installed():
        pytest.skip("the tunekit package is not installed")
    import tunekit
    from conftest import CostMeasurer

    cache = tmp_path / "pycache"
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(cache))
    space = [{"BLOCK": b, "mode": m} for b in (64, 128, 256) for m in ("fast", "safe")]

    def cost(c):
        return {64: 3.0, 128: 2.0, 256: 1.0}[c["BLOCK"]] + (0.5 if c["mode"] == "safe" else 0)

    def fn(n, *, BLOCK, mode):
        if BLOCK == 64 and mode == "fast":
            raise ValueError("BLOCK 64 needs the safe mode")
        return BLOCK

    t = tunekit.autotune(space, key_fn=lambda n: (n,), name="report.py_tuner",
                         measurer=CostMeasurer(cost))(fn)
    assert t(10) == 256
    _, data = page_data(cache, ["report.py_tuner"])
    (a,) = data["entries"]
    assert a["measured"] == 6 and a["ok"] == 5
    assert a["winner"]["config"] == {"BLOCK": 256, "mode": "fast"}
    (fl,) = a["failures"]
    assert fl["count"] == 1 and "BLOCK 64 needs the safe mode" in fl["reason"]
    assert a["default"]["status"] == "failed" and a["speedup"] is None


# --- entries in the core's format ------------------------------------------------------------

def strategy_cache(tmp_path):
    cache = tmp_path / "cache"
    # A strategy measured 5 of 200 candidates; listed in candidate order, measured in `order`.
    cands = [ok({"tile": 8, "unroll": 1}, 4.0), ok({"tile": 16, "unroll": 2}, 2.0),
             failed({"tile": 64, "unroll": 1}, "tile 64 exceeds the scratch buffer"),
             ok({"tile": 32, "unroll": 4}, 1.5), failed({"tile": 64, "unroll": 2},
                                                        "tile 64 exceeds the scratch buffer")]
    search = {"strategy": "hybrid", "seed": 3, "max_evaluations": 5, "max_time_s": 0.0,
              "patience": 0, "batch_size": 1, "lookahead": 2, "space_size": 200,
              "evaluations": 5, "stop": "evaluations", "transferred": 0, "order": [2, 1, 0, 4, 3]}
    write(cache, entry("demo.sum", [65536], cands, 3, search=search))
    # Two ranks split the candidates (parallel split): rank 1's are marked.
    split = [ok({"B": 1}, 3.0), ok({"B": 2}, 2.5, "measured on rank 1"), ok({"B": 3}, 1.0),
             failed({"B": 4}, "failed on rank 1"), failed({"B": 5}, "wrong result",
                                                          "wrong_result")]
    write(cache, entry("demo.split", [7], split, 2, world_size=2))
    # Two ranks that both measured everything: only the worst rank's time is kept.
    write(cache, entry("demo.allranks", [7], [ok({"B": 1}, 3.0), ok({"B": 2}, 1.0)], 1,
                       world_size=2))
    return cache


def test_a_strategy_search_in_the_order_measured(tmp_path):
    cache = strategy_cache(tmp_path)
    text, data = page_data(cache)
    a = by_function(data)[("demo.sum", "(65536)")]
    assert a["order"] == [2, 1, 0, 4, 3]
    assert a["best_so_far"] == [None, 2.0, 2.0, 2.0, 1.5]
    assert a["winner"] == {"index": 3, "config": {"tile": 32, "unroll": 4}, "time_ms": 1.5}
    assert a["default"] is None and a["speedup"] is None  # only measured candidates are listed
    assert a["failures"] == [{"reason": "failed: tile 64 exceeds the scratch buffer", "count": 2,
                              "indices": [2, 4]}]
    assert a["parameters"] == ["tile", "unroll"] and sorted(a["times"]) == [1.5, 2.0, 4.0]
    assert a["search"]["strategy"] == "hybrid" and a["search"]["space_size"] == 200
    assert "strategy hybrid (seed 3): 5 of 200 kept candidates measured" in text
    assert "batch 1, 2 proposed ahead, 0 transferred start points" in text
    assert "Best time so far against evaluations (strategy hybrid)" in text


def test_the_default_where_the_entry_tells(tmp_path):
    cache = tmp_path / "cache"
    cands = [ok({"B": 1}, 4.0), ok({"B": 2}, 2.0), ok({"B": 3}, 1.0)]

    def with_space(e, pruned, position):
        e["space"] = {"size": 3 + pruned, "pruned": pruned, "digest": "0" * 64, "winner": position}
        return e

    search = {"strategy": "hybrid", "seed": 0, "max_evaluations": 3, "max_time_s": 0.0,
              "patience": 0, "batch_size": 1, "space_size": 50, "evaluations": 3,
              "stop": "evaluations", "transferred": 0, "order": [2, 0, 1]}
    # Nothing left out before the winner (position 2 = index 2): the first listed is the default.
    write(cache, with_space(entry("d.kept", [1], cands, 2), 4, 2))
    # Two candidates before the winner were pruned: the first listed is not known to be the default.
    write(cache, with_space(entry("d.gap", [1], cands, 2), 4, 4))
    # A strategy whose winner is the space's first config.
    fastest_first = [ok({"B": 1}, 1.0), ok({"B": 2}, 2.0), ok({"B": 3}, 4.0)]
    write(cache, with_space(entry("d.first", [1], fastest_first, 0, search=search), 47, 0))
    _, data = page_data(cache)
    got = {a["function"]: a for a in data["entries"]}
    assert got["d.kept"]["default"]["config"] == {"B": 1}
    assert got["d.kept"]["speedup"] == pytest.approx(4.0)
    assert got["d.kept"]["pruned"] == 4 and got["d.kept"]["space_size"] == 7
    assert got["d.gap"]["default"] is None and got["d.gap"]["speedup"] is None
    assert got["d.first"]["default"]["index"] == 0 and got["d.first"]["speedup"] == 1.0
    bad = entry("d.bad", [1], cands, 2)
    bad["space"] = {"size": -1}
    (cache / "autotune" / "d.bad").mkdir()
    (cache / "autotune" / "d.bad" / "bad.json").write_text(json.dumps(bad))
    _, data = page_data(cache)
    assert ["'space.size' must not be negative" in b["reason"] for b in data["bad"]] == [True]


def test_per_rank_timings_where_the_ranks_split_the_candidates(tmp_path):
    text, data = page_data(strategy_cache(tmp_path))
    split = by_function(data)[("demo.split", "(7)")]
    assert split["ranks"] == {"rank 1": {"indices": [1, 3], "times": [2.5, None]},
                              "writing rank": {"indices": [0, 2, 4], "times": [3.0, 1.0, None]}}
    assert {f["reason"] for f in split["failures"]} == {"failed: failed on rank 1",
                                                         "wrong_result: wrong result"}
    assert split["speedup"] == pytest.approx(3.0)
    both = by_function(data)[("demo.allranks", "(7)")]
    assert both["ranks"] == {"writing rank": {"indices": [0, 1], "times": [3.0, 1.0]}}
    assert "2 ranks measured every candidate; the entry keeps the worst rank" in text
    assert text.count('class="fig fig-ranks"') == 1  # only the split entry has a per-rank plot


def test_the_measuring_rank_is_a_field_of_the_entry(tmp_path):
    """Schema /2 records the rank of the parallel split in `measured_on`; the reasons say nothing
    the report reads."""
    cache = tmp_path / "cache"
    cands = [ok({"B": 1}, 3.0), ok({"B": 2}, 2.5, "measured on rank 3"), ok({"B": 3}, 1.0),
             failed({"B": 4}, "out of shared memory")]
    cands[1]["measured_on"] = 1
    cands[3]["measured_on"] = 1
    cands[2]["measured_on"] = 0
    write(cache, entry("demo.v2", [7], cands, 2, world_size=2, schema="tunekit.winner_cache/2"))
    _, data = page_data(cache)
    (a,) = data["entries"]
    assert a["ranks"] == {"rank 0": {"indices": [2], "times": [1.0]},
                          "rank 1": {"indices": [1, 3], "times": [2.5, None]},
                          "writing rank": {"indices": [0], "times": [3.0]}}
    (path,) = _core.list_entries(str(cache), "")
    record = _core.read_entry(path)["record"]
    assert [c["measured_on"] for c in record["candidates"]] == [None, 1, 0, 1]


def test_bad_entries_are_listed_and_the_good_ones_still_reported(tmp_path):
    cache = strategy_cache(tmp_path)
    d = cache / "autotune" / "demo.sum"
    (d / "garbage.json").write_text("{not json")
    (d / "schema.json").write_text(json.dumps({"schema": "tunekit.winner_cache/9"}))
    broken = entry("demo.sum", [1], [ok({"tile": 8}, 1.0)], 0)
    broken["winner"]["index"] = 4
    (d / "winner.json").write_text(json.dumps(broken))
    search = {"strategy": "hybrid", "seed": 3, "max_evaluations": 5, "max_time_s": 0.0,
              "patience": 0, "batch_size": 1, "space_size": 200, "evaluations": 1,
              "stop": "evaluations", "transferred": 0, "order": [0, 0]}
    order = entry("demo.sum", [2], [ok({"tile": 8}, 1.0)], 0, search=search)
    (d / "order.json").write_text(json.dumps(order))
    (d / "notutf8.json").write_bytes(b"\xff\xfe")
    # A valid entry under another name than its identity's: the core's reader does not trust it.
    (d / "misnamed.json").write_text(write(tmp_path / "other", entry("demo.sum", [3], [
        ok({"tile": 8}, 1.0)], 0)).read_text())
    (d / ".x.json.tmp.0123456789abcdef").write_text("half a file")  # a writer's temporary file
    text, data = page_data(cache)
    bad = {Path(b["path"]).name: b["reason"] for b in data["bad"]}
    assert set(bad) == {"garbage.json", "schema.json", "winner.json", "order.json",
                        "notutf8.json", "misnamed.json"}
    assert "not valid JSON" in bad["garbage.json"] and "not valid JSON" in bad["notutf8.json"]
    assert "its identity names it" in bad["misnamed.json"]
    assert "tunekit.winner_cache/9" in bad["schema.json"]
    assert "'winner.index' 4" in bad["winner.json"]
    assert "search.order" in bad["order.json"]
    assert len(data["entries"]) == 3
    assert "<h2>Bad entries</h2>" in text and "garbage.json" in text


def test_only_the_named_functions(tmp_path):
    cache = strategy_cache(tmp_path)
    (cache / "autotune" / "demo.sum" / "garbage.json").write_text("[")
    (cache / "autotune" / "demo.split" / "garbage.json").write_text("[")
    _, data = page_data(cache, ["demo.split", "nothing.here"])
    assert [a["function"] for a in data["entries"]] == ["demo.split"]
    assert [Path(b["path"]).parent.name for b in data["bad"]] == ["demo.split"]
    assert data["missing_functions"] == ["nothing.here"]


def test_an_empty_cache(tmp_path):
    text, data = page_data(tmp_path)
    assert data["entries"] == [] and data["bad"] == []
    assert "No valid cache entries here" in text
    assert 'class="fig' not in text


def test_the_page_is_self_contained(tmp_path):
    text, _ = page_data(strategy_cache(tmp_path))
    assert text.count("<script") == text.count("</script>")
    # plotly.js is inlined once; nothing is loaded from elsewhere.
    assert not re.search(r"<script[^>]*\bsrc=", text)
    assert not re.search(r"<link[^>]*\bhref=", text)
    assert text.count("plotly.js v") <= 2 and "Plotly.newPlot" in text


def test_text_from_the_cache_cannot_break_out_of_the_page(tmp_path):
    cache = tmp_path / "cache"
    evil = "</script><script>alert(1)</script>"
    write(cache, entry("demo.evil", [evil], [ok({"mode": evil}, 1.0), failed({"mode": "x"}, evil)],
                       0))
    text, data = page_data(cache)
    assert "<script>alert(1)" not in text
    (a,) = data["entries"]
    assert a["key"] == [evil] and a["failures"][0]["reason"] == "failed: " + evil


def test_the_command_line(tmp_path, capsys):
    cache = strategy_cache(tmp_path)
    (cache / "autotune" / "demo.sum" / "garbage.json").write_text("[")
    out = tmp_path / "r.html"
    assert report.main(["--cache-dir", str(cache), "-o", str(out)]) == 0
    err = capsys.readouterr()
    assert "BAD " in err.err and "garbage.json" in err.err
    assert "wrote " + str(out) + ": 3 entries, 1 bad files" in err.out
    assert len(report.read_report_data(out.read_text())["entries"]) == 3
    assert report.main(["--cache-dir", str(tmp_path / "missing"), "-o", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert report.main(["--cache-dir", str(cache), "-o", str(tmp_path / "no" / "r.html")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_the_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "c"))
    assert report.default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("TUNEKIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert report.default_cache_dir() == tmp_path / "x" / "tunekit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert report.default_cache_dir() == tmp_path / "h" / ".cache" / "tunekit"



# --- the C++ command ---------------------------------------------------------------------------

def _cli():
    build = Path(os.environ.get("TUNEKIT_CXX_BUILD") or ROOT / "build")
    exe = build / "apps" / "tunekit" / "tunekit"
    if not exe.exists():
        pytest.skip("no C++ build of the tunekit command (set TUNEKIT_CXX_BUILD)")
    return exe


def _package_dir(tmp_path: Path, with_report: bool) -> Path:
    """Where PYTHONPATH points: nothing (the installed package answers), or a `tunekit` package
    without the report, ahead of the installed one."""
    root = tmp_path / ("with" if with_report else "without")
    root.mkdir(parents=True, exist_ok=True)
    if not with_report:
        (root / "tunekit").mkdir(exist_ok=True)
        (root / "tunekit" / "__init__.py").write_text("")
    return root


def _run_cli(exe, args, python, pythonpath):
    env = dict(os.environ, TUNEKIT_PYTHON=str(python), PYTHONPATH=str(pythonpath))
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=120)


def test_the_cpp_command_runs_the_module(tmp_path):
    exe = _cli()
    cache = strategy_cache(tmp_path)
    out = tmp_path / "page.html"
    run = _run_cli(exe, ["--cache-dir", str(cache), "report", "--function", "demo.sum", "-o",
                         str(out)], sys.executable, _package_dir(tmp_path, True))
    assert run.returncode == 0, run.stderr
    assert "1 entries" in run.stdout
    data = report.read_report_data(out.read_text())
    assert [a["function"] for a in data["entries"]] == ["demo.sum"]
    assert data["cache_dir"] == str(cache)
    # A missing cache directory is the module's error, passed on.
    run = _run_cli(exe, ["--cache-dir", str(tmp_path / "nope"), "report", "-o", str(out)],
                   sys.executable, _package_dir(tmp_path, True))
    assert run.returncode == 2 and "does not exist" in run.stderr


def test_the_cpp_command_says_how_to_install_the_package(tmp_path):
    exe = _cli()
    run = _run_cli(exe, ["--cache-dir", str(tmp_path), "report"], sys.executable,
                   _package_dir(tmp_path, False))
    assert run.returncode == 2
    assert "pip install tunekit-autotune" in run.stderr and "TUNEKIT_PYTHON" in run.stderr
    run = _run_cli(exe, ["--cache-dir", str(tmp_path), "report"], tmp_path / "no-python",
                   tmp_path)
    assert run.returncode == 2
    assert "cannot run the Python interpreter" in run.stderr and "TUNEKIT_PYTHON" in run.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
