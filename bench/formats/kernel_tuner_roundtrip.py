"""Kernel Tuner cache files through tunekit and back, read by Kernel Tuner itself (no GPU).

Each file is imported into a scratch winner cache (`tunekit cache import kernel-tuner`), exported
again (`tunekit cache export kernel-tuner`) and read with `kernel_tuner.util.read_cache`. Every
record's key and time (or error marker) must be the original's.

    python bench/formats/kernel_tuner_roundtrip.py TUNEKIT_CLI FILE.json[.gz]...
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile

import kernel_tuner
from kernel_tuner.util import read_cache


def records(path: str) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["cache"]


def outcome(r: dict):
    return r["__error__"] if "__error__" in r else r.get("time")


def main() -> int:
    cli, files = sys.argv[1], sys.argv[2:]
    work = tempfile.mkdtemp(prefix="kt-roundtrip-")
    print(f"kernel_tuner {kernel_tuner.__version__}")
    ok = True
    for src in files:
        name = os.path.basename(src).split(".")[0]
        out = os.path.join(work, name + ".json")
        for args in (["import", "kernel-tuner", src], ["export", "kernel-tuner", "--out", out]):
            subprocess.run([cli, "--cache-dir", os.path.join(work, "cache"), "cache", *args,
                            "--function", name, "--key", "[1]"], check=True,
                           capture_output=True)
        orig, back = records(src), read_cache(out, open_cache=False)["cache"]
        differ = sum(1 for k in orig if k in back and outcome(orig[k]) != outcome(back[k]))
        timed = [k for k in back if isinstance(back[k].get("time"), float)]
        best = min(timed, key=lambda k: back[k]["time"])
        same = set(orig) == set(back) and differ == 0
        ok = ok and same
        print(f"{name}: {len(orig)} records, keys equal {set(orig) == set(back)}, outcomes "
              f"differing {differ}, fastest {best} at {back[best]['time']} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
