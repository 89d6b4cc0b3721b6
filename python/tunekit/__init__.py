"""tunekit for Python: the seed's ``autotune`` and ``contextual_autotune`` decorators over
tunekit's C++ core (its resolution chain, winner cache, agreement between ranks and search).

    from tunekit import autotune

    @autotune(config_space=[{"BLOCK": 256}, {"BLOCK": 512}], key_fn=lambda x, *a, **k: (x.numel(),))
    def scale(x, alpha, BLOCK): ...

See docs/python.md.
"""

from __future__ import annotations

import os
from typing import Any

from . import _core
from ._autotune import (EFFORTS, TABLE_KEY_FORMATS, AutoTuner, AutotuneOptions, Budget, Rerank,
                        TunekitWarning, arm, autotune, code_version, edges, multiple, pow2)
from ._campaign import (Call, CampaignResult, campaign, load_per_shape_dir, load_per_shape_json,
                        per_shape_file_name, write_per_shape_json)
from ._comm import Communicator, MPICommunicator, TorchCommunicator, communicator_for
from ._contextual import ContextualAutoTuner, contextual_autotune
from ._describe import describe
from ._measure import CudaEventMeasurer, CudaGraphMeasurer, Measurer
from ._serve import ServeWorker
from ._table import export_table, inductor_input_key

IsolatedMeasurer = _core.IsolatedMeasurer
from ._triton import register_autotuner_class

__version__ = _core.__version__
Error = _core.Error
CommunicatorTimeout = _core.CommunicatorTimeout
NoValidConfigError = _core.NoValidConfigError

__all__ = [
    "autotune", "AutoTuner", "AutotuneOptions", "Budget", "Rerank", "arm", "EFFORTS", "pow2",
    "edges", "multiple", "campaign", "Call", "CampaignResult", "write_per_shape_json",
    "load_per_shape_json", "load_per_shape_dir", "per_shape_file_name", "contextual_autotune",
    "ContextualAutoTuner", "Communicator",
    "TorchCommunicator", "MPICommunicator", "communicator_for", "Measurer", "CudaEventMeasurer",
    "CudaGraphMeasurer", "IsolatedMeasurer", "ServeWorker",
    "TunekitWarning", "Error", "CommunicatorTimeout", "NoValidConfigError", "describe",
    "code_version", "register_autotuner_class", "cache_dir", "read_entry", "list_entries",
    "host_hardware", "launcher", "cli_path", "export_table", "inductor_input_key",
    "TABLE_KEY_FORMATS", "__version__",
]


def cache_dir() -> str:
    """The winner cache root a tuner built now would use (``$TUNEKIT_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/tunekit``, else ``~/.cache/tunekit``)."""
    return _core.cache_dir()


def read_entry(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads and validates one winner cache entry file with the core's reader. Returns
    ``{"status", "detail", "path", "entry", "record", "log_path"}``: status ``found``, ``missing``,
    ``unreadable``, ``invalid`` or ``identity_mismatch`` (a file not named by its own digest), with
    ``detail`` saying why. A found entry comes as its JSON text (``entry``) and as the core's
    record (``record``: a dict of every field, typed; values that are not UTF-8 text are
    ``bytes``; each candidate's ``measured_on`` is the rank that measured it when another rank
    than the writer did, else None); ``log_path`` is its tuning log, or ""."""
    return _core.read_entry(os.fspath(path))


def list_entries(root: str | os.PathLike[str] | None = None, function: str = "") -> list[str]:
    """The entry files under ``root`` (default: ``cache_dir()``), of ``function`` or all."""
    return _core.list_entries(os.fspath(root) if root is not None else cache_dir(), function)


def host_hardware() -> dict[str, Any]:
    """This host's identity as the core records it (kind, name, arch, units, count, digest)."""
    return _core.host_hardware()


def launcher() -> dict[str, Any]:
    """Rank, local rank and world size as the launcher (torchrun, Open MPI, PMI) set them."""
    return _core.launcher()


def cli_path() -> str | None:
    """The ``tunekit`` command installed with this package (built when CLI11 was found), or
    None."""
    path = os.path.join(os.path.dirname(__file__), "bin", "tunekit")
    return path if os.access(path, os.X_OK) else None


def __getattr__(name: str) -> Any:
    # Submodules imported on first use (``tunekit.report``), so that importing tunekit stays cheap.
    if name == "report":
        import importlib

        module = importlib.import_module(".report", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'tunekit' has no attribute {name!r}")
