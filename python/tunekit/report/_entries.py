"""The report's data: the entries of a winner cache, read and validated by the core's reader
(``tunekit._core``: ``list_entries``, ``read_entry``), and the numbers each entry's section shows.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any, Iterable, Optional

from .. import _core
from ._work import Work, throughput

BEST = 10  # candidates in each entry's table of the best
# A time axis is logarithmic where its largest time is more than LOG_SPAN times its least.
LOG_SPAN = 10.0


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


def key_order(key: list) -> tuple:
    """A sort key of a key's values: numbers by value (so 256 before 1024), before other values by
    their text; value by value, as tuples compare."""
    out = []
    for v in key:
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not (
                isinstance(v, float) and math.isnan(v)):
            out.append((0, float(v), ""))
        else:
            out.append((1, 0.0, value_text(v)))
    return tuple(out)


def axis_type(times: Iterable[Optional[float]]) -> str:
    """"log" where the largest of the plotted valid times is more than LOG_SPAN times the least
    (and every one is above zero, which a log axis needs), else "linear"."""
    ts = [t for t in times if t is not None and math.isfinite(t)]
    if not ts or min(ts) <= 0:
        return "linear"
    return "log" if max(ts) / min(ts) > LOG_SPAN else "linear"


def spread(c: dict) -> Optional[dict]:
    """The spread of a valid candidate's timed runs: ``{"min", "max", "stddev"}`` from its
    ``stats``, with ``count`` (timed runs) and ``outliers`` where the entry records them. None where
    the entry holds no spread: no ``stats``, or all of them zero (written before the spread was
    stored, or a measurement made elsewhere that gives one time)."""
    s = c.get("stats")
    if c.get("status") != "ok" or c.get("time_ms") is None or not isinstance(s, dict):
        return None
    fields = [s.get(k) for k in ("mean", "median", "min", "max", "stddev")]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               for v in fields):
        return None
    if all(v == 0 for v in fields):
        return None
    lo, hi = float(s["min"]), float(s["max"])
    if hi < lo:
        return None
    out: dict[str, Any] = {"min": lo, "max": hi, "stddev": float(s["stddev"])}
    for k in ("count", "outliers"):
        if isinstance(s.get(k), int) and not isinstance(s.get(k), bool):
            out[k] = s[k]
    return out


def error_bars(cands: list, indices: Iterable[int]) -> Optional[dict]:
    """The error bars of the candidates ``indices``: ``{"minus": [...], "plus": [...]}``, each
    candidate's time less its fastest run and its slowest run less its time (None where it has no
    spread); None where none of them has a spread."""
    minus: list[Optional[float]] = []
    plus: list[Optional[float]] = []
    any_spread = False
    for i in indices:
        c, sp = cands[i], spread(cands[i])
        if sp is None:
            minus.append(None)
            plus.append(None)
            continue
        any_spread = True
        t = c["time_ms"]
        minus.append(max(0.0, t - sp["min"]))
        plus.append(max(0.0, sp["max"] - t))
    return {"minus": minus, "plus": plus} if any_spread else None


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
        "rerank": r.get("rerank"),
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
    entries.sort(key=lambda e: (e["function"], e["version"], key_order(e["key"]), e["key_text"],
                                e["path"]))
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
    if space.get("default") is not None:  # recorded: the default was measured
        return int(space["default"])
    if space["winner"] == 0:
        return e["winner"]
    if space["winner"] == e["winner"]:
        return 0
    return None


def _reference(cands: list, ok: list, default: Optional[int], winner_ms: Optional[float]) -> dict:
    """What the winner's speed-up is taken over: the default (the space's first config) where the
    entry identifies it and it was measured valid; otherwise, the median time of the valid
    candidates, with why the default is not used. The entry records no other time of the default
    (docs/report.md)."""
    if default is not None and cands[default]["time_ms"] is not None:
        ref = {"kind": "default", "text": "the default (the space's first config)",
               "why": None, "time_ms": cands[default]["time_ms"]}
    else:
        why = ("the entry does not identify the default: it lists no candidates before the "
               "winner" if default is None else
               f"the default (the space's first config) is {cands[default]['status']}")
        ts = [cands[i]["time_ms"] for i in ok]
        ref = {"kind": "median" if ts else "none",
               "text": f"the median of the {len(ts)} valid candidates" if ts else "none",
               "why": why, "time_ms": statistics.median(ts) if ts else None}
    ref["speedup"] = (ref["time_ms"] / winner_ms
                      if ref["time_ms"] is not None and winner_ms else None)
    return ref


def _best(cands: list, ok: list, winner: int, default: Optional[int], work: dict) -> list:
    """The BEST fastest valid candidates, fastest first (equal times in candidate order)."""
    rows = []
    for rank, i in enumerate(sorted(ok, key=lambda i: (cands[i]["time_ms"], i))[:BEST], 1):
        c = cands[i]
        rows.append({"rank": rank, "index": i, "config": c["config"], "status": c["status"],
                     "reason": c["reason"], "time_ms": c["time_ms"], "spread": spread(c),
                     "prepare_ms": c["prepare_ms"], "winner": i == winner,
                     "default": i == default, "throughput": throughput(work, c["time_ms"])})
    return rows


def _rerank(e: dict) -> Optional[dict]:
    """The re-rank of the search's leaders, when one ran: each leader's search time and re-rank
    score, and whether the re-rank replaced the search's winner."""
    rr = e.get("rerank")
    if not rr:
        return None
    cands = e["candidates"]
    leaders = [{"index": ld["index"], "config": cands[ld["index"]]["config"],
                "search_ms": cands[ld["index"]]["time_ms"], "score_ms": ld["score_ms"],
                "winner": ld["index"] == e["winner"]} for ld in rr["leaders"]]
    return {"band": rr["band"], "rounds": rr["rounds"], "runs": rr["runs"],
            "winner_before": rr["winner_before"],
            "changed": rr["winner_before"] != e["winner"], "leaders": leaders}


def analyse(e: dict, work: Optional[Work] = None) -> dict:
    """The numbers behind one entry's section (also embedded in the page for tools and tests).
    ``work``: the ``--flop``/``--bytes`` expressions, for the throughput."""
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
    work_of = work.of(e["function"], e["key"]) if work else {}
    rank_times = [t for v in ranks.values() for t in (cands[i]["time_ms"] for i in v)]
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
        "winner": {"index": e["winner"], "config": winner["config"], "time_ms": winner["time_ms"],
                   "spread": spread(winner),
                   "throughput": throughput(work_of, winner["time_ms"])},
        "default": None if default is None else {
            "index": default, "config": cands[default]["config"], "status": cands[default]["status"],
            "time_ms": default_ms},
        "speedup": (default_ms / winner["time_ms"]
                    if default_ms is not None and winner["time_ms"] else None),
        "reference": _reference(cands, ok, default, winner["time_ms"]),
        "times": [cands[i]["time_ms"] for i in ok],
        "ok_indices": ok,
        "spread": ([spread(cands[i]) for i in ok]
                   if any(spread(cands[i]) is not None for i in ok) else None),
        "best": _best(cands, ok, e["winner"], default, work_of),
        "work": work_of,
        "axes": {"distribution": axis_type(cands[i]["time_ms"] for i in ok),
                 "ranked": axis_type(cands[i]["time_ms"] for i in ok),
                 "parameters": axis_type(cands[i]["time_ms"] for i in ok),
                 "convergence": axis_type(cands[i]["time_ms"] for i in order),
                 "ranks": axis_type(rank_times)},
        "parameters": params,
        "order": order,
        "best_so_far": trace,
        "failures": [{"reason": r, "count": len(ix), "indices": ix}
                     for r, ix in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0]))],
        "ranks": {r: {"indices": ix, "times": [cands[i]["time_ms"] for i in ix]}
                  for r, ix in sorted(ranks.items())},
        "world_size": e["world_size"],
        "search": e["search"],
        "rerank": _rerank(e),
        "policy": e["policy"],
        "measurer": e["measurer"],
        "timestamp": e["timestamp"],
        "hardware": e["hardware"],
        "dependencies": e["dependencies"],
        "prepare_ms": [cands[i]["prepare_ms"] for i in ok] if any(
            cands[i]["prepare_ms"] is not None for i in ok) else None,
    }


def across_keys(analyses: list) -> list:
    """For each function with entries for several keys: its winner per key, keys in numeric order
    (``key_order``). ``[{"function", "rows": [{"entry" (its position in ``analyses``), "key",
    "key_text", "version", "hardware", "config", "time_ms", "spread", "throughput", "speedup",
    "reference"}], "varies": {"version", "hardware"}, "axis"}]``."""
    groups: dict[str, list[int]] = {}
    for n, a in enumerate(analyses):
        groups.setdefault(a["function"], []).append(n)
    out = []
    for function, ns in groups.items():
        if len({analyses[n]["key_text"] for n in ns}) < 2:
            continue
        rows = []
        for n in ns:
            a = analyses[n]
            w = a["winner"]
            rows.append({"entry": n, "key": a["key"], "key_text": a["key_text"],
                         "version": a["version"], "hardware": a["hardware"].get("name"),
                         "config": w["config"], "time_ms": w["time_ms"], "spread": w["spread"],
                         "throughput": w["throughput"], "speedup": a["reference"]["speedup"],
                         "reference": a["reference"]["kind"]})
        rows.sort(key=lambda r: (key_order(r["key"]), r["key_text"], r["version"],
                                 str(r["hardware"])))
        out.append({"function": function, "rows": rows,
                    "varies": {"version": len({r["version"] for r in rows}) > 1,
                               "hardware": len({str(r["hardware"]) for r in rows}) > 1},
                    "axis": axis_type(r["time_ms"] for r in rows)})
    return out
