"""autotune_pg with mpi4py communicators under mpiexec -n 4 (see mpi_ranks.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")


def test_four_ranks_agree_through_mpi4py(tmp_path):
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("no mpiexec")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    script = Path(__file__).with_name("mpi_ranks.py")
    r = subprocess.run([mpiexec, "-n", "4", "--oversubscribe", sys.executable, str(script)],
                       capture_output=True, text=True, env=env, timeout=240,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    # the ranks' lines may interleave on the shared stdout
    assert sorted(re.findall(r"rank (\d) ok", r.stdout)) == ["0", "1", "2", "3"]
