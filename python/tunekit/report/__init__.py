"""``tunekit report``: one self-contained HTML page (it opens offline) of what tuning did, read from a
winner cache directory.

    python -m tunekit.report [--cache-dir DIR] [--function NAME ...] [-o tunekit-report.html]

For each function and key: the candidate time distribution with the default and the winner marked,
the time against each parameter, the best time so far against evaluations (in the order measured;
a strategy search records it), failed candidates grouped by reason, per-rank timings where the ranks
split the candidates, provenance and dependencies. Bad entries are listed, never fatal.

Entries are read and validated by the core's reader through the compiled extension
(``tunekit.read_entry``), so the page shows what a tuner would trust; the page is drawn with
plotly. The data behind the page is embedded as JSON in
``<script type="application/json" id="tunekit-report-data">``.

The parts: ``_entries`` (reading the cache and the numbers of each entry), ``_figures`` (the
plotly figures), ``_page`` (the HTML) and ``_cli`` (``report()`` and the command line).
"""

from __future__ import annotations

from ._cli import main, report
from ._entries import ReportError, analyse, default_cache_dir, read_cache
from ._page import DATA_ID, build_html, read_report_data

__all__ = ["report", "build_html", "read_report_data", "read_cache", "analyse",
           "default_cache_dir", "main", "ReportError", "DATA_ID"]
