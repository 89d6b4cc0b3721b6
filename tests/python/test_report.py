"""``tunekit report`` (python/tunekit/report/): the page holds the right data, parsed back from the
JSON it embeds, for caches written by the C++ core (a test helper binary, and the package's tuner),
entries written in the core's format (a strategy search, several ranks, the older schema /1), bad
entries (listed, not fatal) and an empty cache.

The report reads entries through the core's reader, so these tests need the installed package
(with its compiled extension) and plotly, which the package depends on."""

from __future__ import annotations

import html
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
    # One plotly figure per plot: distribution, ranked, parameters and convergence for each entry,
    # and the winner per key of the function (two keys).
    assert text.count('class="fig fig-') == 9
    assert text.count('class="fig fig-across"') == 1
    (g,) = data["across_keys"]
    assert [r["key_text"] for r in g["rows"]] == ["(300, b'caf\\xe9')", "(1024)"]
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
    assert {k: a["winner"][k] for k in ("index", "config", "time_ms")} == {
        "index": 3, "config": {"tile": 32, "unroll": 4}, "time_ms": 1.5}
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



# --- spread, log axes, the best ten, the winner per key, throughput, the speed-up reference ---

def timed(cfg, t, lo, hi, sd, count=None, outliers=None):
    """A valid candidate with the spread of its timed runs (and their counts, as newer entries
    record them)."""
    c = ok(cfg, t)
    c["stats"] = {"mean": t, "median": t, "min": lo, "max": hi, "stddev": sd}
    if count is not None:
        c["stats"]["count"] = count
        c["stats"]["outliers"] = outliers or 0
    return c


def section(text, n):
    """The HTML of entry n's section."""
    start = text.index(f'<section class="entry" id="entry-{n}">')
    return text[start:text.index("</section>", start)]


def across(text, function):
    """The HTML of the winner-per-key section of `function`."""
    for m in re.finditer(r'<section class="across" id="across-\d+">\n<h2>([^<]*) ', text):
        if html.unescape(m.group(1)) == function:
            return text[m.start():text.index("</section>", m.start())]
    raise AssertionError(f"no winner-per-key section of {function}")


def table_rows(fragment, cls):
    """The cells of each row of the first table of class `cls` in `fragment` (head row first)."""
    start = fragment.index(f'<table class="{cls}">')
    body = fragment[start:fragment.index("</table>", start)]
    return [[html.unescape(re.sub(r"<[^>]+>", "", c))
             for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body)]


def entry_figures(cache, function):
    """(the analysis, {name: plotly figure}) of the entry of `function`, as the page draws them."""
    from tunekit.report._figures import figures

    (e,) = [e for e in report.read_cache(cache)["entries"] if e["function"] == function]
    a = report.analyse(e)
    return a, dict(figures(a, e["candidates"]))


def test_log_axes_where_the_times_span_more_than_ten_times(tmp_path):
    cache = tmp_path / "cache"
    wide = [ok({"B": 1}, 20.0), ok({"B": 2}, 0.5), ok({"B": 3}, 4.0), failed({"B": 4}, "x")]
    write(cache, entry("axes.wide", [1], wide, 1))  # 40x: log
    write(cache, entry("axes.ten", [1], [ok({"B": 1}, 10.0), ok({"B": 2}, 1.0)], 1))  # 10x: linear
    write(cache, entry("axes.narrow", [1], [ok({"B": 1}, 9.0), ok({"B": 2}, 1.0)], 1))
    text, data = page_data(cache)
    got = {a["function"]: a["axes"] for a in data["entries"]}
    assert got["axes.wide"]["ranks"] == "linear"  # one rank: no per-rank times plotted
    assert {k: v for k, v in got["axes.wide"].items() if k != "ranks"} == {
        "distribution": "log", "ranked": "log", "parameters": "log", "convergence": "log"}
    assert set(got["axes.ten"].values()) == {"linear"}
    assert set(got["axes.narrow"].values()) == {"linear"}
    a, figs = entry_figures(cache, "axes.wide")
    assert figs["distribution"].layout.xaxis.type == "log"
    assert figs["ranked"].layout.yaxis.type == "log"
    assert figs["convergence"].layout.yaxis.type == "log"
    assert {ax.type for ax in figs["parameters"].select_yaxes()} == {"log"}
    assert figs["ranked"].layout.yaxis.title.text == "time (ms, log scale)"
    # Bins even in log time: every valid time is counted once.
    (step,) = figs["distribution"].data
    assert step.x[0] == 0.5 and step.x[-1] == 20.0 and sum(step.y[1:-1:2]) == 3
    a, figs = entry_figures(cache, "axes.ten")
    assert figs["distribution"].layout.xaxis.type == "linear"
    assert figs["ranked"].layout.yaxis.type == "linear"
    assert figs["distribution"].data[0].type == "histogram"
    n = {a["function"]: i for i, a in enumerate(data["entries"])}
    assert "time (ms, log scale)" in section(text, n["axes.wide"])
    assert "log scale" not in section(text, n["axes.ten"]) + section(text, n["axes.narrow"])
    assert report._entries.axis_type([0.0, 5.0, 100.0]) == "linear"  # log needs times above 0


def test_error_bars_from_the_spread_of_the_timed_runs(tmp_path):
    cache = tmp_path / "cache"
    cands = [timed({"B": 1}, 3.0, 2.5, 4.0, 0.4), timed({"B": 2}, 1.0, 0.9, 1.5, 0.1),
             failed({"B": 3}, "too big"), timed({"B": 4}, 2.0, 1.8, 2.1, 0.05)]
    write(cache, entry("spread.new", [1], cands, 1))
    # An entry written before the spread was stored: its statistics are all zeros.
    old = [ok({"B": 1}, 3.0), ok({"B": 2}, 1.0)]
    for c in old:
        c["stats"] = {"mean": 0.0, "median": 0.0, "min": 0.0, "max": 0.0, "stddev": 0.0}
    write(cache, entry("spread.old", [1], old, 1))
    text, data = page_data(cache)
    new, old_a = data["entries"]
    assert new["function"] == "spread.new" and old_a["function"] == "spread.old"
    assert new["spread"] == [{"min": 2.5, "max": 4.0, "stddev": 0.4},
                             {"min": 0.9, "max": 1.5, "stddev": 0.1},
                             {"min": 1.8, "max": 2.1, "stddev": 0.05}]
    assert old_a["spread"] is None and old_a["winner"]["spread"] is None
    a, figs = entry_figures(cache, "spread.new")
    err = figs["ranked"].data[0].error_y  # ranked by time: B=2, B=4, B=1
    assert list(figs["ranked"].data[0].y) == [1.0, 2.0, 3.0]
    assert list(err.array) == pytest.approx([0.5, 0.1, 1.0])
    assert list(err.arrayminus) == pytest.approx([0.1, 0.2, 0.5])
    conv = figs["convergence"].data[0].error_y  # candidate order, no bar for the failed one
    assert list(conv.array)[2] is None and list(conv.array)[0] == pytest.approx(1.0)
    assert "stats.min .. stats.max" in figs["ranked"].layout.title.text
    a, figs = entry_figures(cache, "spread.old")
    assert figs["ranked"].data[0].error_y.array is None
    assert figs["convergence"].data[0].error_y.array is None
    assert "no spread recorded" in figs["ranked"].layout.title.text
    assert ("Error bars span each candidate's fastest to slowest timed run (stats.min .. "
            "stats.max); a candidate's time is the mean") in section(text, 0)
    assert "This entry holds no spread of the timed runs" in section(text, 1)
    # An entry whose candidates have no statistics at all (the report's view of one) draws none.
    e = report.read_cache(cache)["entries"][1]
    for c in e["candidates"]:
        c["stats"] = None
    assert report.analyse(e)["spread"] is None


def test_timed_runs_and_outliers_where_the_entry_counts_them(tmp_path):
    cache = tmp_path / "cache"
    counted = [timed({"B": 1}, 3.0, 2.5, 4.0, 0.4, count=10, outliers=1),
               timed({"B": 2}, 1.0, 0.9, 1.5, 0.1, count=10, outliers=0)]
    write(cache, entry("runs.counted", [1], counted, 1, schema="tunekit.winner_cache/2"))
    write(cache, entry("runs.plain", [1], [timed({"B": 1}, 3.0, 2.5, 4.0, 0.4)], 0))
    text, data = page_data(cache)
    a = data["entries"][0]
    assert a["function"] == "runs.counted"
    assert [r["spread"].get("count") for r in a["best"]] == [10, 10]
    assert [r["spread"].get("outliers") for r in a["best"]] == [0, 1]
    rows = table_rows(section(text, 0), "best")
    assert rows[0][:5] == ["#", "config", "time", "spread", "timed runs"]
    assert [r[4] for r in rows[1:]] == ["10 (0 outliers)", "10 (1 outlier)"]
    assert "[B=2] 1 ms; 10 timed runs (0 outliers): 0.9 to 1.5 ms, stddev 0.1 ms" in section(
        text, 0)
    rows = table_rows(section(text, 1), "best")
    assert "timed runs" not in rows[0] and rows[1][3] == "2.5 to 4 ms, stddev 0.4 ms"
    assert "[B=1] 3 ms; timed runs 2.5 to 4 ms, stddev 0.4 ms</td>" in section(text, 1)


def test_the_best_ten_candidates_in_order(tmp_path):
    cache = tmp_path / "cache"
    times = [5.0, 3.0, 9.0, 1.0, 7.0, 2.0, 8.0, 4.0, 6.0, 3.0, 10.0, 11.0, 0.5]
    cands = [ok({"B": i}, t) for i, t in enumerate(times)]
    cands.insert(4, failed({"B": 99}, "out of memory"))
    cands[3]["reason"] = "stopped early after 2 of 10 runs (mean 1 ms > 1.5x the best)"
    write(cache, entry("best.ten", [1], cands, 13))
    text, data = page_data(cache)
    (a,) = data["entries"]
    expect = sorted(((c["time_ms"], i) for i, c in enumerate(cands) if c["status"] == "ok"))[:10]
    assert [(r["time_ms"], r["index"]) for r in a["best"]] == expect
    assert [r["rank"] for r in a["best"]] == list(range(1, 11))
    assert a["best"][0]["winner"] and a["best"][0]["config"] == {"B": 12}
    assert [r["config"]["B"] for r in a["best"]][3:5] == [1, 9]  # equal times: candidate order
    rows = table_rows(section(text, 0), "best")
    assert rows[0] == ["#", "config", "time", "spread", "status"]
    assert [r[1] for r in rows[1:]] == ["B=" + str(cands[i]["config"]["B"]) for _, i in expect]
    assert rows[1][0] == "1 (winner)" and rows[1][2] == "0.5 ms"
    assert "The best 10 of 13 valid candidates" in section(text, 0)
    assert rows[2][-1] == "ok: stopped early after 2 of 10 runs (mean 1 ms > 1.5x the best)"
    assert [r[-1] for r in rows[1:]].count("ok") == 9
    # The table follows the ranked figure.
    sec = section(text, 0)
    assert sec.index('class="fig fig-ranked"') < sec.index('<table class="best">') < sec.index(
        'class="fig fig-parameters"')


def gemm_cache(tmp_path):
    cache = tmp_path / "cache"
    # Keys (M, N, K); the winner's time and config differ per key.
    for key, t, tile in (([4096, 4096, 4096], 3.2, 128), ([256, 256, 256], 0.01, 16),
                         ([1024, 1024, 1024], 0.2, 64), ([1024, 1024, 64], 0.02, 32)):
        cands = [timed({"tile": 8}, t * 4, t * 3.5, t * 5, t / 10),
                 timed({"tile": tile}, t, t * 0.9, t * 1.2, t / 20)]
        write(cache, entry("gemm", key, cands, 1))
    write(cache, entry("copy", [1 << 20], [ok({"B": 1}, 0.5), ok({"B": 2}, 0.25)], 1))
    write(cache, entry("copy", ["text"], [ok({"B": 1}, 0.5)], 0))
    return cache


def test_the_winner_per_key_in_numeric_key_order(tmp_path):
    text, data = page_data(gemm_cache(tmp_path))
    groups = {g["function"]: g for g in data["across_keys"]}
    g = groups["gemm"]
    assert [r["key"] for r in g["rows"]] == [[256, 256, 256], [1024, 1024, 64],
                                            [1024, 1024, 1024], [4096, 4096, 4096]]
    assert [r["config"] for r in g["rows"]] == [{"tile": 16}, {"tile": 32}, {"tile": 64},
                                               {"tile": 128}]
    assert [r["time_ms"] for r in g["rows"]] == [0.01, 0.02, 0.2, 3.2]
    assert [r["speedup"] for r in g["rows"]] == pytest.approx([4.0] * 4)
    assert g["axis"] == "log" and groups["copy"]["axis"] == "linear"
    assert [r["key_text"] for r in groups["copy"]["rows"]] == ["(1048576)", "(text)"]
    rows = table_rows(across(text, "gemm"), "across")
    assert rows[0] == ["key", "winner config", "time", "spread", "speed-up"]
    assert [r[0] for r in rows[1:]] == ["(256, 256, 256)", "(1024, 1024, 64)",
                                        "(1024, 1024, 1024)", "(4096, 4096, 4096)"]
    assert rows[1][1:3] == ["tile=16", "0.01 ms"] and rows[1][4] == "4x over the default"
    assert text.count('class="fig fig-across"') == 2
    # The entries follow the same order.
    assert [a["key_text"] for a in data["entries"] if a["function"] == "gemm"] == [
        r["key_text"] for r in g["rows"]]
    assert report._entries.key_order([2, 10]) < report._entries.key_order([10, 1])
    assert report._entries.key_order([2, 3]) < report._entries.key_order([2, 10])


def test_throughput_from_the_work_expressions(tmp_path, capsys):
    cache = gemm_cache(tmp_path)
    text = report.build_html(cache, flop="2*k0*k1*k2", bytes=["copy=8*k0", "4*(k0*k2+k2*k1+k0*k1)"])
    data = report.read_report_data(text)
    got = {(a["function"], a["key_text"]): a for a in data["entries"]}
    a = got[("gemm", "(4096, 4096, 4096)")]
    assert a["work"]["flop"] == {"expression": "2*k0*k1*k2", "value": 2.0 * 4096 ** 3,
                                 "error": None}
    assert a["winner"]["throughput"]["gflop_s"] == pytest.approx(2 * 4096 ** 3 / 3.2e-3 / 1e9)
    assert a["winner"]["throughput"]["gb_s"] == pytest.approx(4 * 3 * 4096 ** 2 / 3.2e-3 / 1e9)
    assert [r["throughput"]["gflop_s"] for r in a["best"]] == pytest.approx(
        [2 * 4096 ** 3 / (t * 1e6) for t in (3.2, 12.8)])
    c = got[("copy", "(1048576)")]
    assert c["work"]["bytes"]["value"] == 8 * 2 ** 20  # its own expression wins
    assert c["winner"]["throughput"]["gb_s"] == pytest.approx(8 * 2 ** 20 / 0.25e-3 / 1e9)
    n = {(a["function"], a["key_text"]): i for i, a in enumerate(data["entries"])}
    assert ("2*k0*k1*k2: none for this key (the key has 1 value: there is no k1)"
            in section(text, n[("copy", "(1048576)")]))
    assert "work per call (FLOP)</td><td>2*k0*k1*k2 = 1.37439e+11" in section(
        text, n[("gemm", "(4096, 4096, 4096)")])
    # A key value that is not a number, and a key too short, give no work, and say why.
    t = got[("copy", "(text)")]
    assert t["work"]["bytes"]["value"] is None and "k0 is 'text', not a number" in t["work"][
        "bytes"]["error"]
    assert "there is no k1" in c["work"]["flop"]["error"] and c["winner"]["throughput"] == {
        "gb_s": pytest.approx(8 * 2 ** 20 / 0.25e-3 / 1e9)}
    g = {g["function"]: g for g in data["across_keys"]}["gemm"]
    assert [r["throughput"]["gflop_s"] for r in g["rows"]] == pytest.approx(
        [2 * 256 ** 3 / 1e4, 2 * 1024 * 1024 * 64 / 2e4, 2 * 1024 ** 3 / 2e5,
         2 * 4096 ** 3 / 3.2e6])
    assert table_rows(across(text, "gemm"), "across")[0] == [
        "key", "winner config", "time", "spread", "GFLOP/s", "GB/s", "speed-up"]
    assert table_rows(across(text, "copy"), "across")[0] == [
        "key", "winner config", "time", "spread", "GB/s", "speed-up"]
    assert data["work"] == {"flop": {"*": "2*k0*k1*k2"},
                            "bytes": {"copy": "8*k0", "*": "4*(k0*k2+k2*k1+k0*k1)"}}
    assert "GFLOP/s from the work per call: flop = <code>2*k0*k1*k2</code>" in text
    # The command line and the mapping form give the same numbers.
    out = tmp_path / "r.html"
    assert report.main(["--cache-dir", str(cache), "-o", str(out), "--flop", "gemm=2*k0*k1*k2",
                        "--bytes", "copy=8*k0"]) == 0
    cli = by_function(report.read_report_data(out.read_text()))
    assert cli[("gemm", "(256, 256, 256)")]["winner"]["throughput"] == {
        "gflop_s": pytest.approx(2 * 256 ** 3 / 1e4)}
    assert cli[("copy", "(1048576)")]["work"] == {"bytes": {"expression": "8*k0",
                                                             "value": 8 * 2 ** 20, "error": None}}
    again = report.read_report_data(report.build_html(cache, flop={"gemm": "2*k0*k1*k2"}))
    assert by_function(again)[("gemm", "(256, 256, 256)")]["work"] == cli[
        ("gemm", "(256, 256, 256)")]["work"]
    assert by_function(again)[("copy", "(1048576)")]["work"] == {}


@pytest.mark.parametrize("expr, why", [
    ("__import__('os').system('true')", "attribute access '.system' is not allowed"),
    ("__import__('os')", "a call of '__import__' is not allowed"),
    ("k0.real", "attribute access '.real' is not allowed"),
    ("open('/etc/passwd')", "a call of 'open' is not allowed"),
    ("(1).__class__", "attribute access '.__class__' is not allowed"),
    ("[k0][0]", "a subscript is not allowed"),
    ("abs(k0, k1)", "abs takes 1 argument"),
    ("-" * 990 + "k0", "nests too deeply"),
    ("n * 2", "the name 'n' is not allowed"),
    ("'a' * 3", "the literal 'a' is not allowed"),
    ("k0 if k0 else 1", "a conditional expression is not allowed"),
    ("k0 < 1", "a comparison is not allowed"),
    ("lambda: 1", "a lambda is not allowed"),
    ("k0 @ k1", "the operator MatMult is not allowed"),
    ("1j * k0", "the literal 1j is not allowed"),
    ("max(k0)", "max takes at least 2 arguments"),
    ("2 *", "is not an expression"),
    ("", "the expression is empty"),
    ("k0 + " * 300 + "1", "longer than 1000 characters"),
])
def test_an_unsafe_or_bad_expression_is_refused(tmp_path, capsys, expr, why):
    cache = gemm_cache(tmp_path)
    with pytest.raises(report.ReportError, match=re.escape(why)):
        report.build_html(cache, flop=expr)
    assert report.main(["--cache-dir", str(cache), "-o", str(tmp_path / "r.html"),
                        "--bytes", "gemm=" + expr]) == 2
    err = capsys.readouterr().err
    assert "--bytes gemm" in err and why in err
    assert not (tmp_path / "r.html").exists()


def test_expressions_that_give_no_value_are_not_fatal(tmp_path):
    cache = gemm_cache(tmp_path)
    data = report.read_report_data(report.build_html(
        cache, flop=["gemm=9**9**9", "copy=k0/(k0-k0)"]))
    got = by_function(data)
    assert "no finite value" in got[("gemm", "(256, 256, 256)")]["work"]["flop"]["error"]
    assert got[("copy", "(1048576)")]["work"]["flop"]["error"] == "division by zero"
    assert got[("copy", "(1048576)")]["winner"]["throughput"] == {}
    ok_ = report.read_report_data(report.build_html(cache, flop="log2(k0) * sqrt(k1) + min(k0, 3)"))
    assert by_function(ok_)[("gemm", "(256, 256, 256)")]["work"]["flop"]["value"] == 8 * 16 + 3
    with pytest.raises(report.ReportError, match="two expressions for function 'gemm'"):
        report.build_html(cache, flop=["gemm=k0", "gemm=k1"])


def test_the_speed_up_reference(tmp_path):
    cache = tmp_path / "cache"
    cands = [ok({"B": 1}, 4.0), ok({"B": 2}, 2.0), ok({"B": 3}, 1.0)]

    def with_space(e, pruned, position):
        e["space"] = {"size": 3 + pruned, "pruned": pruned, "digest": "0" * 64, "winner": position}
        return e

    write(cache, with_space(entry("r.default", [1], cands, 2), 0, 2))
    # Candidates before the winner were left out: the default's time is not in the entry.
    write(cache, with_space(entry("r.unknown", [1], cands, 2), 4, 4))
    # The default failed.
    write(cache, entry("r.failed", [1], [failed({"B": 1}, "no"), ok({"B": 2}, 3.0),
                                         ok({"B": 3}, 1.0), ok({"B": 4}, 6.0)], 2))
    text, data = page_data(cache)
    got = {a["function"]: a for a in data["entries"]}
    d = got["r.default"]["reference"]
    assert d["kind"] == "default" and d["speedup"] == pytest.approx(4.0) and d["why"] is None
    u = got["r.unknown"]["reference"]
    assert u["kind"] == "median" and u["time_ms"] == 2.0 and u["speedup"] == pytest.approx(2.0)
    assert "does not identify the default" in u["why"]
    assert got["r.unknown"]["speedup"] is None  # no speed-up over the default itself
    f = got["r.failed"]["reference"]
    assert f["kind"] == "median" and f["time_ms"] == 3.0 and "is failed" in f["why"]
    by_name = {a["function"]: n for n, a in enumerate(data["entries"])}
    assert ("2x over the median of the 3 valid candidates, 2 ms; the entry does not identify "
            "the default") in section(text, by_name["r.unknown"])
    assert html.escape("4x over the default (the space's first config), 4 ms") in section(
        text, by_name["r.default"])
    assert "3x over the median candidate" in text  # the contents line says which


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
    # --flop and --bytes are passed on as given.
    run = _run_cli(exe, ["--cache-dir", str(cache), "report", "--function", "demo.sum", "-o",
                         str(out), "--flop", "2*k0", "--bytes", "demo.sum=8*k0"],
                   sys.executable, _package_dir(tmp_path, True))
    assert run.returncode == 0, run.stderr
    work = report.read_report_data(out.read_text())["entries"][0]["work"]
    assert work["flop"]["expression"] == "2*k0" and work["bytes"]["expression"] == "8*k0"
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


def test_the_rerank_of_the_leaders(tmp_path):
    cache = tmp_path / "cache"
    cands = [ok({"B": 1}, 1.00), ok({"B": 2}, 0.98), ok({"B": 3}, 2.0)]
    # The search picked B=2; the re-rank found B=1 faster and replaced it.
    changed = entry("rerank.changed", [1], cands, 0, schema="tunekit.winner_cache/2")
    changed["rerank"] = {"band": 0.03, "rounds": 3, "runs": 10, "winner_before": 1,
                         "leaders": [{"index": 1, "score_ms": 1.01}, {"index": 0, "score_ms": 0.95}]}
    write(cache, changed)
    kept = entry("rerank.kept", [1], cands, 1, schema="tunekit.winner_cache/2")
    kept["rerank"] = {"band": 0.03, "rounds": 3, "runs": 10, "winner_before": 1,
                      "leaders": [{"index": 1, "score_ms": 0.97}, {"index": 0, "score_ms": None}]}
    write(cache, kept)
    write(cache, entry("rerank.none", [1], cands, 1, schema="tunekit.winner_cache/2"))
    text, data = page_data(cache)
    a = by_function(data)
    rr = a[("rerank.changed", "(1)")]["rerank"]
    assert rr["changed"] and rr["winner_before"] == 1
    assert [(ld["config"], ld["search_ms"], ld["score_ms"], ld["winner"]) for ld in rr["leaders"]] \
        == [({"B": 2}, 0.98, 1.01, False), ({"B": 1}, 1.0, 0.95, True)]
    assert not a[("rerank.kept", "(1)")]["rerank"]["changed"]
    assert a[("rerank.none", "(1)")]["rerank"] is None
    names = [e["function"] for e in data["entries"]]
    s_changed = section(text, names.index("rerank.changed"))
    assert "2 candidates within 3% of the search's best were measured again" in s_changed
    assert "it replaced the search's winner [B=2]" in s_changed
    assert table_rows(s_changed, "rerank") == [
        ["leader", "search time", "re-rank time"],
        ["B=2 (search's winner)", "0.98 ms", "1.01 ms"], ["B=1 (winner)", "1 ms", "0.95 ms"]]
    s_kept = section(text, names.index("rerank.kept"))
    assert "it kept the search's winner" in s_kept
    assert table_rows(s_kept, "rerank")[2] == ["B=1", "1 ms", "failed"]
    assert '<table class="rerank">' not in section(text, names.index("rerank.none"))
