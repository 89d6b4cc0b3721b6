"""Reading the JSON files of other tools (per-shape JSON, Triton's ``cache_results``) as the core
reads its own: the bytes through ``_core.read_file`` (regular files only, never a blocking read
of a FIFO or device, at most ``TUNEKIT_MAX_FILE_SIZE``), then Python's JSON reader, whose
``RecursionError`` on deep nesting becomes the same ``ValueError`` as any other bad file."""

from __future__ import annotations

import json
import os
from typing import Any

from . import _core


def read_json(path: str | os.PathLike[str], where: str) -> Any:
    """The JSON document of the file ``path``; ``ValueError`` starting with ``where`` and saying
    what is wrong (Python's reader: ``NaN`` and ``Infinity`` are read as floats)."""
    try:
        data = _core.read_file(os.fspath(path))
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError(f"{where}: arrays and objects are nested too deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{where}: {e}") from None
