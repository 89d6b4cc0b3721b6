"""The report page: one self-contained HTML file (plotly's script inlined) with a section per
function that has several keys (its winner per key), a section per entry and the data behind it
embedded as JSON."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Iterable, Optional

from ._entries import BEST, ReportError, across_keys, analyse, read_cache
from ._figures import (across_keys_figure, config_text, figures, ms, rate, require_plotly,
                       throughput_text)
from ._work import ExpressionError, Spec, Work

DATA_ID = "tunekit-report-data"
LOG_LIMIT = 200_000  # characters of a tuning log shown in the page


class Raw(str):
    """A table cell that is HTML already (made here from escaped parts)."""


def _cell(c: Any) -> str:
    return c if isinstance(c, Raw) else html.escape(str(c))


def _table(rows: list, head: Optional[list] = None, cls: str = "") -> str:
    out = [f'<table class="{cls}">' if cls else "<table>"]
    if head:
        out.append("<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in head) + "</tr>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "".join(out)


def spread_text(sp: Optional[dict]) -> str:
    """"1.2 to 1.4 ms, stddev 0.05 ms" of a candidate's spread; "-" where it has none."""
    if sp is None:
        return "-"
    return f"{sp['min']:.4g} to {sp['max']:.4g} ms, stddev {sp['stddev']:.2g} ms"


def runs_text(sp: Optional[dict]) -> str:
    if sp is None or "count" not in sp:
        return "-"
    out = str(sp["count"])
    if "outliers" in sp:
        out += f" ({sp['outliers']} outlier{'' if sp['outliers'] == 1 else 's'})"
    return out


def _runs_summary(sp: Optional[dict]) -> str:
    """"; 10 timed runs (1 outlier): 1.2 to 1.4 ms, stddev ..." of the winner's spread."""
    if sp is None:
        return ""
    if "count" not in sp:
        return f"; timed runs {spread_text(sp)}"
    n = runs_text(sp)
    head, _, tail = n.partition(" ")
    return f"; {head} timed runs{' ' + tail if tail else ''}: {spread_text(sp)}"


def speedup_text(ref: dict) -> str:
    """The winner's speed-up and what it is over."""
    if ref["speedup"] is None:
        return "-" + (f" ({ref['why']})" if ref["why"] else "")
    return (f"{ref['speedup']:.3g}x over {ref['text']}, {ms(ref['time_ms'])}"
            + (f"; {ref['why']}" if ref["why"] else ""))


def _best_table(a: dict) -> str:
    """The BEST fastest valid candidates of an entry, fastest first."""
    rows = a["best"]
    if not rows:
        return "<p>no valid candidates.</p>"
    runs = any(r["spread"] is not None and "count" in r["spread"] for r in rows)
    compile_ = any(r["prepare_ms"] is not None for r in rows)
    kinds = [(k, t) for k, t in (("gflop_s", "GFLOP/s"), ("gb_s", "GB/s"))
             if any(k in r["throughput"] for r in rows)]
    head = (["#", "config", "time", "spread"] + (["timed runs"] if runs else [])
            + [t for _, t in kinds] + (["compile"] if compile_ else []) + ["status"])
    body = []
    for r in rows:
        mark = " (winner)" if r["winner"] else ""
        mark += " (default)" if r["default"] else ""
        status = r["status"] + (f": {r['reason']}" if r["reason"] else "")
        body.append([f"{r['rank']}{mark}", config_text(r["config"]), ms(r["time_ms"]),
                     spread_text(r["spread"])] + ([runs_text(r["spread"])] if runs else [])
                    + [rate(r["throughput"][k]) if k in r["throughput"] else "-"
                       for k, _ in kinds]
                    + ([ms(r["prepare_ms"])] if compile_ else []) + [status])
    title = (f"<h3>The best {len(rows)} of {a['ok']} valid candidates</h3>" if a["ok"] > BEST
             else f"<h3>The {len(rows)} valid candidates, fastest first</h3>")
    return title + _table(body, head, "best")


def _rerank_table(rr: dict, measurer: str) -> str:
    """The leaders the re-rank measured again, and what it decided."""
    before = next((ld for ld in rr["leaders"] if ld["index"] == rr["winner_before"]), None)
    if rr["changed"] and before is not None:
        verdict = ("it replaced the search's winner [" + html.escape(config_text(before["config"]))
                   + "]: "
                   "the new winner was faster by more than twice their combined standard error")
    else:
        verdict = "it kept the search's winner"
    head = (f"<h3>Re-rank of the leaders</h3><p>{len(rr['leaders'])} candidates within "
            f"{rr['band'] * 100:.3g}% of the search's best were measured again, interleaved: "
            f"{rr['rounds']} rounds of {rr['runs']} timed runs each ({html.escape(str(measurer))}"
            f"); {verdict}.</p>")
    body = [[config_text(ld["config"]) + (" (winner)" if ld["winner"] else "")
             + (" (search's winner)" if ld["index"] == rr["winner_before"] and rr["changed"]
                else ""),
             ms(ld["search_ms"]), ms(ld["score_ms"]) if ld["score_ms"] is not None else "failed"]
            for ld in rr["leaders"]]
    return head + _table(body, ["leader", "search time", "re-rank time"], "rerank")


def _work_rows(a: dict) -> list:
    out = []
    for kind, unit in (("flop", "FLOP"), ("bytes", "bytes")):
        w = a["work"].get(kind)
        if w is None:
            continue
        out.append((f"work per call ({unit})",
                    f"{w['expression']} = {w['value']:.6g}" if w["value"] is not None else
                    f"{w['expression']}: none for this key ({w['error']})"))
    return out


def _section(e: dict, a: dict, n: int) -> str:
    cands = e["candidates"]
    out = [f'<section class="entry" id="entry-{n}">',
           f"<h2>{html.escape(a['function'])} <span class=key>key {html.escape(a['key_text'])}"
           "</span></h2>"]
    win = a["winner"]
    d = a["default"]
    tp = throughput_text(win["throughput"])
    summary = [
        ("winner", f"[{config_text(win['config'])}] {ms(win['time_ms'])}"
                   + (f" ({tp})" if tp else "")
                   + _runs_summary(win["spread"])),
        ("default (the space's first config)",
         "not identifiable: the entry does not list the candidates before the winner"
         if d is None else f"[{config_text(d['config'])}] " +
         (ms(d["time_ms"]) if d["time_ms"] is not None else d["status"])),
        ("speed-up of the winner", speedup_text(a["reference"])),
        ("candidates", f"{a['space_size']} in the space, {a['pruned']} pruned, "
                       f"{a['measured']} measured, {a['ok']} valid"),
    ] + _work_rows(a)
    out.append(_table(summary))
    stat = html.escape(str((a["policy"] or {}).get("statistic", "?")))
    out.append('<p class="spread">' + (
        "Error bars span each candidate's fastest to slowest timed run (stats.min .. stats.max);"
        f" a candidate's time is the {stat} of its timed runs (the policy's statistic)."
        if a["spread"] else "This entry holds no spread of the timed runs (written before it "
        "was stored, or measured elsewhere with one time): the figures draw no error bars.")
        + "</p>")
    figs = figures(a, cands)
    for name, f in figs:
        out.append(_figure_html(name, f))
        if name == "ranked":
            out.append(_best_table(a))
    if not any(name == "ranked" for name, _ in figs):
        out.append(_best_table(a))

    if a["rerank"] is not None:
        out.append(_rerank_table(a["rerank"], a["measurer"]))

    out.append("<h3>Failed candidates</h3>")
    if a["failures"]:
        out.append(_table([(fl["reason"], fl["count"],
                            "; ".join("[" + config_text(cands[i]["config"]) + "]"
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
                            ms(min((t for t in v["times"] if t is not None), default=None)))
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


def _figure_html(name: str, f: Any) -> str:
    f.update_layout(margin=dict(l=60, r=20, t=60, b=50), template="plotly_white")
    return (f'<div class="fig fig-{name}">' +
            f.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False}) +
            "</div>")


def _across_section(g: dict, n: int, analyses: list) -> str:
    """The winner per key of one function with several keys."""
    rows = g["rows"]
    kinds = [(k, t) for k, t in (("gflop_s", "GFLOP/s"), ("gb_s", "GB/s"))
             if any(k in r["throughput"] for r in rows)]
    head = (["key"] + (["hardware"] if g["varies"]["hardware"] else [])
            + (["version"] if g["varies"]["version"] else [])
            + ["winner config", "time", "spread"] + [t for _, t in kinds] + ["speed-up"])
    body = []
    for r in rows:
        link = Raw(f'<a href="#entry-{r["entry"]}">{html.escape(r["key_text"])}</a>')
        ref = analyses[r["entry"]]["reference"]
        body.append([link] + ([r["hardware"]] if g["varies"]["hardware"] else [])
                    + ([r["version"]] if g["varies"]["version"] else [])
                    + [config_text(r["config"]), ms(r["time_ms"]), spread_text(r["spread"])]
                    + [rate(r["throughput"][k]) if k in r["throughput"] else "-"
                       for k, _ in kinds]
                    + ["-" if ref["speedup"] is None else
                       f"{ref['speedup']:.3g}x over " + ("the default" if ref["kind"] == "default"
                                                         else "the median candidate")])
    return "\n".join([
        f'<section class="across" id="across-{n}">',
        f"<h2>{html.escape(g['function'])} <span class=key>winner per key ({len(rows)} "
        "keys)</span></h2>",
        _table(body, head, "across"),
        _figure_html("across", across_keys_figure(g)),
        "</section>"])


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


def parse_work(flop: Spec = None, bytes: Spec = None) -> Work:
    """The ``--flop``/``--bytes`` expressions, checked; ReportError for one that is refused."""
    try:
        return Work(flop, bytes)
    except ExpressionError as e:
        raise ReportError(str(e)) from None


def build_html(cache_dir: Path, functions: Iterable[str] = (), *, flop: Spec = None,
               bytes: Spec = None) -> str:
    """The report page of ``cache_dir`` (all functions, or ``functions``). ``flop``, ``bytes``: the
    work of a call, from its key (``_work``: ``"EXPR"``, ``"NAME=EXPR"``, a list of those or a
    mapping ``{NAME or "*": EXPR}``), for GFLOP/s and GB/s beside the times."""
    functions = list(functions)
    work = parse_work(flop, bytes)
    require_plotly()
    from plotly.offline import get_plotlyjs

    cache_dir = Path(cache_dir)
    if not cache_dir.is_dir():
        raise ReportError(f"the cache directory {cache_dir} does not exist")
    got = read_cache(cache_dir, functions)
    analyses = [analyse(e, work) for e in got["entries"]]
    groups = across_keys(analyses)
    data = {"schema": "tunekit.report/1", "cache_dir": str(cache_dir),
            "functions": functions, "entries": analyses, "bad": got["bad"],
            "missing_functions": got["missing_functions"], "across_keys": groups,
            "work": work.describe()}
    body = [f"<h1>tunekit report</h1><p>Winner cache <code>{html.escape(str(cache_dir))}</code>: "
            f"{len(analyses)} entries of {len({a['function'] for a in analyses})} functions"
            + (f", {len(got['bad'])} bad files" if got["bad"] else "") + ".</p>"]
    for kind, unit in (("flop", "GFLOP/s"), ("bytes", "GB/s")):
        for name, text in work.describe().get(kind, {}).items():
            body.append(f'<p class="work">{unit} from the work per call: {kind} = '
                        f"<code>{html.escape(text)}</code> over the key's values k0, k1, ... ("
                        + ("every function" if name == "*" else
                           "function " + html.escape(name)) + ").</p>")
    if got["missing_functions"]:
        body.append("<p>No entries for: " +
                    html.escape(", ".join(got["missing_functions"])) + ".</p>")
    if not analyses:
        body.append('<p class="empty">No valid cache entries here: nothing has been tuned with '
                    "this cache yet.</p>")
    else:
        body.append("<nav><ul>" + "".join(
            f'<li><a href="#entry-{n}">{html.escape(a["function"])} key '
            f'{html.escape(a["key_text"])}</a>: winner {html.escape(ms(a["winner"]["time_ms"]))}'
            + (f", {a['reference']['speedup']:.3g}x over "
               + ("the default" if a["reference"]["kind"] == "default" else "the median candidate")
               if a["reference"]["speedup"] else "") + "</li>"
            for n, a in enumerate(analyses)) + "</ul></nav>")
        if groups:
            body.append("<p>Winner per key: " + ", ".join(
                f'<a href="#across-{n}">{html.escape(g["function"])}</a>'
                for n, g in enumerate(groups)) + ".</p>")
    if got["bad"]:
        body.append("<h2>Bad entries</h2><p>These files are not valid cache entries; a tuner "
                    "skips them with a warning and retunes.</p>")
        body.append(_table([(b["path"], b["reason"]) for b in got["bad"]], ["file", "reason"])
                    .replace("<tr><td>", '<tr class="bad"><td>'))
    for n, g in enumerate(groups):
        body.append(_across_section(g, n, analyses))
    for n, (e, a) in enumerate(zip(got["entries"], analyses)):
        body.append(_section(e, a, n))
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            "<title>tunekit report</title>"
            f"<style>{STYLE}</style>"
            f"<script>{get_plotlyjs()}</script>"
            f'<script type="application/json" id="{DATA_ID}">{_script_json(data)}</script>'
            "</head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def read_report_data(html_text: str) -> dict:
    """The data embedded in a report page (what its plots and tables show)."""
    start_tag = f'<script type="application/json" id="{DATA_ID}">'
    start = html_text.index(start_tag) + len(start_tag)
    end = html_text.index("</script>", start)
    return json.loads(html_text[start:end])
