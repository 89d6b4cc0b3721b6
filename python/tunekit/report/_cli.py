"""``python -m tunekit.report`` and ``tunekit report`` (which runs it): the command line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Iterable, Optional

from ._entries import ReportError, default_cache_dir
from ._page import build_html, read_report_data


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
