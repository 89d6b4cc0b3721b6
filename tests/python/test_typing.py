"""The package's types, as a user's type checker sees them: mypy finds nothing wrong in the
package, and in a user's file it catches a misspelt option and an option of the wrong type."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import tunekit

pytest.importorskip("mypy")

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(tunekit.__file__)))


def mypy(*args: str, cwd) -> subprocess.CompletedProcess:
    """mypy from a scratch directory (from site-packages itself, the modules there would shadow
    mypy's own); an installed package is found in site-packages, one on PYTHONPATH (a build's
    staging directory) through MYPYPATH."""
    env = dict(os.environ)
    if os.path.basename(PACKAGE) not in ("site-packages", "dist-packages"):
        env["MYPYPATH"] = PACKAGE
    return subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports",
                           "--no-incremental", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def test_the_package_type_checks(tmp_path):
    run = mypy("-p", "tunekit", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_users_options_are_checked(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent("""
        import tunekit

        def scale(n: int, *, BLOCK: int) -> int:
            return n * BLOCK

        ok = tunekit.autotune([{"BLOCK": 1}], lambda n: (n,), budget=tunekit.Budget(50),
                              strategy="random", restore_value=["n"])(scale)
        misspelt = tunekit.autotune([{"BLOCK": 1}], lambda n: (n,), budgett=3)(scale)
        wrong = tunekit.autotune([{"BLOCK": 1}], lambda n: (n,), budget="3")(scale)
    """))
    run = mypy(str(user), cwd=tmp_path)
    out = run.stdout
    assert 'Unexpected keyword argument "budgett"' in out, out
    assert 'Argument "budget" to "autotune" has incompatible type "str"' in out, out
    assert "user.py:7" not in out, out  # the correct call passes
