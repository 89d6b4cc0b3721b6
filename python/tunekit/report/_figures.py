"""The plotly figures of one entry's section: the time distribution, the valid candidates ranked
by time with their spread, the time against each parameter, the best time so far against
evaluations and, where the ranks split the candidates, the times each rank measured; and the
winner per key of a function with several keys.

A time axis is logarithmic where its times span more than ``LOG_SPAN`` (10x), linear otherwise
(``_entries.axis_type``, chosen per figure); error bars span each candidate's fastest to slowest
timed run (``stats.min`` .. ``stats.max``) and are left out where the entry holds no spread."""

from __future__ import annotations

import math
from typing import Any, Optional

from ._entries import ReportError, error_bars, value_text

SPREAD_TEXT = "error bars: the fastest to the slowest timed run (stats.min .. stats.max)"


def require_plotly():
    try:
        import plotly  # noqa: F401
        import plotly.graph_objects  # noqa: F401
    except ImportError:
        raise ReportError("tunekit report needs plotly: pip install plotly "
                          "(it comes with pip install tunekit-autotune)") from None


def config_text(cfg: dict) -> str:
    return ", ".join(f"{k}={value_text(v)}" for k, v in cfg.items())


def ms(t: Optional[float]) -> str:
    return "-" if t is None else f"{t:.4g} ms"


def time_title(axis: str) -> str:
    return "time (ms, log scale)" if axis == "log" else "time (ms)"


def _error_y(bars: Optional[dict]) -> Optional[dict]:
    if bars is None:
        return None
    return dict(type="data", symmetric=False, array=bars["plus"], arrayminus=bars["minus"],
                thickness=1, width=2, color="#7f7f7f")


def _bins(times: list, n: int, log: bool) -> tuple[list, list]:
    """Edges (n + 1) and counts (n) of a histogram of ``times``, the edges evenly spaced in the
    logarithm of the time where ``log`` (plotly's own histogram bins linearly on a log axis)."""
    lo, hi = min(times), max(times)
    f, g = (math.log, math.exp) if log else ((lambda x: x), (lambda x: x))
    a, b = f(lo), f(hi)
    if b <= a:
        b = a + 1.0
    edges = [g(a + (b - a) * k / n) for k in range(n + 1)]
    edges[0], edges[-1] = lo, hi
    counts = [0] * n
    for t in times:
        counts[min(n - 1, max(0, int((f(t) - a) / (b - a) * n)))] += 1
    return edges, counts


def _mark(f: Any, x: float, text: str, color: str, dash: str, log: bool, right: bool) -> None:
    """A vertical line at time ``x`` with its label (an annotation on a log axis takes the
    logarithm of its position, a shape does not)."""
    f.add_vline(x=x, line_color=color, line_dash=dash, line_width=2)
    f.add_annotation(x=math.log10(x) if log else x, xref="x", y=1, yref="paper", text=text,
                     showarrow=False, xanchor="left" if right else "right", yanchor="bottom",
                     font=dict(color=color))


def figures(a: dict, cands: list) -> list:
    """(name, plotly figure) of each plot of the entry whose analysis is `a`."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    figs = []
    win = a["winner"]
    axes = a["axes"]
    hover = [config_text(cands[i]["config"]) for i in a["ok_indices"]]

    # 1. Distribution of the valid candidates' times, default and winner marked.
    times = [t for t in a["times"] if t is not None]
    nbins = min(60, max(10, len(times) // 4))
    log = axes["distribution"] == "log"
    if log:
        # Bins even in log time, drawn as a filled step line (bars have no log widths).
        edges, counts = _bins(times, nbins, True)
        xs, ys, tx = [edges[0]], [0], [""]
        for k, c in enumerate(counts):
            label = f"{edges[k]:.4g} to {edges[k + 1]:.4g} ms: {c} candidates"
            xs += [edges[k], edges[k + 1]]
            ys += [c, c]
            tx += [label, label]
        xs.append(edges[-1])
        ys.append(0)
        tx.append("")
        f = go.Figure(go.Scatter(x=xs, y=ys, mode="lines", fill="tozeroy", name="candidates",
                                 line=dict(color="#4c78a8", width=1), text=tx,
                                 hoverinfo="text"))
    else:
        f = go.Figure(go.Histogram(x=times, nbinsx=nbins, name="candidates",
                                   marker_color="#4c78a8"))
    if win["time_ms"] is not None:
        _mark(f, win["time_ms"], f"winner {ms(win['time_ms'])}", "#2ca02c", "solid", log, True)
    d = a["default"]
    if d and d["time_ms"] is not None:
        _mark(f, d["time_ms"], f"default {ms(d['time_ms'])}", "#d62728", "dash", log, False)
    f.update_layout(title=f"Time of the {a['ok']} valid candidates",
                    xaxis_title=time_title(axes["distribution"]), yaxis_title="candidates",
                    showlegend=False)
    f.update_xaxes(type=axes["distribution"])
    figs.append(("distribution", f))

    # 2. The valid candidates ranked by time, each with the spread of its timed runs.
    if a["ok_indices"]:
        ranked = sorted(a["ok_indices"], key=lambda i: (cands[i]["time_ms"], i))
        bars = error_bars(cands, ranked)
        colors = ["#2ca02c" if i == win["index"] else
                  "#d62728" if d and i == d["index"] else "#4c78a8" for i in ranked]
        f = go.Figure(go.Scatter(
            x=list(range(1, len(ranked) + 1)), y=[cands[i]["time_ms"] for i in ranked],
            mode="markers", marker=dict(size=5, color=colors), error_y=_error_y(bars),
            text=[("winner: " if i == win["index"] else "default: " if d and i == d["index"]
                   else "") + config_text(cands[i]["config"]) for i in ranked],
            hoverinfo="x+y+text", name="candidates"))
        f.update_layout(title="Valid candidates ranked by time"
                        + (f" ({SPREAD_TEXT})" if bars else " (no spread recorded)"),
                        xaxis_title="rank", yaxis_title=time_title(axes["ranked"]),
                        showlegend=False)
        f.update_yaxes(type=axes["ranked"])
        figs.append(("ranked", f))

    # 3. Time against each parameter: which ones matter.
    params = a["parameters"]
    if params and a["times"]:
        cols = min(len(params), 4)
        rows = (len(params) + cols - 1) // cols
        f = make_subplots(rows=rows, cols=cols, subplot_titles=params, shared_yaxes=True)
        for n, p in enumerate(params):
            raw = [cands[i]["config"].get(p) for i in a["ok_indices"]]
            xs = [value_text(v) for v in raw]
            # The values in their natural order (numbers by value), not in the order measured.
            values = {value_text(v): v for v in raw}
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
        f.update_yaxes(type=axes["parameters"])
        f.update_yaxes(title_text=time_title(axes["parameters"]), col=1)
        figs.append(("parameters", f))

    # 4. Best so far against evaluations.
    if a["order"]:
        evals = list(range(1, len(a["order"]) + 1))
        f = go.Figure()
        f.add_trace(go.Scatter(x=evals, y=[cands[i]["time_ms"] for i in a["order"]], mode="markers",
                               name="candidate", marker=dict(size=4, color="#9ecae9"),
                               error_y=_error_y(error_bars(cands, a["order"])),
                               text=[config_text(cands[i]["config"]) for i in a["order"]],
                               hoverinfo="x+y+text"))
        f.add_trace(go.Scatter(x=evals, y=a["best_so_far"], mode="lines", name="best so far",
                               line=dict(color="#2ca02c", width=2, shape="hv")))
        how = ("strategy " + str(a["search"].get("strategy", "?"))) if a["search"] else "exhaustive"
        f.update_layout(title=f"Best time so far against evaluations ({how})",
                        xaxis_title="evaluation", yaxis_title=time_title(axes["convergence"]))
        f.update_yaxes(type=axes["convergence"])
        figs.append(("convergence", f))

    # 5. Per-rank timings where the ranks split the candidates.
    if len(a["ranks"]) > 1:
        f = go.Figure()
        for r, v in a["ranks"].items():
            f.add_trace(go.Box(y=[t for t in v["times"] if t is not None], name=r,
                               boxpoints="all", jitter=0.4, pointpos=0, marker_size=4))
        f.update_layout(title="Time of the candidates each rank measured",
                        yaxis_title=time_title(axes["ranks"]), showlegend=False)
        f.update_yaxes(type=axes["ranks"])
        figs.append(("ranks", f))
    return figs


def rate(x: float) -> str:
    """A GFLOP/s or GB/s figure: 4 significant digits, whole numbers from 1000 on (12,120)."""
    return f"{x:,.0f}" if x >= 1000 else f"{x:.4g}"


def throughput_text(tp: dict) -> str:
    """"12.3 GFLOP/s, 45.6 GB/s" of a ``throughput`` dict, "" when it is empty."""
    parts = []
    if "gflop_s" in tp:
        parts.append(f"{rate(tp['gflop_s'])} GFLOP/s")
    if "gb_s" in tp:
        parts.append(f"{rate(tp['gb_s'])} GB/s")
    return ", ".join(parts)


def across_keys_figure(g: dict) -> Any:
    """The winner's time per key of one function (``_entries.across_keys``' group ``g``), keys in
    numeric order along x, each with the spread of the winner's timed runs."""
    import plotly.graph_objects as go

    rows = g["rows"]
    labels = [r["key_text"] + (f" [{r['hardware']}]" if g["varies"]["hardware"] else "")
              + (f" v{r['version']}" if g["varies"]["version"] else "") for r in rows]
    plus, minus = [], []
    for r in rows:
        sp = r["spread"]
        plus.append(None if sp is None else max(0.0, sp["max"] - r["time_ms"]))
        minus.append(None if sp is None else max(0.0, r["time_ms"] - sp["min"]))
    bars = {"plus": plus, "minus": minus} if any(p is not None for p in plus) else None
    text = []
    for r in rows:
        tp = throughput_text(r["throughput"])
        text.append(config_text(r["config"]) + (f"<br>{tp}" if tp else ""))
    f = go.Figure(go.Scatter(x=labels, y=[r["time_ms"] for r in rows], mode="lines+markers",
                             marker=dict(size=7, color="#2ca02c"), line=dict(color="#2ca02c"),
                             error_y=_error_y(bars), text=text, hoverinfo="x+y+text",
                             name="winner"))
    f.update_layout(title=f"Winner of {g['function']} per key"
                    + (f" ({SPREAD_TEXT})" if bars else ""),
                    xaxis_title="key", yaxis_title=time_title(g["axis"]), showlegend=False)
    f.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    f.update_yaxes(type=g["axis"])
    return f
