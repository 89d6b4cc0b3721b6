"""Triton's ``cache_results`` files as measurements made before.

``@triton.autotune(..., cache_results=True)`` (or ``TRITON_CACHE_AUTOTUNING=1``) writes, for each
key it benchmarks, a file ``<kernel name>.autotune.json`` into Triton's cache, in a folder named by
a hash of the Triton version, the GPU target, the kernel's source, the environment, the key and
the configs::

    {"key": [4096, "torch.float16"],
     "configs_timings": [[{"kwargs": {"BLOCK": 128}, "num_warps": 4, "num_ctas": 1,
                           "num_stages": 3, "maxnreg": null, "pre_hook": null,
                           "ir_override": null}, [0.0123, 0.0121, 0.0125]], ...]}

Each timing is ``do_bench``'s ``[median, 20th, 80th percentile]`` in milliseconds; a config that
failed to compile or ran out of resources scores ``[Infinity, Infinity, Infinity]``.

``TritonCacheResults`` is the core's ``prior`` for one ``tunekit.triton.Autotuner``: when a key
tunes, the configs such a file holds for that key are taken as measured (their median as the
time, an infinite one as a failure), and only the others are measured. It reads the files given
to ``Autotuner.import_cache_results`` and, when the decorator was given ``cache_results=True``,
the file Triton itself would read for the launch (the same hash, so only a file Triton would use).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .._files import read_json

if TYPE_CHECKING:  # pragma: no cover
    from ._autotuner import Autotuner

#: Where the measurements come from, in the core's messages.
NAME = "Triton cache_results"


def _config_fields(raw: Any, where: str) -> dict[str, Any]:
    """The fields of one serialized ``triton.Config`` (its ``__dict__``) as
    ``describe_triton_config`` gives them: the meta-parameters, then the launch options that are
    not None."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a config is a {type(raw).__name__}, not an object")
    kwargs = raw.get("kwargs", {})
    if not isinstance(kwargs, dict):
        raise ValueError(f"{where}: a config's 'kwargs' is a {type(kwargs).__name__}, not an object")
    if raw.get("pre_hook") is not None:
        raise ValueError(f"{where}: a config with a pre_hook (Triton writes none)")
    out = dict(kwargs)
    for name in ("num_warps", "num_ctas", "num_stages", "maxnreg", "ir_override"):
        value = raw.get(name)
        if value is not None:
            out[name] = value
    for name, value in out.items():
        if isinstance(value, (list, dict)):
            raise ValueError(f"{where}: config field {name!r} is a {type(value).__name__}")
    return out


def _time_of(raw: Any, where: str) -> float:
    """The time of one record: the first of Triton's quantiles (the median), or the number."""
    value = raw[0] if isinstance(raw, list) and raw else raw
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}: a timing is {raw!r}, not a number or a list of numbers")
    if math.isnan(value) or value < 0:
        raise ValueError(f"{where}: a timing is {value!r}")
    return float(value)


def read_file(path: str | os.PathLike[str]) -> tuple[tuple[Any, ...], list[tuple[dict[str, Any],
                                                                                   float]]]:
    """One ``*.autotune.json`` file: its key (a tuple) and its (config fields, time in ms)
    records, an infinite time for a failed config. Raises ``ValueError`` naming the file and
    what is wrong."""
    where = f"Triton cache_results file {os.fspath(path)}"
    doc = read_json(path, where)  # Python's reader: Triton writes Infinity for a failed config
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: not a JSON object")
    key, records = doc.get("key"), doc.get("configs_timings")
    if not isinstance(key, list):
        raise ValueError(f"{where}: 'key' is missing or not a list")
    if not isinstance(records, list) or not records:
        raise ValueError(f"{where}: 'configs_timings' is missing, empty or not a list")
    out = []
    for i, rec in enumerate(records):
        at = f"{where}: configs_timings[{i}]"
        if not isinstance(rec, list) or len(rec) != 2:
            raise ValueError(f"{at}: not a [config, timings] pair")
        out.append((_config_fields(rec[0], at), _time_of(rec[1], at)))
    return _as_tuple(key), out


def _as_tuple(value: Any) -> Any:
    """A JSON key (lists for Triton's tuples) as the tuple Triton's launch builds."""
    if isinstance(value, list):
        return tuple(_as_tuple(v) for v in value)
    return value


def files_below(path: str | os.PathLike[str], kernel_name: str) -> list[Path]:
    """The file ``path``, or the ``<kernel_name>.autotune.json`` files below the folder
    ``path`` (Triton's cache folder: one folder per hash), in sorted order."""
    p = Path(path)
    if p.is_dir():
        return sorted(p.rglob(f"{kernel_name[:150]}.autotune.json"))
    if not p.exists():
        raise ValueError(f"Triton cache_results file {p}: no such file or folder")
    return [p]


class TritonCacheResults:
    """The core's ``prior`` option (``name``, ``find(key)``) for one autotuner."""

    name = NAME

    def __init__(self, owner: "Autotuner", read_triton_cache: bool) -> None:
        self._owner = owner
        self.read_triton_cache = read_triton_cache
        # key (as the core passes it) -> {config index: time in ms}
        self._held: dict[tuple[Any, ...], dict[int, float]] = {}
        self.pruned: Sequence[Any] | None = None  # the configs of the launch being tuned

    def add(self, key: tuple[Any, ...], records: Iterable[tuple[dict[str, Any], float]]) -> int:
        """Holds `records` for `key`; returns how many are configs of the autotuner's space (a
        config it does not have is not kept)."""
        from ._autotuner import core_key
        index = self._owner._described_index
        held = self._held.setdefault(core_key(tuple(key)), {})
        n = 0
        for fields, ms in records:
            i = index.get(tuple(sorted(fields.items())))
            if i is None:
                continue
            held.setdefault(i, ms)
            n += 1
        return n

    def keys(self) -> list[tuple[Any, ...]]:
        return list(self._held)

    def find(self, key: tuple[Any, ...]) -> list[tuple[int, float | None, str]]:
        held = dict(self._held.get(tuple(key), {}))
        if self.read_triton_cache:
            for i, ms in self._from_triton_cache(tuple(key)).items():
                held.setdefault(i, ms)
        out: list[tuple[int, float | None, str]] = []
        for i, ms in sorted(held.items()):
            if math.isinf(ms):
                out.append((i, None, "Triton scored it inf (it failed to compile or to run)"))
            else:
                out.append((i, ms, ""))
        return out

    def _from_triton_cache(self, key: tuple[Any, ...]) -> dict[int, float]:
        """The file Triton's ``check_disk_cache`` would read for this key and the launch's
        configs, when it exists."""
        path = triton_cache_file(self._owner, key, self.pruned or self._owner.configs)
        if path is None:
            return {}
        file_key, records = read_file(path)
        index = self._owner._described_index
        out: dict[int, float] = {}
        for fields, ms in records:
            i = index.get(tuple(sorted(fields.items())))
            if i is not None:
                out.setdefault(i, ms)
        return out


def triton_cache_file(owner: "Autotuner", key: tuple[Any, ...],
                      configs: Sequence[Any]) -> str | None:
    """The path of the ``*.autotune.json`` file Triton's autotuner reads for `key` and
    `configs` (the hash of ``Autotuner.check_disk_cache``), or None when it does not exist or
    cannot be worked out here (no GPU target, a config with a ``pre_hook``)."""
    import hashlib

    from triton.runtime.cache import get_cache_manager, triton_key
    from triton.runtime.jit import JITFunction

    if not key or any(getattr(c, "pre_hook", None) for c in configs):
        return None
    fn = owner.fn
    while not isinstance(fn, JITFunction):
        fn = getattr(fn, "fn", None)
        if fn is None:
            return None
    try:
        from triton._C.libtriton import get_cache_invalidating_env_vars
        from triton.compiler.compiler import make_backend
        from triton.runtime.driver import driver
        backend_hash = make_backend(driver.active.get_current_target()).hash()
    except Exception:  # no GPU, no driver: Triton could not have written it here either
        return None
    parts = [
        triton_key(),
        backend_hash,
        fn.cache_key,
        str(sorted(get_cache_invalidating_env_vars().items())),
        str(tuple(key)),
    ] + [str(c) for c in configs]
    digest = hashlib.sha256("-".join(parts).encode("utf-8")).hexdigest()
    return get_cache_manager(digest).get_file(f"{fn.__name__[:150]}.autotune.json")
