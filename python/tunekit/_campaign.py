"""Offline campaigns and per-shape config files (docs/shapes.md).

``campaign(target, calls)`` tunes a list of calls (one per key: shapes, batch sizes) as one job.
``target`` is a function from ``tunekit.autotune`` or a ``tunekit.triton`` autotuner. Across the
ranks of a communicator, each rank tunes its share of the calls on its own: rank r takes every
size-th call, starting at r. The job resumes where it stopped, because a key whose winner is
already in the winner cache is a cache hit. At its end, rank 0 can write an artifact per key, a
lookup table of the keys (both by the C++ core, as ``tunekit::campaign`` writes them) and per-shape
JSON files.

``write_per_shape_json`` writes the winners of a function's entries as one JSON object keyed by
one key value (vLLM's and SGLang's fused-MoE config files: ``{"1": {...}, "16": {...}}``), or a
folder of such files named as vLLM names them (``E=8,N=14336,device_name=NVIDIA_H200.json``).
``load_per_shape_json`` takes one such file as in-process winners of a tuner, and
``load_per_shape_dir`` the files of this GPU in such a folder, so that ``on_miss="nearest"`` serves
every other value of that key from the nearest one.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from . import _core
from ._comm import Communicator, communicator_for
from ._describe import describe
from ._files import read_json

__all__ = ["Call", "CampaignResult", "campaign", "write_per_shape_json", "load_per_shape_json",
           "load_per_shape_dir", "per_shape_file_name"]

# The core's end of a campaign (python/src/table.cpp).
_campaign_check: Callable[..., None] = getattr(_core, "campaign_check")
_campaign_finish: Callable[..., dict[str, Any]] = getattr(_core, "campaign_finish")
_campaign_forget: Callable[..., None] = getattr(_core, "campaign_forget")


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
    ``calls``) to the source that answered (``search``, ``cache``, ...). The files written at the
    end are the same on every rank (rank 0 wrote them): ``artifacts`` (paths), ``table`` (a path
    or None), ``per_shape`` (the per-shape JSON files). ``missing`` lists the campaign's keys (as
    stored: bucketed, with the pinned pairs) that are in no artifact and not in the table, each
    with why: no winner cache entry (answered by nearest-key serving, a table, an artifact or a
    default, not searched), or why the entry was not used."""

    calls: int
    rank: int
    size: int
    sources: dict[int, str]
    seconds: float
    artifacts: list[str] = field(default_factory=list)
    table: str | None = None
    missing: list[tuple[tuple[Any, ...], str]] = field(default_factory=list)
    per_shape: list[str] = field(default_factory=list)

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
             artifact_dir: str | os.PathLike[str] | None = None,
             artifact_name: str | None = None,
             table: str | os.PathLike[str] | None = None, op_name: str | None = None,
             top_k: int = 1, table_params: Mapping[str, Any] | None = None,
             template_hashes: Mapping[str, str] | None = None,
             table_key_format: str | None = None,
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
    - At the end, after the barrier, rank 0 writes what is asked for from the winner cache
      entries of exactly the calls' keys (bucketed, as stored), each file atomically, and every
      rank gets the paths (or the error) in its result:

      - ``artifact_dir``: an artifact per key, the files forced tuning writes, named
        ``artifact_name`` (default: the function's ``artifact_name``);
      - ``table``: a lookup table file of the keys, what ``tunekit.export_table`` returns, with
        its options ``op_name``, ``top_k``, ``table_params``, ``template_hashes`` and
        ``table_key_format`` ("tunekit" or "inductor"); each defaults to the function's own, so
        that it reads the table back as written;
      - ``per_shape_json``: ``write_per_shape_json(target, path, by=by)`` (a file, or a folder
        of vLLM-named files).

      A key without a usable entry is in ``result.missing`` and warned about. These outputs
      need the winner cache (``use_disk_cache``); what cannot be written (no artifact name, an
      incomplete device identity) is an error before anything is tuned.
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
    outputs = artifact_dir is not None or table is not None
    ask: dict[str, Any] = {}
    if outputs:
        ask = dict(
            artifact_dir=os.fspath(artifact_dir) if artifact_dir is not None else None,
            artifact_name=artifact_name,
            table=os.fspath(table) if table is not None else None, op=op_name, top_k=top_k,
            params=({k: describe(v, f"table_params[{k!r}]") for k, v in table_params.items()}
                    if table_params is not None else None),
            template_hashes=dict(template_hashes) if template_hashes is not None else None,
            key_format=table_key_format)
        _campaign_check(_core_tuner(target), **ask)
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
    if split and size > 1:
        _forget_resolved_alone(target, [items[i] for i in mine if sources[i] != "memory"])
    result = CampaignResult(calls=len(items), rank=rank, size=size, sources=sources, seconds=0.0)
    if outputs:
        keys = [_stored_key(target, c) for c in items]
        written = _campaign_finish(_core_tuner(target), keys, comm, verbose=progress and rank == 0,
                                   **ask)
        result.artifacts = list(written["artifacts"])
        result.table = written["table"]
        result.missing = [(tuple(k), why) for k, why in written["missing"]]
    if per_shape_json is not None:
        result.per_shape = _rank0_writes(
            comm, rank, size,
            lambda: sorted(_per_shape_paths(write_per_shape_json(target, per_shape_json, by=by),
                                            per_shape_json)))
    result.seconds = time.perf_counter() - start
    return result


def _forget_resolved_alone(target: Any, calls: list[Call]) -> None:
    """After a split campaign: the calls this rank resolved alone leave its memory (the core's,
    the hot path's, Triton's ``cache``), so that on its next call every rank resolves every key of
    the campaign the same way, in step (the agreement collectives, hits in the shared winner
    cache). A key left in memory on the one rank that tuned it would skip the collectives that
    the other ranks run for it."""
    if not calls:
        return
    autotuner = getattr(target, "autotuner", target)
    keys = [_stored_key(target, c) for c in calls]
    if _is_triton_autotuner(autotuner):
        for c in calls:
            autotuner.cache.pop(tuple(autotuner.key_of(c.args, dict(c.kwargs))), None)
    else:
        for k, _ in keys:
            try:
                autotuner._memo.pop(k, None)
                autotuner._known.pop(k, None)
            except TypeError:  # an unhashable key is never in them
                pass
    _campaign_forget(_core_tuner(target), keys)


def _stored_key(target: Any, c: Call) -> tuple[Any, Any]:
    """The key and pinned values (None: none) a call of ``target`` is stored under, before its
    buckets (the core applies them)."""
    autotuner = getattr(target, "autotuner", target)
    if _is_triton_autotuner(autotuner):
        from .triton._autotuner import core_key

        return core_key(tuple(autotuner.key_of(c.args, dict(c.kwargs)))), None
    kwargs = {k: v for k, v in c.kwargs.items() if not k.startswith("autotune")}
    return autotuner.key_fn(*c.args, **kwargs), autotuner._pins(kwargs, True)


def _rank0_writes(comm: Communicator | None, rank: int, size: int,
                  write: Callable[[], list[str]]) -> list[str]:
    """``write()`` on rank 0; every rank returns its paths, or raises its error."""
    if comm is None or size == 1:
        return write()
    payload = b""
    failed: BaseException | None = None
    if rank == 0:
        try:
            payload = json.dumps({"ok": write()}).encode()
        except Exception as e:  # every rank fails with it
            failed = e
            payload = json.dumps({"error": f"{type(e).__name__}: {e}"}).encode()
    n = struct.unpack("<Q", comm.broadcast(struct.pack("<Q", len(payload)), 0))[0]
    payload = comm.broadcast(payload if rank == 0 else bytes(n), 0) if n else b""
    if failed is not None:
        raise failed
    out = json.loads(payload.decode())
    if "error" in out:
        raise RuntimeError(f"campaign: rank 0 could not write the per-shape files: {out['error']}")
    return list(out["ok"])


def _per_shape_paths(written: Mapping[str, Any], path: str | os.PathLike[str]) -> list[str]:
    if _is_folder(path):
        return list(written)
    return [os.fspath(path)]


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


# ---- per-shape file names (vLLM's get_config_file_name) ------------------------------------------

# Fields vLLM and SGLang write after the device name, in this order; any other field comes before.
_AFTER_DEVICE = ("dtype", "block_shape", "per_channel_quant")


def _device_field(hardware_name: str) -> str:
    """The ``device_name`` of vLLM's file names for a device: its name with spaces as ``_``, and
    any device of the H200 family as ``NVIDIA_H200``."""
    name = hardware_name.replace(" ", "_")
    return "NVIDIA_H200" if "H200" in name.split("_") else name


def _field_text(name: str, value: Any) -> str:
    if isinstance(value, bool):
        text = str(value)
    elif isinstance(value, (int, float)):
        text = repr(value)
    elif isinstance(value, (list, tuple)):
        text = "[" + ",".join(_field_text(name, v) for v in value) + "]"
    elif isinstance(value, str):
        text = value
    else:
        raise TypeError(f"per-shape file name: {name}={value!r} is not an int, float, bool, str or "
                        "list of them")
    if not text or any(ch in text for ch in "=/\\\0") or (
            "," in text and not (text.startswith("[") and text.endswith("]"))):
        raise ValueError(f"per-shape file name: {name}={text!r} cannot stand in a file name "
                         "(empty, or with '=', '/' or a ',' outside [...])")
    return text


def per_shape_file_name(fields: Mapping[str, Any], device_name: str) -> str:
    """The name vLLM's ``get_config_file_name`` gives a per-shape file: ``fields`` as
    ``name=value`` joined by ``,`` with ``device_name=...`` among them, ``.json`` last:
    ``per_shape_file_name({"E": 8, "N": 14336, "dtype": "fp8_w8a8"}, "NVIDIA H200")`` is
    ``E=8,N=14336,device_name=NVIDIA_H200,dtype=fp8_w8a8.json``. ``device_name`` is the GPU's
    name (spaces become ``_``, the H200 family is ``NVIDIA_H200``, as in vLLM); ``dtype``,
    ``block_shape`` and ``per_channel_quant`` follow it, every other field precedes it in the
    order given. Lists are written ``[128,128]``."""
    if "device_name" in fields:
        raise ValueError("per_shape_file_name: device_name is not one of the fields")
    before = [f"{k}={_field_text(k, v)}" for k, v in fields.items() if k not in _AFTER_DEVICE]
    after = [f"{k}={_field_text(k, fields[k])}" for k in _AFTER_DEVICE if k in fields]
    return ",".join([*before, f"device_name={_device_field(device_name)}", *after]) + ".json"


def _parse_value(text: str) -> Any:
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return tuple(_parse_value(v.strip()) for v in inner.split(",")) if inner else ()
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _parse_file_name(file_name: str) -> dict[str, Any] | None:
    """The ``name=value`` fields of a per-shape file name (``device_name`` among them), or None
    for a file that names no ``device_name`` (not a per-shape file). SGLang's down-projection
    files (``..._down.json``) get the field ``down_moe=True``. Raises ``ValueError`` for a name
    with ``device_name`` that does not parse."""
    if not file_name.endswith(".json") or "device_name=" not in file_name:
        return None
    stem = file_name[:-len(".json")]
    fields: dict[str, Any] = {}
    if stem.endswith("_down"):
        stem = stem[:-len("_down")]
        fields["down_moe"] = True
    parts, depth, cur = [], 0, ""
    for ch in stem:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in parts:
        name, eq, text = part.partition("=")
        if not eq or not name or not text or name in fields:
            raise ValueError(f"{file_name}: {part!r} is not one name=value field of a per-shape "
                             "file name (E=8,N=14336,device_name=NVIDIA_H200.json)")
        fields[name] = text if name == "device_name" else _parse_value(text)
    return fields


def _is_folder(path: str | os.PathLike[str]) -> bool:
    text = os.fspath(path)
    return os.path.isdir(text) or text.endswith(("/", os.sep))


def _write_json_atomically(path: str, table: Mapping[str, Any]) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tunekit-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(table, f, indent=4)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _ordered(out: Mapping[Any, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(m): out[m] for m in sorted(out, key=lambda v: (not isinstance(v, (int, float)),
                                                              v))}


# ---- writing per-shape files -------------------------------------------------------------------


def write_per_shape_json(target: Any, path: str | os.PathLike[str], *, by: int | str = 0,
                         fields: Sequence[str] | None = None,
                         name_fields: Mapping[str, Any] | None = None,
                         device_name: str | None = None) -> dict[str, Any]:
    """Writes ``target``'s winners in the winner cache as per-shape JSON: one object keyed by
    the key value ``by`` (a position, or a name of ``key_names`` / the Triton kernel's ``key``),
    ``{"1": {"BLOCK_M": 16, ...}, "16": {...}}``, the keys in numeric order. These are the
    per-shape files of vLLM and SGLang.

    - Only entries of this function's version and hardware are used.
    - ``path`` a file: every other key value must be the same in all the entries; otherwise they
      belong in two files, and this raises ``ValueError`` saying which value differs. Returns
      what it wrote.
    - ``path`` a folder (one that exists, or a path ending in ``/``): one file per value of the
      other named key values, named as vLLM names them (``per_shape_file_name``): those values
      by their names, then ``name_fields`` (``{"dtype": "fp8_w8a8"}``: fields that are not key
      values), and ``device_name`` (this GPU's, or ``device_name``):
      ``E=8,N=14336,device_name=NVIDIA_H200.json``. Key values without a name (the dtypes a
      Triton kernel's key ends with) are not in the name, so they must be the same in all the
      entries. Returns ``{file path: what it wrote}``.
    - ``fields`` keeps only those config fields; default: all of them.
    - Each file is written atomically.
    """
    import tunekit

    tuner = _core_tuner(target)
    names = _key_names(target)
    pos = _position(by, names, "write_per_shape_json")
    folder = _is_folder(path)
    extra = dict(name_fields or {})
    if extra and not folder:
        raise ValueError("write_per_shape_json: name_fields names the files of a folder; "
                         f"{os.fspath(path)!r} is a file")
    hw_digest = tuner.hardware["digest"]
    groups: dict[tuple[Any, ...], dict[Any, dict[str, Any]]] = {}
    unnamed: tuple[Any, ...] | None = None
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
        if folder:
            named = tuple(k[i] for i in range(len(k)) if i != pos and i < len(names))
            rest = tuple(k[i] for i in range(len(k)) if i != pos and i >= len(names))
            if unnamed is None:
                unnamed = rest
            elif rest != unnamed:
                raise ValueError(f"write_per_shape_json: the entries of {tuner.name!r} differ in "
                                 f"key values without a name ({unnamed} and {rest}), which a "
                                 "file name cannot tell apart; give them names (key_names)")
            others = named
        elif groups and others not in groups:
            first = next(iter(groups))
            raise ValueError(f"write_per_shape_json: the entries of {tuner.name!r} differ in "
                             f"other key values than {by!r} ({first} and {others}); write one "
                             "file per value (or tune them under another name), or give a "
                             "folder")
        winner = dict(record["winner"]["config"])
        if fields is not None:
            winner = {f: winner[f] for f in fields if f in winner}
        groups.setdefault(others, {})[k[pos]] = winner
    if not folder:
        ordered = _ordered(next(iter(groups.values()), {}))
        _write_json_atomically(os.fspath(path), ordered)
        return ordered
    other_names = [n for i, n in enumerate(names) if i != pos]
    clash = sorted(set(extra) & set(names))
    if clash:
        raise ValueError(f"write_per_shape_json: name_fields names key values {clash}")
    device = device_name if device_name is not None else tuner.hardware["name"]
    written: dict[str, Any] = {}
    for others, table in sorted(groups.items(), key=lambda kv: repr(kv[0])):
        file_fields = {**dict(zip(other_names, others)), **extra}
        file_path = os.path.join(os.fspath(path), per_shape_file_name(file_fields, device))
        ordered = _ordered(table)
        _write_json_atomically(file_path, ordered)
        written[file_path] = ordered
    return written


# ---- reading per-shape files -------------------------------------------------------------------


def _seed_file(target: Any, path: str, key: Callable[[Any], tuple[Any, ...]]) -> list[Any]:
    """Seeds the winners of one per-shape file; returns its values of the key (M), in order."""
    table = read_json(path, f"{path}: not a per-shape JSON file")
    if not isinstance(table, dict):
        raise ValueError(f"{path}: a per-shape file is a JSON object of value -> config")
    autotuner = getattr(target, "autotuner", target)
    tuner = autotuner.tuner
    described = [tuner.config(i) for i in range(tuner.size)]
    triton = _is_triton_autotuner(autotuner)
    ms: list[Any] = []
    for text, cfg in table.items():
        try:
            m: Any = int(text)
        except ValueError:
            try:
                m = float(text)
            except ValueError:
                raise ValueError(f"{path}[{text!r}]: not a number") from None
        if not isinstance(cfg, dict):
            raise ValueError(f"{path}[{text!r}]: not a config object")
        index = next((i for i, d in enumerate(described)
                      if all(d.get(k) == v for k, v in cfg.items())
                      and (not triton or set(cfg) <= set(d))), None)
        if index is None:
            raise ValueError(f"{path}[{text!r}]: {cfg} is not a config of {tuner.name!r}'s space")
        tuner.seed(key(m), index)
        ms.append(m)
    if hasattr(autotuner, "_memo"):
        autotuner._memo.clear()
    return ms


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
    return len(_seed_file(target, os.fspath(path), key))


def load_per_shape_dir(target: Any, folder: str | os.PathLike[str], *, by: int | str = "M",
                       file_fields: Mapping[str, str | int | None] | None = None,
                       key: Callable[[Any, dict[str, Any]], tuple[Any, ...]] | None = None,
                       key_tail: Sequence[Any] = (), device_name: str | None = None,
                       verbose: bool = False) -> dict[str, int]:
    """Takes the per-shape files of this GPU in a vLLM or SGLang config folder
    (``E=8,N=14336,device_name=NVIDIA_H200.json``, each ``{"1": {config}, ...}``) as in-process
    winners of ``target`` without measuring, so that with ``on_miss="nearest"`` a new M is served
    from the nearest M of the file of its other key values.

    - **Which files:** ``*.json`` files whose name holds ``device_name=`` equal to this GPU's
      (the tuner's hardware name, spaces as ``_``, the H200 family as ``NVIDIA_H200``, as vLLM
      names them; or ``device_name``). Files of other devices are skipped, as are JSON files whose
      name holds no ``device_name`` (``verbose`` says which, on stderr).
    - **The key of each config:** the file's value (M) at the position ``by`` (a name of
      ``key_names`` / the Triton kernel's ``key``, or a position), and every other field of the
      file name as the key value of the same name: ``E=8`` is the key value ``E``. Values are
      read as ints, floats, ``True``/``False``, ``[128,128]`` as the tuple ``(128, 128)``, else
      as text. ``key_tail`` is appended (a Triton kernel's key ends with ``str(dtype)`` of each
      tensor argument: ``key_tail=("torch.bfloat16",) * 3``).
    - **A field that is not a key name** (vLLM's ``dtype=fp8_w8a8``, ``block_shape``, SGLang's
      ``_down`` files, read as ``down_moe=True``) is refused, naming the file and the field,
      unless ``file_fields`` maps it: to a key name or position (``{"dtype": "quant"}``), or to
      None to drop it (``{"dtype": None}``; then files that differ only in it give the same keys,
      and the last file read wins). A key value that no field gives is refused too.
    - ``key(m, fields)`` instead builds each key itself from the file's value and its name's
      fields (a dict without ``device_name``); ``by`` then only says where M is, and
      ``file_fields`` and ``key_tail`` are not used.
    - A file that is not a JSON object of numbers to configs, or holds a config that is not one
      of the space's, is a ``ValueError`` naming it.
    - Nearest-key serving adds the differences of every numeric key value, so a key can be served
      from another file when the files' other values differ by less than the gaps between their
      M values (``E=8`` and ``E=16``); a ``TunekitWarning`` says when the files allow that.
    - Returns ``{file path: winners taken}`` for the files read.
    """
    from ._autotune import TunekitWarning

    where = "load_per_shape_dir"
    names = _key_names(target)
    if key is None and not names:
        raise ValueError(f"{where}: the key's values have no names (key_names=, or the Triton "
                         "kernel's key=[...]); name them, or pass key=")
    pos = _position(by, names, where)
    mapping = dict(file_fields or {})
    tuner = _core_tuner(target)
    device = _device_field(device_name if device_name is not None else tuner.hardware["name"])
    root = os.fspath(folder)
    if not os.path.isdir(root):
        raise ValueError(f"{where}: {root} is not a folder")
    loaded: dict[str, int] = {}
    groups: dict[tuple[Any, ...], tuple[str, list[Any]]] = {}

    def say(text: str) -> None:
        if verbose:
            print(f"[tunekit] {where}: {text}", file=sys.stderr, flush=True)

    for file_name in sorted(os.listdir(root)):
        path = os.path.join(root, file_name)
        if not file_name.endswith(".json") or os.path.isdir(path):
            continue  # a FIFO or device named *.json is read, and refused, as a bad file
        fields = _parse_file_name(file_name)
        if fields is None:
            say(f"skipping {path}: its name holds no device_name")
            continue
        if fields.pop("device_name") != device:
            say(f"skipping {path}: a file of another device (this one is {device})")
            continue
        key_of = (_fields_key(key, fields) if key is not None
                  else _named_key(path, fields, names, pos, mapping, tuple(key_tail)))
        ms = _seed_file(target, path, key_of)
        loaded[path] = len(ms)
        say(f"took {len(ms)} winners from {path}")
        if ms:
            k = key_of(ms[0])
            groups[k[:pos] + k[pos + 1:]] = (path, ms)
    _warn_cross_file(groups, where, TunekitWarning)
    return loaded


def _fields_key(key: Callable[[Any, dict[str, Any]], tuple[Any, ...]],
                fields: dict[str, Any]) -> Callable[[Any], tuple[Any, ...]]:
    """The key of M of one file, from the caller's ``key(m, fields)``."""
    return lambda m: tuple(key(m, dict(fields)))


def _named_key(path: str, fields: Mapping[str, Any], names: Sequence[str], pos: int,
               mapping: Mapping[str, str | int | None],
               tail: tuple[Any, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The key of M of one file: M at ``pos``, each field of the file name at the key value of
    its name (or where ``mapping`` puts it), then ``tail``."""
    values: dict[int, Any] = {}
    for name, value in fields.items():
        to = mapping.get(name, name)
        if to is None:
            continue
        if isinstance(to, str) and to not in names:
            raise ValueError(
                f"{path}: the field {name}={value!r} of its name is not one of the key's names "
                f"{list(names)}: map it to one with file_fields={{{name!r}: 'NAME'}}, drop it "
                f"with file_fields={{{name!r}: None}}, or build the keys with key=")
        at = names.index(to) if isinstance(to, str) else int(to)
        if at == pos or at < 0 or at >= len(names):
            raise ValueError(f"{path}: the field {name} gives the key value at position {at}, "
                             f"which is {'M' if at == pos else 'not in the key'}")
        values[at] = value
    absent = [names[i] for i in range(len(names)) if i != pos and i not in values]
    if absent:
        raise ValueError(f"{path}: its name gives no value for the key's {absent} (map a field "
                         "to it with file_fields=, or pass key=)")
    return lambda m: tuple(m if i == pos else values[i] for i in range(len(names))) + tail


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _warn_cross_file(groups: Mapping[tuple[Any, ...], tuple[str, list[Any]]], where: str,
                     category: type[Warning]) -> None:
    """Warns when nearest-key serving could answer an M of one file's other values from another
    file: the other values compare (same length, the same non-numeric values) and some M of the
    second file is at least their distance away from every M of the first."""
    items = list(groups.items())
    for a, (path_a, ms_a) in items:
        for b, (path_b, ms_b) in items:
            if a == b or len(a) != len(b):
                continue
            if any(not (_numeric(x) and _numeric(y)) and x != y for x, y in zip(a, b)):
                continue
            d = sum(abs(x - y) for x, y in zip(a, b) if _numeric(x) and _numeric(y))
            nums_a = [m for m in ms_a if _numeric(m)]
            for m in ms_b:
                if _numeric(m) and nums_a and min(abs(m - x) for x in nums_a) >= d:
                    warnings.warn(
                        f"{where}: the files {os.path.basename(path_a)} and "
                        f"{os.path.basename(path_b)} differ only in numeric key values, by "
                        f"{d} in all: with on_miss='nearest', M={m} for the first's values would "
                        "be served from the second (nearest-key serving adds the differences "
                        "of every numeric key value)", category, stacklevel=3)
                    return
