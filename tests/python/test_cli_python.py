"""``python -m tunekit report``: the command installed with the package runs the report module with
the interpreter that launched it (``TUNEKIT_PYTHON``, set by ``python -m tunekit`` when unset), not
with whatever ``python3`` comes first on PATH, so that ``venv/bin/python -m tunekit report`` works
without activating the virtual environment. An explicit ``TUNEKIT_PYTHON`` still wins."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _cli_path():
    try:
        import tunekit
    except ImportError:
        return None
    if importlib.util.find_spec("tunekit._core") is None:
        return None
    return tunekit.cli_path()


if _cli_path() is None:
    pytest.skip("the installed tunekit package has no tunekit command (or is not installed)",
                allow_module_level=True)


def _fake_python(tmp_path: Path) -> Path:
    """A directory whose `python3` fails every probe, as one without the package would."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text("#!/bin/sh\necho 'not the interpreter of python -m tunekit' >&2\nexit 1\n")
    fake.chmod(0o755)
    return bin_dir


def _env_without_the_venv(tmp_path: Path) -> dict:
    """The environment of a shell where the virtual environment is not activated: its bin
    directory is off PATH, and a `python3` without the package comes first."""
    venv_bin = os.path.dirname(os.path.abspath(sys.executable))
    kept = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and os.path.abspath(d) != venv_bin]
    env = {k: v for k, v in os.environ.items() if k not in ("TUNEKIT_PYTHON", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(_fake_python(tmp_path)), *kept])
    return env


def _report(tmp_path: Path, env: dict) -> tuple[subprocess.CompletedProcess, Path]:
    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)
    out = tmp_path / "page.html"
    run = subprocess.run([sys.executable, "-m", "tunekit", "--cache-dir", str(cache), "report",
                          "-o", str(out)], capture_output=True, text=True, env=env, timeout=120,
                         cwd=tmp_path)
    return run, out


def test_python_m_tunekit_report_uses_the_interpreter_that_runs_it(tmp_path):
    pytest.importorskip("plotly")  # the report draws with it
    run, out = _report(tmp_path, _env_without_the_venv(tmp_path))
    assert "needs the tunekit Python package" not in run.stderr, run.stderr
    assert run.returncode == 0, run.stderr
    assert "0 entries" in run.stdout and out.exists()


def test_an_explicit_tunekit_python_wins(tmp_path):
    env = _env_without_the_venv(tmp_path)
    fake = tmp_path / "fake-bin" / "python3"
    env["TUNEKIT_PYTHON"] = str(fake)
    run, out = _report(tmp_path, env)
    assert run.returncode == 2
    assert "needs the tunekit Python package" in run.stderr and str(fake) in run.stderr
    assert "pip install tunekit-autotune" in run.stderr
    assert not out.exists()
