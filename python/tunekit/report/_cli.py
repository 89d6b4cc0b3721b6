"""``python -m tunekit.report`` and ``tunekit report`` (which runs it): the command line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Iterable, Optional

from ._entries import ReportError, default_cache_dir
from ._page import build_html, read_report_data
from ._work import ALLOWED, Spec


def report(cache_dir: Optional[os.PathLike | str] = None, functions: Iterable[str] = (),
           output: os.PathLike | str = "tunekit-report.html", *, flop: Spec = None,
           bytes: Spec = None) -> Path:
    """Writes the report of ``cache_dir`` (default: the cache a tuner would use) to ``output`` and
    returns its path.

    ``flop`` and ``bytes`` give the work of one call from its key, for GFLOP/s and GB/s beside the
    times: an arithmetic expression over the key's values ``k0, k1, ...`` (``"2*k0*k1*k2"``) for
    every function, ``"NAME=EXPR"`` for the function NAME, a list of those, or a mapping
    ``{NAME: EXPR}`` (``"*"``: every function); see docs/report.md.

    Raises ReportError for a missing cache directory, plotly missing, an expression that is
    refused or an unwritable output."""
    text = build_html(Path(cache_dir) if cache_dir is not None else default_cache_dir(),
                      list(functions), flop=flop, bytes=bytes)
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
    for opt, what in (("--flop", "floating-point operations"), ("--bytes", "bytes moved")):
        p.add_argument(opt, action="append", default=None, metavar="[NAME=]EXPR",
                       help=f"the {what} of one call, from its key, to show "
                            + ("GFLOP/s" if opt == "--flop" else "GB/s")
                            + f" beside the times: an expression of {ALLOWED}; NAME= for one "
                              "function only (repeatable)")
    args = p.parse_args(argv)
    try:
        cache = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
        out = report(cache, args.function, args.out, flop=args.flop, bytes=args.bytes)
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
