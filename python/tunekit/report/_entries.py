"""The report's data: the entries of a winner cache, read and validated by the core's reader
(``tunekit._core``: ``list_entries``, ``read_entry``), and the numbers each entry's section shows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Optional

from .. import _core


class ReportError(Exception):
    """A report that cannot be written: a missing cache directory, an unwritable output file, or
    plotly missing."""


def default_cache_dir() -> Path:
    """The cache root the core uses: ``$TUNEKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/tunekit``, else
    ``~/.cache/tunekit`` (docs/cache.md)."""
    return Path(_core.cache_dir())


def value_text(v: Any) -> str:
    """A key or config value as the core prints it; a string that is not UTF-8 is held as
    ``{"bytes": hex}``, the cache's own form (docs/cache.md), and shown as Python bytes."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict) and set(v) == {"bytes"} and isinstance(v["bytes"], str):
        try:
            return repr(bytes.fromhex(v["bytes"]))
        except ValueError:
            return "bytes:" + v["bytes"]
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _plain(v: Any) -> Any:
    """A value of the core's record as the report's JSON holds it (bytes as ``{"bytes": hex}``)."""
    return {"bytes": v.hex()} if isinstance(v, bytes) else v


def _config(cfg: dict) -> dict:
    return {k: _plain(v) for k, v in cfg.items()}


def _entry(found: dict) -> dict:
    """The report's view of one entry the core read (``read_entry``'s result, status found)."""
    r = found["record"]
    key = [_plain(v) for v in r["key"]]
    search = r["search"]
    if search is not None and not search["order"]:
        search = {k: v for k, v in search.items() if k != "order"}  # not recorded in this entry
    cands = [{
        "config": _config(c["config"]),
        "template_id": c["template_id"],
        "status": c["status"],
        "time_ms": c["time_ms"],
        "reason": c["reason"],
        "prepare_ms": c["prepare_ms"],
        "stats": c["stats"],
        "measured_on": c["measured_on"],
    } for c in r["candidates"]]
    return {
        "path": found["path"],
        "log_path": found["log_path"],
        "function": r["function"]["name"],
        "version": r["function"]["version"],
        "key": key,
        "key_text": "(" + ", ".join(value_text(v) for v in key) + ")",
        "hardware": r["hardware"],
        "dependencies": r["dependencies"],
        "candidates": cands,
        "winner": r["winner"]["index"],
        "policy": r["policy"],
        "measurer": r["measurer"],
        "world_size": r["world_size"],
        "timestamp": r["timestamp"],
        "search": search,
        "order": search.get("order") if search is not None else None,
        "space": r["space"],
    }


def read_cache(cache_dir: Path, functions: Iterable[str] = ()) -> dict:
    """Every entry under ``cache_dir/autotune`` (of ``functions`` when given): ``{"entries": [...],
    "bad": [{"path", "reason"}], "missing_functions": [...]}``. The files of a named function are
    the ones in its folder, so a bad file there is listed even when it names no function."""
    wanted = list(functions)
    paths: set[str] = set()
    for function in wanted or [""]:
        paths.update(_core.list_entries(str(cache_dir), function))
    entries, bad = [], []
    seen_functions = set()
    for path in sorted(paths):
        got = _core.read_entry(path)
        if got["status"] != "found":
            bad.append({"path": path, "reason": got["detail"] or got["status"]})
            continue
        e = _entry(got)
        if wanted and e["function"] not in wanted:
            continue
        seen_functions.add(e["function"])
        entries.append(e)
    entries.sort(key=lambda e: (e["function"], e["version"], e["key_text"], e["path"]))
    return {"entries": entries, "bad": bad,
            "missing_functions": [w for w in wanted if w not in seen_functions]}


def _default_index(e: dict, exhaustive: bool) -> Optional[int]:
    """The candidate that is the space's first config (the default), where the entry tells.

    Entries list the kept candidates (an exhaustive search) or the measured ones (a strategy), in
    candidate order, and `space.winner` is the winner's position in the whole space. Where that
    position equals the winner's index in the list, no candidate before it was left out, so the
    list's first one is the space's first; a winner at position 0 is the default itself. Older
    entries without `space` listed every candidate, pruned ones included."""
    space = e["space"]
    if space is None:
        return 0 if exhaustive else None
    if space["winner"] == 0:
        return e["winner"]
    if space["winner"] == e["winner"]:
        return 0
    return None


def analyse(e: dict) -> dict:
    """The numbers behind one entry's section (also embedded in the page for tools and tests)."""
    cands = e["candidates"]
    exhaustive = e["search"] is None
    measured = [i for i, c in enumerate(cands) if c["status"] != "pruned"]
    order = e["order"] if e["order"] is not None else measured
    ok = [i for i in measured if cands[i]["status"] == "ok"]
    default = _default_index(e, exhaustive)
    best, trace = math.inf, []
    for i in order:
        t = cands[i]["time_ms"]
        if t is not None and t < best:
            best = t
        trace.append(best if math.isfinite(best) else None)
    failures: dict[str, list[int]] = {}
    for i in measured:
        if cands[i]["status"] in ("failed", "wrong_result"):
            failures.setdefault(cands[i]["status"] + ": " + (cands[i]["reason"] or "(no reason)"),
                                []).append(i)
    ranks: dict[str, list[int]] = {}
    if isinstance(e["world_size"], int) and e["world_size"] > 1:
        for i in measured:
            r = cands[i]["measured_on"]
            ranks.setdefault("writing rank" if r is None else f"rank {r}", []).append(i)
    winner = cands[e["winner"]]
    default_ms = cands[default]["time_ms"] if default is not None else None
    params: list[str] = []
    for i in measured:
        for p in cands[i]["config"]:
            if p not in params:
                params.append(p)
    return {
        "function": e["function"],
        "version": e["version"],
        "key": e["key"],
        "key_text": e["key_text"],
        "path": e["path"],
        "log_path": e["log_path"],
        "candidates": len(cands),
        "measured": len(measured),
        "ok": len(ok),
        "pruned": (e["space"]["pruned"] if e["space"] is not None
                   else len(cands) - len(measured)),
        "space_size": e["space"]["size"] if e["space"] is not None else len(cands),
        "winner": {"index": e["winner"], "config": winner["config"], "time_ms": winner["time_ms"]},
        "default": None if default is None else {
            "index": default, "config": cands[default]["config"], "status": cands[default]["status"],
            "time_ms": default_ms},
        "speedup": (default_ms / winner["time_ms"]
                    if default_ms is not None and winner["time_ms"] else None),
        "times": [cands[i]["time_ms"] for i in ok],
        "ok_indices": ok,
        "parameters": params,
        "order": order,
        "best_so_far": trace,
        "failures": [{"reason": r, "count": len(ix), "indices": ix}
                     for r, ix in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0]))],
        "ranks": {r: {"indices": ix, "times": [cands[i]["time_ms"] for i in ix]}
                  for r, ix in sorted(ranks.items())},
        "world_size": e["world_size"],
        "search": e["search"],
        "policy": e["policy"],
        "measurer": e["measurer"],
        "timestamp": e["timestamp"],
        "hardware": e["hardware"],
        "dependencies": e["dependencies"],
        "prepare_ms": [cands[i]["prepare_ms"] for i in ok] if any(
            cands[i]["prepare_ms"] is not None for i in ok) else None,
    }
