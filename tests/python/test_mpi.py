"""autotune_pg with mpi4py communicators under mpiexec -n 4 (see mpi_ranks.py)."""

from __future__ import annotations

import re

import pytest
from conftest import run_mpi

pytest.importorskip("mpi4py")


def test_four_ranks_agree_through_mpi4py(tmp_path):
    r = run_mpi("mpi_ranks.py", 4, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    # the ranks' lines may interleave on the shared stdout
    assert sorted(re.findall(r"rank (\d) ok", r.stdout)) == ["0", "1", "2", "3"]
