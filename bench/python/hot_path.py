"""What a resolved call of a tunekit.autotune function adds over calling the function with its
config by hand (the issue's goal: <= 1 us), on the host, without a GPU.

    python bench/python/hot_path.py [--calls N] [--repeat R]

Prints the per-call time of: the plain call with the config passed by hand, the key function
alone, the decorated call, and tunekit's overhead (decorated - plain), and the same without the
key function's own cost. The fastest of R repetitions of N calls is reported (the least disturbed
by other work on the machine). For the comparison
with Triton's autotuner on a GPU, see gpu_examples.py (hot-path section).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import tunekit


class Tensor:
    """Something shaped like a tensor for the seed's key function."""

    shape = (4096, 4096)
    dtype = "float16"


def key_fn(x, alpha, *args, **kwargs):
    return (tuple(x.shape), str(x.dtype))


def scale(x, alpha, BLOCK, num_warps):
    return BLOCK


class Fixed:
    name = "fixed"

    def measure(self, run, request):
        for _ in range(request.warmup + request.runs):
            run()
        return [1.0 + request.index] * request.runs


def per_call_ns(f, calls: int, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        f(calls)
        samples.append((time.perf_counter_ns() - t0) / calls)
    return min(samples)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=15)
    a = p.parse_args()
    os.environ.setdefault("TUNEKIT_CACHE_DIR", tempfile.mkdtemp(prefix="tunekit-hot-"))

    space = [{"BLOCK": b, "num_warps": w} for b in (256, 512, 1024) for w in (4, 8)]
    tuned = tunekit.autotune(space, key_fn=key_fn, measurer=Fixed())(scale)
    x = Tensor()
    tuned(x, 2.5)  # tunes (BLOCK=256, num_warps=4 wins)
    cfg = tuned.best_config(x, 2.5)
    block, warps = cfg["BLOCK"], cfg["num_warps"]

    def plain(n):
        for _ in range(n):
            scale(x, 2.5, BLOCK=block, num_warps=warps)

    def key_only(n):
        for _ in range(n):
            key_fn(x, 2.5)

    def decorated(n):
        for _ in range(n):
            tuned(x, 2.5)

    def empty(n):
        for _ in range(n):
            pass

    loop = per_call_ns(empty, a.calls, a.repeat)
    t_plain = per_call_ns(plain, a.calls, a.repeat) - loop
    t_key = per_call_ns(key_only, a.calls, a.repeat) - loop
    t_tuned = per_call_ns(decorated, a.calls, a.repeat) - loop
    print(f"python {'.'.join(map(str, __import__('sys').version_info[:3]))}, "
          f"fastest of {a.repeat} x {a.calls} calls, per call:")
    print(f"  plain call, config by hand    {t_plain:8.1f} ns")
    print(f"  key_fn alone                  {t_key:8.1f} ns")
    print(f"  tunekit.autotune, resolved    {t_tuned:8.1f} ns")
    print(f"  added by tunekit              {t_tuned - t_plain:8.1f} ns "
          f"({t_tuned - t_plain - t_key:.1f} ns besides key_fn)")


if __name__ == "__main__":
    main()
