"""``tunekit report``: one self-contained HTML page (it opens offline) of what tuning did, read from a
winner cache directory.

    python -m tunekit.report [--cache-dir DIR] [--function NAME ...] [-o tunekit-report.html]
                             [--flop [NAME=]EXPR ...] [--bytes [NAME=]EXPR ...]

For each function with several keys: its winner per key (keys in numeric order). For each function
and key: the candidate time distribution with the default and the winner marked, the valid
candidates ranked by time with error bars (the fastest to the slowest timed run) and the table of
the best ten, the time against each parameter, the best time so far against evaluations (in the
order measured; a strategy search records it), failed candidates grouped by reason, per-rank
timings where the ranks split the candidates, provenance and dependencies. Time axes are
logarithmic where their times span more than 10x. The winner's speed-up is over the default where
the entry has its time, else over the median valid candidate, and the page says which. With
``--flop``/``--bytes`` (arithmetic over the key's values ``k0, k1, ...``, never ``eval``-ed) the
page shows GFLOP/s and GB/s beside the times. Bad entries are listed, never fatal.

Entries are read and validated by the core's reader through the compiled extension
(``tunekit.read_entry``), so the page shows what a tuner would trust; the page is drawn with
plotly. The data behind the page is embedded as JSON in
``<script type="application/json" id="tunekit-report-data">``.

The parts: ``_entries`` (reading the cache and the numbers of each entry), ``_work`` (the work
expressions), ``_figures`` (the plotly figures), ``_page`` (the HTML) and ``_cli`` (``report()``
and the command line).
"""

from __future__ import annotations

from ._cli import main, report
from ._entries import ReportError, across_keys, analyse, default_cache_dir, read_cache
from ._page import DATA_ID, build_html, read_report_data
from ._work import Work

__all__ = ["report", "build_html", "read_report_data", "read_cache", "analyse", "across_keys",
           "Work", "default_cache_dir", "main", "ReportError", "DATA_ID"]
