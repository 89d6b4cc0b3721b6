"""Offline campaigns and per-shape config files (docs/shapes.md).

``campaign(target, calls)`` tunes a list of calls (one per key: shapes, batch sizes) as one job.
``target`` is a function from ``tunekit.autotune`` or a ``tunekit.triton`` autotuner. Across the
ranks of a communicator, each rank tunes its share of the calls on its own: rank r takes every
size-th call, starting at r. The job resumes where it stopped, because a key whose winner is
already in the winner cache is a cache hit. It can write a per-shape JSON file at the end.

``write_per_shape_json`` writes the winners of a function's entries as one JSON object keyed by
one key value (vLLM's and SGLang's fused-MoE config files: ``{"1": {...}, "16": {...}}``), and
``load_per_shape_json`` takes such a file as in-process winners of a tuner, so that
``on_miss="nearest"`` serves every other value of that key from the nearest one.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ._comm import Communicator, communicator_for

__all__ = ["Call", "CampaignResult", "campaign", "write_per_shape_json", "load_per_shape_json"]


@dataclass(frozen=True)
class Call:
    """One call of a campaign: positional and keyword arguments (``tunekit.Call(a, b, n=4)``)."""

    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "kwargs", kwargs)


@dataclass
class CampaignResult:
    """What a campaign did on this rank: ``sources`` maps each call it made (its position in
    ``calls``) to the source that answered (``search``, ``cache``, ...)."""

    calls: int
    rank: int
    size: int
    sources: dict[int, str]
    seconds: float

    @property
    def tuned(self) -> int:
        """Calls this rank searched for."""
        return sum(1 for s in self.sources.values() if s in ("search", "table_search"))


class _ThisProcess(Communicator):
    """This process alone: a campaign's rank tunes its share without the others."""

    def rank(self) -> int:
        return 0

    def size(self) -> int:
        return 1

    def all_reduce_max(self, values: Sequence[float]) -> list[float]:
        return list(values)

    def all_reduce_min(self, values: Sequence[float]) -> list[float]:
        return list(values)

    def broadcast(self, data: bytes, root: int) -> bytes:
        return data

    def barrier(self) -> None:
        pass


def _as_call(c: Any) -> Call:
    if isinstance(c, Call):
        return c
    if isinstance(c, tuple):
        return Call(*c)
    return Call(c)


def campaign(target: Any, calls: Iterable[Any], *, pg: Any = None, split: bool = True,
             grid: Any = None, progress: bool = True,
             per_shape_json: str | os.PathLike[str] | None = None,
             by: int | str = 0) -> CampaignResult:
    """Tunes ``calls`` (each a tuple of positional arguments or a ``tunekit.Call``) of
    ``target``, a ``tunekit.autotune`` function or a ``tunekit.triton`` autotuner (launched as
    ``target[grid](*args, **kwargs)``, so ``grid`` is required then).

    - ``split=True`` (rank-local work: nothing collective inside the function): each rank of
      ``pg`` (a ``torch.distributed`` group, an ``mpi4py`` communicator or a
      ``tunekit.Communicator``; None: the default group, else this process) tunes every size-th
      call starting at its rank, alone. The ranks then meet at a barrier. Their winners reach
      the others through the winner cache, so it must be a folder every rank reads (one node, or
      a shared filesystem).
    - ``split=False``: every rank makes every call with ``pg``, as a collective tuned function
      needs.
    - Each call's own key is what is tuned. A call whose key already has an entry in the winner
      cache is a cache hit, so a campaign run again after a kill resumes where it stopped.
    - ``per_shape_json``: after the barrier, rank 0 writes the winners of the calls' keys with
      ``write_per_shape_json(target, path, by=by)``.
    - ``progress``: one line per call on stderr (rank 0 of ``pg`` only).
    """
    items = [_as_call(c) for c in calls]
    comm = communicator_for(pg)
    rank, size = (comm.rank(), comm.size()) if comm is not None else (0, 1)
    alone = _ThisProcess()
    triton_tuner = _is_triton_autotuner(target)
    if triton_tuner and grid is None:
        raise TypeError("campaign: a tunekit.triton autotuner is launched as target[grid](...): "
                        "pass grid=")
    mine = [i for i in range(len(items)) if not split or size == 1 or i % size == rank]
    name = _name_of(target)
    sources: dict[int, str] = {}
    start = time.perf_counter()
    for done, i in enumerate(mine, 1):
        c = items[i]
        t0 = time.perf_counter()
        if triton_tuner:
            saved = target._pg
            target._pg = alone if split and size > 1 else pg
            try:
                target[grid](*c.args, **c.kwargs)
            finally:
                target._pg = saved
            source = target.last_source()
        else:
            target(*c.args, autotune_pg=alone if split and size > 1 else pg, **c.kwargs)
            source = target.last_source()
        sources[i] = str(source)
        if progress and rank == 0:
            print(f"[tunekit] campaign {name}: {done}/{len(mine)} calls on rank 0 of {size} "
                  f"(call {i}: {source}, {time.perf_counter() - t0:.1f} s)", file=sys.stderr,
                  flush=True)
    if comm is not None and size > 1:
        comm.barrier()
    if per_shape_json is not None and rank == 0:
        write_per_shape_json(target, per_shape_json, by=by)
    return CampaignResult(calls=len(items), rank=rank, size=size, sources=sources,
                          seconds=time.perf_counter() - start)


def _is_triton_autotuner(target: Any) -> bool:
    return type(target).__module__.startswith("tunekit.triton")


def _name_of(target: Any) -> str:
    return str(getattr(target, "name", None) or getattr(target, "__name__", "function"))


def _core_tuner(target: Any) -> Any:
    autotuner = getattr(target, "autotuner", target)
    return autotuner.tuner


def _key_names(target: Any) -> list[str]:
    autotuner = getattr(target, "autotuner", target)
    if _is_triton_autotuner(autotuner):
        return list(autotuner.keys)
    return list(autotuner._options.get("key_names", []))


def _position(by: int | str, names: Sequence[str], where: str) -> int:
    if isinstance(by, str):
        if by not in names:
            raise ValueError(f"{where}: by={by!r} is not one of the key's names {list(names)}")
        return list(names).index(by)
    return int(by)


def write_per_shape_json(target: Any, path: str | os.PathLike[str], *, by: int | str = 0,
                         fields: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Writes one JSON object of ``target``'s winners in the winner cache, keyed by the key
    value ``by`` (a position, or a name of ``key_names`` / the Triton kernel's ``key``):
    ``{"1": {"BLOCK_M": 16, ...}, "16": {...}}``, the keys in numeric order. These are the
    per-shape files of vLLM and SGLang.

    - Only entries of this function's version and hardware are used.
    - Every other key value must be the same in all of them: otherwise they belong in two files,
      and this raises ``ValueError`` saying which value differs.
    - ``fields`` keeps only those config fields; default: all of them.
    - The file is written atomically. Returns what it wrote.
    """
    import tunekit

    tuner = _core_tuner(target)
    pos = _position(by, _key_names(target), "write_per_shape_json")
    hw_digest = tuner.hardware["digest"]
    out: dict[Any, dict[str, Any]] = {}
    rest: tuple[Any, ...] | None = None
    for entry_path in tunekit.list_entries(tuner.cache_dir, tuner.name):
        found = tunekit.read_entry(entry_path)
        record = found.get("record")
        if found["status"] != "found" or record is None:
            continue
        if record["function"]["version"] != tuner.version:
            continue
        if record["hardware"].get("digest") != hw_digest:
            continue
        k = tuple(record["key"])
        if pos >= len(k):
            raise ValueError(f"write_per_shape_json: by={by!r} is past the key {k}")
        others = k[:pos] + k[pos + 1:]
        if rest is None:
            rest = others
        elif others != rest:
            raise ValueError(f"write_per_shape_json: the entries of {tuner.name!r} differ in "
                             f"other key values than {by!r} ({rest} and {others}); write one "
                             "file per value (or tune them under another name)")
        winner = dict(record["winner"]["config"])
        if fields is not None:
            winner = {f: winner[f] for f in fields if f in winner}
        out[k[pos]] = winner
    ordered = {str(m): out[m] for m in sorted(out, key=lambda v: (not isinstance(v, (int, float)),
                                                                 v))}
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tunekit-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(ordered, f, indent=4)
        f.write("\n")
    os.replace(tmp, path)
    return ordered


def load_per_shape_json(target: Any, path: str | os.PathLike[str],
                        key: Callable[[int], tuple[Any, ...]]) -> int:
    """Takes a per-shape JSON file (``{"1": {config}, "16": {...}}``, as vLLM and SGLang ship
    them) as in-process winners of ``target`` without measuring. ``key(m)`` gives the tuner's
    key for the file's value ``m``: ``key=lambda m: (m, 14336, 4096)``. For a Triton kernel that
    is the key its autotuner builds: the ``key=[...]`` values, then ``str(dtype)`` of each
    tensor argument, ``(m, 14336, 4096, "torch.bfloat16", "torch.bfloat16", "torch.bfloat16")``
    (``autotuner.key_of(args, {})`` shows it for a launch).

    - With ``on_miss="nearest"``, every other value is then served from the nearest one.
    - Each config must be one of the space's. For a Triton kernel, its fields are those of
      ``triton.Config.all_kwargs()``, and fields the file leaves out are read as the config's
      defaults.
    - Raises ``ValueError`` naming the value whose config is not in the space.
    - Returns how many winners it took.
    """
    with open(path) as f:
        table = json.load(f)
    if not isinstance(table, dict):
        raise ValueError(f"{os.fspath(path)}: a per-shape file is a JSON object of value -> "
                         "config")
    autotuner = getattr(target, "autotuner", target)
    tuner = autotuner.tuner
    described = [tuner.config(i) for i in range(tuner.size)]
    n = 0
    for text, cfg in table.items():
        try:
            m: Any = int(text)
        except ValueError:
            m = float(text)
        if not isinstance(cfg, dict):
            raise ValueError(f"{os.fspath(path)}[{text!r}]: not a config object")
        index = next((i for i, d in enumerate(described)
                      if all(d.get(k) == v for k, v in cfg.items())
                      and (not _is_triton_autotuner(autotuner) or set(cfg) <= set(d))), None)
        if index is None:
            raise ValueError(f"{os.fspath(path)}[{text!r}]: {cfg} is not a config of "
                             f"{tuner.name!r}'s space")
        tuner.seed(key(m), index)
        n += 1
    if hasattr(autotuner, "_memo"):
        autotuner._memo.clear()
    return n
