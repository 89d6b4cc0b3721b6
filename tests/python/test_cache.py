"""The winner cache the Python package shares with the C++ core and the ``tunekit`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tunekit
from conftest import CostMeasurer

SPACE = [{"BLOCK": b, "mode": m} for b in (128, 256) for m in ("fast", "safe")]


def cost(c):
    return 1.0 if (c["BLOCK"], c["mode"]) == (256, "fast") else 2.0


def scale(n, *, BLOCK, mode):
    return (BLOCK, mode)


def tuned(measurer=None, **kw):
    return tunekit.autotune(SPACE, key_fn=lambda n: (n, "float32"),
                            measurer=measurer or CostMeasurer(cost), **kw)(scale)


def cli(*args, env=None):
    if tunekit.cli_path() is None:
        pytest.skip("the package was built without the tunekit command (no CLI11)")
    return subprocess.run([sys.executable, "-m", "tunekit", *args], capture_output=True,
                          text=True, env=env)


def test_python_entry_is_read_by_the_cli(tunekit_env):
    t = tuned()
    assert t(4096) == (256, "fast")
    path = Path(t.cache_path(4096))
    assert path.parent == tunekit_env / "autotune" / "scale" and path.exists()
    assert tunekit.list_entries(function="scale") == [str(path)]
    shown = cli("cache", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    entries = json.loads(shown.stdout)
    entry = entries[0] if isinstance(entries, list) else entries
    entry = entry.get("entry", entry)
    assert entry["function"]["name"] == "scale" and entry["function"]["version"] == t.version
    assert entry["key"] == [4096, "float32"]
    assert entry["winner"]["config"] == {"BLOCK": 256, "mode": "fast"}
    listed = cli("cache", "list")
    assert listed.returncode == 0 and "(4096, \"float32\")" in listed.stdout
    assert "[BLOCK=256, mode=\"fast\"]" in listed.stdout


def test_cli_clear_removes_python_entries_and_the_next_call_retunes():
    t = tuned()
    t(1)
    cleared = cli("cache", "clear", "--function", "scale")
    assert cleared.returncode == 0, cleared.stderr
    m = CostMeasurer(cost)
    again = tuned(m)
    again(1)
    assert len(m.measured) == 4 and again.last_source() == "search"


def test_core_reader_validates_python_entries():
    t = tuned()
    t(7)
    r = tunekit.read_entry(t.cache_path(7))
    assert r["status"] == "found"
    assert json.loads(r["entry"])["schema"] == "tunekit.winner_cache/2"
    assert tunekit.read_entry(t.cache_path(8))["status"] == "missing"


@pytest.mark.parametrize("damage", ["garbage", "truncate", "schema", "winner"])
def test_bad_cache_files_are_skipped_with_a_warning_and_retuned(damage):
    t = tuned()
    t(9)
    path = Path(t.cache_path(9))
    text = path.read_text()
    if damage == "garbage":
        path.write_text("{not json")
    elif damage == "truncate":
        path.write_text(text[: len(text) // 2])
    elif damage == "schema":
        path.write_text(text.replace("tunekit.winner_cache/2", "tunekit.winner_cache/99"))
    else:  # a winner that is not one of the candidates
        d = json.loads(text)
        d["winner"]["config"]["BLOCK"] = 4
        path.write_text(json.dumps(d))
    assert tunekit.read_entry(path)["status"] == "invalid" or damage == "winner"
    m = CostMeasurer(cost)
    again = tuned(m)
    with pytest.warns(tunekit.TunekitWarning, match="skipping winner cache entry"):
        assert again(9) == (256, "fast")
    assert len(m.measured) == 4
    assert tunekit.read_entry(path)["status"] == "found"  # rewritten
    if damage != "winner":
        listed = cli("cache", "list")
        assert listed.returncode == 0


def test_cli_flags_a_bad_file_the_python_tuner_skipped():
    t = tuned()
    t(3)
    Path(t.cache_path(3)).write_text("[]")
    listed = cli("cache", "list")
    assert listed.returncode == 1 and "BAD" in listed.stdout + listed.stderr


def test_entry_written_by_the_cpp_example_is_served_to_python(tmp_path):
    """examples/scale (C++) tunes and stores its winner; a Python tuner with the same name,
    version, space, hardware and key reads it and measures nothing."""
    build = os.environ.get("TUNEKIT_CXX_BUILD")
    exe = Path(build or "build") / "examples" / "scale"
    if not exe.exists():
        pytest.skip("no C++ build of examples/scale (set TUNEKIT_CXX_BUILD)")
    env = dict(os.environ)
    run = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    (path,) = tunekit.list_entries(function="example.scale")
    entry = json.loads(tunekit.read_entry(path)["entry"])
    version = entry["function"]["version"]
    n = entry["key"][0]
    cores = os.cpu_count() or 1
    space = [{"BLOCK": b, "threads": t} for b in (4096, 1024, 16384, 65536) for t in (1, 2, 4)
             if t <= max(1, cores)]

    class Never:
        name = "never"

        def measure(self, run, request):
            raise AssertionError("the C++ entry should have answered")

    got = []
    py = tunekit.autotune(space, key_fn=lambda n: (n,), name="example.scale", version=version,
                          measurer=Never())(lambda n, *, BLOCK, threads: got.append((BLOCK,
                                                                                     threads)))
    py(n)
    assert py.last_source() == "cache"
    assert got == [(entry["winner"]["config"]["BLOCK"], entry["winner"]["config"]["threads"])]
