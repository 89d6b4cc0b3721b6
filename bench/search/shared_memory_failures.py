#!/usr/bin/env python3
"""Writes a copy of a convolution cache file in which every config whose shared-memory tile would
exceed LIMIT bytes is a compile failure, as a GPU with less shared memory would record it: a
failure region at large blocks and tiles, for developing the handling of failures on a space that
records none.

The tile of one thread block is (block_size_x * tile_size_x + 2 * radius) by
(block_size_y * tile_size_y + 2 * radius) floats; `radius` is half the filter's width (7 for the
15x15 filter of the convolution files).

    shared_memory_failures.py --limit 32768 convolution_MI50.json.gz convolution_MI50_fail32k.json.gz
"""
import argparse
import gzip
import json
import os


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, required=True, help="bytes of shared memory per block")
    ap.add_argument("--radius", type=int, default=7)
    ap.add_argument("source")
    ap.add_argument("target")
    a = ap.parse_args()
    with gzip.open(a.source, "rt") as f:
        data = json.load(f)
    needed = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y")
    missing = [k for k in needed if k not in data.get("tune_params", {})]
    if missing:
        raise SystemExit(f"{a.source}: not a convolution cache file (no {', '.join(missing)})")
    failed = 0
    for entry in data["cache"].values():
        width = entry["block_size_x"] * entry["tile_size_x"] + 2 * a.radius
        height = entry["block_size_y"] * entry["tile_size_y"] + 2 * a.radius
        if width * height * 4 > a.limit:
            entry["time"] = "CompilationFailedConfig"
            entry.pop("times", None)
            failed += 1
    part = a.target + ".part"  # moved into place once whole
    with gzip.open(part, "wt") as f:
        json.dump(data, f)
    os.replace(part, a.target)
    print(f"{a.target}: {failed} of {len(data['cache'])} configs fail")


if __name__ == "__main__":
    main()
