"""``tunekit report``: one self-contained HTML page (it opens offline) of what tuning did, read from a
winner cache directory.

    python -m tunekit.report [--cache-dir DIR] [--function NAME ...] [-o tunekit-report.html]

For each function and key: the candidate time distribution with the default and the winner marked,
the time against each parameter, the best time so far against evaluations (in the order measured;
a strategy search records it), failed candidates grouped by reason, per-rank timings where the ranks
split the candidates, provenance and dependencies. Bad entries are listed, never fatal.

This module reads the JSON files itself (schema ``tunekit.winner_cache/1``, docs/cache.md) and needs
only plotly, not the compiled extension. The data behind the page is embedded as JSON in
``<script type="application/json" id="tunekit-report-data">``.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Optional

SCHEMA = "tunekit.winner_cache/1"
DATA_ID = "tunekit-report-data"
STATUSES = ("ok", "failed", "wrong_result", "pruned")
LOG_LIMIT = 200_000  # characters of a tuning log shown in the page


class ReportError(Exception):
    """A report that cannot be written: a missing cache directory, an unwritable output file, or
    plotly missing."""


def default_cache_dir() -> Path:
    """The cache root the core uses: ``$TUNEKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/tunekit``, else
    ``~/.cache/tunekit`` (docs/cache.md)."""
    if os.environ.get("TUNEKIT_CACHE_DIR"):
        return Path(os.environ["TUNEKIT_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "tunekit"
    if os.environ.get("HOME"):
        return Path(os.environ["HOME"]) / ".cache" / "tunekit"
    import tempfile

    return Path(tempfile.gettempdir()) / "tunekit-cache"


# ---------------------------------------------------------------------------------------------
# Reading entries


class BadEntry(Exception):
    pass


def _value_text(v: Any) -> str:
    """A key or config value as the core prints it; non-UTF-8 strings are stored as
    ``{"bytes": hex}``."""
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


def _is_value(v: Any) -> bool:
    return isinstance(v, (bool, int, float, str)) or (
        isinstance(v, dict) and set(v) == {"bytes"} and isinstance(v["bytes"], str))


def _need(obj: dict, name: str, kind, where: str):
    if not isinstance(obj, dict) or name not in obj:
        raise BadEntry(f"'{where}{name}' is missing")
    v = obj[name]
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise BadEntry(f"'{where}{name}' has the wrong type ({type(v).__name__})")
    return v


def _config(obj: Any, where: str) -> dict:
    if not isinstance(obj, dict):
        raise BadEntry(f"'{where}' is not an object")
    for k, v in obj.items():
        if not _is_value(v):
            raise BadEntry(f"'{where}.{k}' is not a value")
    return obj


def _time(c: dict, where: str) -> Optional[float]:
    t = c.get("time_ms")
    if t is None:
        return None
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
        raise BadEntry(f"'{where}.time_ms' is not a time")
    return float(t)


def _rank_of(reason: str) -> Optional[int]:
    """The rank named by "measured on rank N" / "failed on rank N" (the parallel split)."""
    for prefix in ("measured on rank ", "failed on rank "):
        if reason.startswith(prefix):
            try:
                return int(reason[len(prefix):].split()[0])
            except (ValueError, IndexError):
                return None
    return None


def parse_entry(text: str, path: str) -> dict:
    """The report's view of one entry file; raises BadEntry naming what is wrong."""
    try:
        j = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadEntry(f"not JSON: {e}") from None
    if not isinstance(j, dict):
        raise BadEntry("not a JSON object")
    schema = _need(j, "schema", str, "")
    if schema != SCHEMA:
        raise BadEntry(f"schema '{schema}', expected '{SCHEMA}'")
    fn = _need(j, "function", dict, "")
    name = _need(fn, "name", str, "function.")
    version = _need(fn, "version", str, "function.")
    key = _need(j, "key", list, "")
    if not all(_is_value(v) for v in key):
        raise BadEntry("'key' holds something that is not a value")
    hw = _need(j, "hardware", dict, "")
    deps = _need(j, "dependencies", dict, "")
    cands_json = _need(j, "candidates", list, "")
    if not cands_json:
        raise BadEntry("'candidates' is empty")
    cands = []
    for i, c in enumerate(cands_json):
        where = f"candidates[{i}]"
        if not isinstance(c, dict):
            raise BadEntry(f"'{where}' is not an object")
        status = _need(c, "status", str, where + ".")
        if status not in STATUSES:
            raise BadEntry(f"'{where}.status' is '{status}'")
        t = _time(c, where)
        if status == "ok" and t is None:
            raise BadEntry(f"'{where}' is ok without a time")
        reason = c.get("reason", "")
        cands.append({
            "config": _config(c.get("config"), where + ".config"),
            "template_id": c.get("template_id", ""),
            "status": status,
            "time_ms": t if status == "ok" else None,
            "reason": reason if isinstance(reason, str) else str(reason),
            "prepare_ms": c.get("prepare_ms"),
            "stats": c.get("stats") if isinstance(c.get("stats"), dict) else None,
        })
    winner = _need(j, "winner", dict, "")
    index = _need(winner, "index", int, "winner.")
    if not 0 <= index < len(cands) or cands[index]["status"] != "ok":
        raise BadEntry(f"'winner.index' {index} is not an ok candidate")
    search = j.get("search")
    if search is not None and not isinstance(search, dict):
        raise BadEntry("'search' is not an object")
    order = None
    if search is not None and "order" in search:
        order = search["order"]
        if (not isinstance(order, list) or len(set(map(str, order))) != len(order) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(cands)
                for i in order)):
            raise BadEntry("'search.order' is not a list of distinct candidate indices")
    space = j.get("space")
    if space is not None:
        if not isinstance(space, dict) or not all(
                isinstance(space.get(k), int) and not isinstance(space.get(k), bool)
                and space[k] >= 0 for k in ("size", "pruned", "winner")):
            raise BadEntry("'space' needs non-negative counts size, pruned and winner")
    return {
        "path": path,
        "function": name,
        "version": version,
        "key": key,
        "key_text": "(" + ", ".join(_value_text(v) for v in key) + ")",
        "hardware": hw,
        "dependencies": deps,
        "candidates": cands,
        "winner": index,
        "policy": j.get("policy", {}),
        "measurer": j.get("measurer", ""),
        "world_size": j.get("world_size", 1),
        "timestamp": j.get("timestamp", ""),
        "search": search,
        "order": order,
        "space": space,
    }


def read_cache(cache_dir: Path, functions: Iterable[str] = ()) -> dict:
    """Every entry under ``cache_dir/autotune`` (of ``functions`` when given): ``{"entries": [...],
    "bad": [{"path", "reason"}], "missing_functions": [...]}``."""
    root = Path(cache_dir) / "autotune"
    wanted = list(functions)
    entries, bad = [], []
    files = []
    if root.is_dir():
        for d in sorted(p for p in root.iterdir() if p.is_dir()):
            files.extend(sorted(f for f in d.glob("*.json") if not f.name.startswith(".")))
    seen_functions = set()
    for f in files:
        try:
            e = parse_entry(f.read_text(encoding="utf-8"), str(f))
        except (BadEntry, OSError, UnicodeDecodeError) as err:
            if not wanted or f.parent.name in [_dir_name(w) for w in wanted]:
                bad.append({"path": str(f), "reason": str(err)})
            continue
        if wanted and e["function"] not in wanted:
            continue
        seen_functions.add(e["function"])
        log = f.with_suffix(".log")
        e["log_path"] = str(log) if log.is_file() else ""
        entries.append(e)
    entries.sort(key=lambda e: (e["function"], e["version"], e["key_text"], e["path"]))
    return {"entries": entries, "bad": bad,
            "missing_functions": [w for w in wanted if w not in seen_functions]}


def _dir_name(function: str) -> str:
    """The function's folder name: characters other than letters, digits, '.', '_', '-' become '_'."""
    return "".join(ch if (ch.isascii() and ch.isalnum()) or ch in "._-" else "_" for ch in function)


# ---------------------------------------------------------------------------------------------
# What the page shows of an entry


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
            r = _rank_of(cands[i]["reason"])
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


# ---------------------------------------------------------------------------------------------
# The page


def _require_plotly():
    try:
        import plotly  # noqa: F401
        import plotly.graph_objects  # noqa: F401
    except ImportError:
        raise ReportError("tunekit report needs plotly: pip install plotly "
                          "(it comes with pip install tunekit)") from None


def _config_text(cfg: dict) -> str:
    return ", ".join(f"{k}={_value_text(v)}" for k, v in cfg.items())


def _ms(t: Optional[float]) -> str:
    return "-" if t is None else f"{t:.4g} ms"


def _figures(a: dict, cands: list) -> list:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    figs = []
    win = a["winner"]
    hover = [_config_text(cands[i]["config"]) for i in a["ok_indices"]]

    # 1. Distribution of the valid candidates' times, default and winner marked.
    f = go.Figure(go.Histogram(x=a["times"], nbinsx=min(60, max(10, len(a["times"]) // 4)),
                               name="candidates", marker_color="#4c78a8"))
    f.add_vline(x=win["time_ms"], line_color="#2ca02c", line_width=2,
                annotation_text=f"winner {_ms(win['time_ms'])}", annotation_position="top right")
    d = a["default"]
    if d and d["time_ms"] is not None:
        f.add_vline(x=d["time_ms"], line_color="#d62728", line_dash="dash", line_width=2,
                    annotation_text=f"default {_ms(d['time_ms'])}", annotation_position="top left")
    f.update_layout(title=f"Time of the {a['ok']} valid candidates", xaxis_title="time (ms)",
                    yaxis_title="candidates", showlegend=False)
    figs.append(("distribution", f))

    # 2. Time against each parameter: which ones matter.
    params = a["parameters"]
    if params and a["times"]:
        cols = min(len(params), 4)
        rows = (len(params) + cols - 1) // cols
        f = make_subplots(rows=rows, cols=cols, subplot_titles=params, shared_yaxes=True)
        for n, p in enumerate(params):
            raw = [cands[i]["config"].get(p) for i in a["ok_indices"]]
            xs = [_value_text(v) for v in raw]
            # The values in their natural order (numbers by value), not in the order measured.
            values = {_value_text(v): v for v in raw}
            ordered = sorted(values, key=lambda t: (
                0, float(values[t]), "") if isinstance(values[t], (int, float)) and not isinstance(
                    values[t], bool) else (1, 0.0, t))
            f.add_trace(go.Box(x=xs, y=a["times"], boxpoints="all", jitter=0.4, pointpos=0,
                               marker_size=4, name=p, text=hover, hoverinfo="y+text",
                               marker_color="#4c78a8", showlegend=False),
                        row=n // cols + 1, col=n % cols + 1)
            f.update_xaxes(type="category", categoryorder="array", categoryarray=ordered,
                           row=n // cols + 1, col=n % cols + 1)
        f.update_layout(title="Time against each parameter", height=320 * rows)
        f.update_yaxes(title_text="time (ms)", col=1)
        figs.append(("parameters", f))

    # 3. Best so far against evaluations.
    if a["order"]:
        xs = list(range(1, len(a["order"]) + 1))
        f = go.Figure()
        f.add_trace(go.Scatter(x=xs, y=[cands[i]["time_ms"] for i in a["order"]], mode="markers",
                               name="candidate", marker=dict(size=4, color="#9ecae9"),
                               text=[_config_text(cands[i]["config"]) for i in a["order"]],
                               hoverinfo="x+y+text"))
        f.add_trace(go.Scatter(x=xs, y=a["best_so_far"], mode="lines", name="best so far",
                               line=dict(color="#2ca02c", width=2, shape="hv")))
        how = ("strategy " + str(a["search"].get("strategy", "?"))) if a["search"] else "exhaustive"
        f.update_layout(title=f"Best time so far against evaluations ({how})",
                        xaxis_title="evaluation", yaxis_title="time (ms)")
        figs.append(("convergence", f))

    # 4. Per-rank timings where the ranks split the candidates.
    if len(a["ranks"]) > 1:
        f = go.Figure()
        for r, v in a["ranks"].items():
            f.add_trace(go.Box(y=[t for t in v["times"] if t is not None], name=r,
                               boxpoints="all", jitter=0.4, pointpos=0, marker_size=4))
        f.update_layout(title="Time of the candidates each rank measured", yaxis_title="time (ms)",
                        showlegend=False)
        figs.append(("ranks", f))
    return figs


def _table(rows: list, head: Optional[list] = None) -> str:
    out = ["<table>"]
    if head:
        out.append("<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in head) + "</tr>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _section(e: dict, a: dict, n: int) -> str:
    cands = e["candidates"]
    out = [f'<section class="entry" id="entry-{n}">',
           f"<h2>{html.escape(a['function'])} <span class=key>key {html.escape(a['key_text'])}"
           "</span></h2>"]
    win = a["winner"]
    d = a["default"]
    summary = [
        ("winner", f"[{_config_text(win['config'])}] {_ms(win['time_ms'])}"),
        ("default (the space's first config)",
         "not identifiable: the entry does not list the candidates before the winner"
         if d is None else f"[{_config_text(d['config'])}] " +
         (_ms(d["time_ms"]) if d["time_ms"] is not None else d["status"])),
        ("speed-up of the winner over the default",
         "-" if a["speedup"] is None else f"{a['speedup']:.3g}x"),
        ("candidates", f"{a['space_size']} in the space, {a['pruned']} pruned, "
                       f"{a['measured']} measured, {a['ok']} valid"),
    ]
    out.append(_table(summary))
    figs = _figures(a, cands)
    for name, f in figs:
        f.update_layout(margin=dict(l=60, r=20, t=60, b=50), template="plotly_white")
        out.append(f'<div class="fig fig-{name}">' +
                   f.to_html(full_html=False, include_plotlyjs=False,
                             config={"displaylogo": False}) + "</div>")

    out.append("<h3>Failed candidates</h3>")
    if a["failures"]:
        out.append(_table([(fl["reason"], fl["count"],
                            "; ".join("[" + _config_text(cands[i]["config"]) + "]"
                                      for i in fl["indices"][:5]) +
                            (" ..." if fl["count"] > 5 else "")) for fl in a["failures"]],
                          ["reason", "candidates", "configs"]))
    else:
        out.append("<p>none</p>")

    out.append("<h3>Ranks</h3>")
    ws = a["world_size"]
    if not isinstance(ws, int) or ws <= 1:
        out.append("<p>one process measured every candidate.</p>")
    elif len(a["ranks"]) > 1:
        out.append(f"<p>{ws} ranks split the candidates (parallel split); each time is the one its "
                   "rank measured.</p>")
        out.append(_table([(r, len(v["indices"]),
                            _ms(min((t for t in v["times"] if t is not None), default=None)))
                           for r, v in a["ranks"].items()], ["rank", "candidates", "best"]))
    else:
        out.append(f"<p>{ws} ranks measured every candidate; the entry keeps the worst rank's time "
                   "(the MAX reduction), so per-rank times are in each rank's log "
                   "(<code>$TUNEKIT_LOG_DIR/rank-N.log</code>), not in the cache.</p>")

    out.append("<h3>Provenance</h3>")
    s = a["search"]
    if s:
        how = (f"strategy {s.get('strategy')} (seed {s.get('seed')}): {s.get('evaluations')} of "
               f"{s.get('space_size')} kept candidates measured, budget "
               f"{s.get('max_evaluations')} evaluations"
               + (f", {s.get('max_time_s')} s" if s.get("max_time_s") else "")
               + (f", patience {s.get('patience')}" if s.get("patience") else "")
               + f", batch {s.get('batch_size')}"
               + (f", {s.get('lookahead')} proposed ahead" if s.get("lookahead") else "")
               + f", {s.get('transferred')} transferred start points; "
               f"stopped by {s.get('stop')}")
    else:
        how = f"exhaustive: every kept candidate measured ({a['measured']})"
    pol = a["policy"] if isinstance(a["policy"], dict) else {}
    hw = a["hardware"]
    prov = [
        ("source", "search, stored in the winner cache"),
        ("search", how),
        ("cache entry", a["path"]),
        ("tuning log", a["log_path"] or "-"),
        ("function version", a["version"]),
        ("hardware", ", ".join(f"{k}={hw[k]}" for k in ("kind", "name", "arch", "units", "count")
                               if k in hw)),
        ("measurer", f"{a['measurer']}: {pol.get('warmup', '?')} warmup + {pol.get('runs', '?')} "
                     f"timed runs, {pol.get('statistic', '?')}"),
        ("ranks", a["world_size"]),
        ("timestamp", a["timestamp"]),
    ]
    if a["prepare_ms"]:
        ps = [p for p in a["prepare_ms"] if isinstance(p, (int, float))]
        if ps:
            prov.append(("preparation (compile)",
                         f"{len(ps)} candidates, {sum(ps) / 1e3:.3g} s in all, "
                         f"median {sorted(ps)[len(ps) // 2]:.4g} ms"))
    out.append(_table(prov))
    out.append("<h3>Dependencies</h3>")
    out.append(_table(sorted(a["dependencies"].items()), ["component", "version"]))
    if a["log_path"]:
        try:
            text = Path(a["log_path"]).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        if len(text) > LOG_LIMIT:
            text = text[:LOG_LIMIT] + f"\n... ({len(text) - LOG_LIMIT} more characters)"
        out.append("<details><summary>Tuning log</summary><pre>" + html.escape(text) +
                   "</pre></details>")
    out.append("</section>")
    return "\n".join(out)


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { border-top: 1px solid #ccc; padding-top: 1em; }
.key { font-weight: normal; color: #555; font-size: 0.8em; }
table { border-collapse: collapse; margin: 0.5em 0; } td, th { border: 1px solid #ddd;
padding: 0.25em 0.6em; text-align: left; vertical-align: top; } td { overflow-wrap: anywhere; } th { background: #f4f4f4; }
pre { background: #f8f8f8; padding: 0.5em; overflow-x: auto; font-size: 0.85em; }
.bad td { color: #a00; } nav li { margin: 0.1em 0; }
"""


def _script_json(data: Any) -> str:
    """JSON that is safe inside <script>: no "<" at all (so no "</script" nor "<!--")."""
    return json.dumps(data, allow_nan=False, sort_keys=True).replace("<", "\\u003c")


def build_html(cache_dir: Path, functions: Iterable[str] = ()) -> str:
    """The report page of ``cache_dir`` (all functions, or ``functions``)."""
    _require_plotly()
    from plotly.offline import get_plotlyjs

    cache_dir = Path(cache_dir)
    if not cache_dir.is_dir():
        raise ReportError(f"the cache directory {cache_dir} does not exist")
    got = read_cache(cache_dir, functions)
    analyses = [analyse(e) for e in got["entries"]]
    data = {"schema": "tunekit.report/1", "cache_dir": str(cache_dir),
            "functions": list(functions), "entries": analyses, "bad": got["bad"],
            "missing_functions": got["missing_functions"]}
    body = [f"<h1>tunekit report</h1><p>Winner cache <code>{html.escape(str(cache_dir))}</code>: "
            f"{len(analyses)} entries of {len({a['function'] for a in analyses})} functions"
            + (f", {len(got['bad'])} bad files" if got["bad"] else "") + ".</p>"]
    if got["missing_functions"]:
        body.append("<p>No entries for: " +
                    html.escape(", ".join(got["missing_functions"])) + ".</p>")
    if not analyses:
        body.append('<p class="empty">No valid cache entries here: nothing has been tuned with '
                    "this cache yet.</p>")
    else:
        body.append("<nav><ul>" + "".join(
            f'<li><a href="#entry-{n}">{html.escape(a["function"])} key '
            f'{html.escape(a["key_text"])}</a>: winner {html.escape(_ms(a["winner"]["time_ms"]))}'
            + (f", {a['speedup']:.3g}x over the default" if a["speedup"] else "") + "</li>"
            for n, a in enumerate(analyses)) + "</ul></nav>")
    if got["bad"]:
        body.append("<h2>Bad entries</h2><p>These files are not valid cache entries; a tuner "
                    "skips them with a warning and retunes.</p>")
        body.append(_table([(b["path"], b["reason"]) for b in got["bad"]], ["file", "reason"])
                    .replace("<tr><td>", '<tr class="bad"><td>'))
    for n, (e, a) in enumerate(zip(got["entries"], analyses)):
        body.append(_section(e, a, n))
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            "<title>tunekit report</title>"
            f"<style>{STYLE}</style>"
            f"<script>{get_plotlyjs()}</script>"
            f'<script type="application/json" id="{DATA_ID}">{_script_json(data)}</script>'
            "</head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def report(cache_dir: Optional[os.PathLike | str] = None, functions: Iterable[str] = (),
           output: os.PathLike | str = "tunekit-report.html") -> Path:
    """Writes the report of ``cache_dir`` (default: the cache a tuner would use) to ``output`` and
    returns its path. Raises ReportError for a missing cache directory, plotly missing or an
    unwritable output."""
    text = build_html(Path(cache_dir) if cache_dir is not None else default_cache_dir(),
                      list(functions))
    out = Path(output)
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ReportError(f"cannot write {out}: {e.strerror or e}") from None
    return out


def read_report_data(html_text: str) -> dict:
    """The data embedded in a report page (what its plots and tables show)."""
    start_tag = f'<script type="application/json" id="{DATA_ID}">'
    start = html_text.index(start_tag) + len(start_tag)
    end = html_text.index("</script>", start)
    return json.loads(html_text[start:end])


def main(argv: Optional[list] = None) -> int:
    p = argparse.ArgumentParser(prog="tunekit report",
                                description="Write one self-contained HTML report of a winner "
                                            "cache (it opens offline).")
    p.add_argument("--cache-dir", help="winner cache root (default: $TUNEKIT_CACHE_DIR, else "
                                       "the user cache)")
    p.add_argument("--function", action="append", default=[],
                   help="only this function's entries (repeatable)")
    p.add_argument("-o", "--out", default="tunekit-report.html", help="output file")
    args = p.parse_args(argv)
    try:
        cache = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
        out = report(cache, args.function, args.out)
    except ReportError as e:
        print(f"tunekit report: {e}", file=sys.stderr)
        return 2
    data = read_report_data(out.read_text(encoding="utf-8"))
    for b in data["bad"]:
        print(f"tunekit report: BAD {b['path']}: {b['reason']}", file=sys.stderr)
    for f in data["missing_functions"]:
        print(f"tunekit report: no entries of function '{f}' in {cache}", file=sys.stderr)
    print(f"wrote {out}: {len(data['entries'])} entries, {len(data['bad'])} bad files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
