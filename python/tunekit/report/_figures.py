"""The plotly figures of one entry's section: the time distribution, the time against each
parameter, the best time so far against evaluations and, where the ranks split the candidates,
the times each rank measured."""

from __future__ import annotations

from typing import Optional

from ._entries import ReportError, value_text


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


def figures(a: dict, cands: list) -> list:
    """(name, plotly figure) of each plot of the entry whose analysis is `a`."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    figs = []
    win = a["winner"]
    hover = [config_text(cands[i]["config"]) for i in a["ok_indices"]]

    # 1. Distribution of the valid candidates' times, default and winner marked.
    f = go.Figure(go.Histogram(x=a["times"], nbinsx=min(60, max(10, len(a["times"]) // 4)),
                               name="candidates", marker_color="#4c78a8"))
    f.add_vline(x=win["time_ms"], line_color="#2ca02c", line_width=2,
                annotation_text=f"winner {ms(win['time_ms'])}", annotation_position="top right")
    d = a["default"]
    if d and d["time_ms"] is not None:
        f.add_vline(x=d["time_ms"], line_color="#d62728", line_dash="dash", line_width=2,
                    annotation_text=f"default {ms(d['time_ms'])}", annotation_position="top left")
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
        f.update_yaxes(title_text="time (ms)", col=1)
        figs.append(("parameters", f))

    # 3. Best so far against evaluations.
    if a["order"]:
        evals = list(range(1, len(a["order"]) + 1))
        f = go.Figure()
        f.add_trace(go.Scatter(x=evals, y=[cands[i]["time_ms"] for i in a["order"]], mode="markers",
                               name="candidate", marker=dict(size=4, color="#9ecae9"),
                               text=[config_text(cands[i]["config"]) for i in a["order"]],
                               hoverinfo="x+y+text"))
        f.add_trace(go.Scatter(x=evals, y=a["best_so_far"], mode="lines", name="best so far",
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
